"""Pod and node addresses as a cluster's IPAM hands them out: no two running pods share a pod IP (a hash of
the uid collided within a few hundred pods), and no two nodes an InternalIP."""

from __future__ import annotations

import ipaddress

from simcluster.controllers.scheduler import Scheduler
from simcluster.store import Store
from tests.simcluster.sim_helpers import running, settle


def test_running_pods_each_get_an_address_of_their_own_in_the_pod_network() -> None:
    with running("tiny") as (cluster, _controllers, _clock):
        for i in range(150):
            cluster.store.create(
                "pods",
                {"metadata": {"name": f"web-{i}", "namespace": "default"},
                 "spec": {"containers": [{"name": "web", "image": "registry.example.com/web:1"}]}},
            )  # fmt: skip
        settle(cluster)
        pods = [p for p in cluster.store.list("pods") if (p.get("status") or {}).get("phase") == "Running"]
        assert len(pods) >= 150
        addresses = [p["status"]["podIP"] for p in pods]
        assert len(set(addresses)) == len(addresses), "two running pods share a pod IP"
        network = ipaddress.ip_network("10.244.0.0/14")
        assert all(ipaddress.ip_address(a) in network for a in addresses)
        assert all(p["status"]["podIPs"] == [{"ip": p["status"]["podIP"]}] for p in pods)
        nodes = {p["spec"]["nodeName"] for p in pods}
        assert all(p["status"]["hostIP"] != p["status"]["podIP"] for p in pods) and len(nodes) > 1


def test_the_pod_network_hands_out_a_quarter_million_distinct_addresses_before_any_repeats() -> None:
    scheduler = Scheduler(Store(), clock=None)  # type: ignore[arg-type]
    addresses = [scheduler._pod_ip() for _ in range(1024 * 254)]
    assert len(set(addresses)) == len(addresses)
    assert not any(a.endswith((".0", ".255")) for a in addresses)
    assert scheduler._pod_ip() == addresses[0]
