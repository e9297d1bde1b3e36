"""The simulated driver, running beside the API server: slices as clients see them, and claim device status."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from simcluster.testing import SimCluster
from tests.simcluster.sim_helpers import claim_template, claims_of, pods, running, settle, template_pod


def _get(cluster: SimCluster, url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10, context=cluster.ssl_context()) as response:
        return json.loads(response.read())


def test_it_serves_each_pool_with_its_generation_and_slice_count_over_http() -> None:
    with running() as (cluster, _, _):
        listing = _get(
            cluster,
            f"{cluster.url}/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3Dnode-2,spec.driver%3Dgpu.example.com",
        )
        items = listing["items"]
        assert len(items) == 2
        assert {(i["spec"]["pool"]["name"], i["spec"]["pool"]["resourceSliceCount"]) for i in items} == {
            ("node-2", 2)
        }
        counters = [i for i in items if "sharedCounters" in i["spec"]]
        assert [c["name"] for c in counters[0]["spec"]["sharedCounters"]] == ["gpu-3-counters"]


def test_it_marks_a_device_unhealthy_with_a_driver_taint_that_stops_new_allocations() -> None:
    with running() as (cluster, controllers, _):
        for index in range(4):
            controllers.driver.mark_unhealthy(
                "gpu.example.com", "node-0", f"gpu-{index}", effect="NoSchedule"
            )
        generation = controllers.driver.generation("gpu.example.com", "node-0")
        settle(cluster)
        cluster.store.create("pods", template_pod("fresh", "single-gpu"))
        settle(cluster)

        assert cluster.store.get("pods", "fresh", namespace="ml")["spec"].get("nodeName") != "node-0"
        (slice_,) = controllers.driver.pool_slices("gpu.example.com", "node-0")
        assert slice_["spec"]["pool"]["generation"] == generation
        assert all(d["taints"][0]["key"] == "gpu.example.com/unhealthy" for d in slice_["spec"]["devices"])

        controllers.driver.mark_healthy("gpu.example.com", "node-0", "gpu-0")
        (slice_,) = controllers.driver.pool_slices("gpu.example.com", "node-0")
        assert slice_["spec"]["pool"]["generation"] == generation + 1
        assert "taints" not in slice_["spec"]["devices"][0]


def test_it_reports_ready_devices_and_network_data_for_allocated_claims() -> None:
    with running() as (cluster, _, _):
        cluster.store.create(
            "resourceclaimtemplates",
            claim_template(
                "gpu-nic",
                [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}},
                    {"name": "nic", "exactly": {"deviceClassName": "nic.example.com"}},
                ],
            ),
        )
        cluster.store.create("pods", template_pod("net", "gpu-nic", claim="devices"))
        settle(cluster)

        (pod,) = pods(cluster, app="net")
        (claim,) = claims_of(cluster, pod)
        statuses = {d["driver"]: d for d in claim["status"]["devices"]}
        assert set(statuses) == {"gpu.example.com", "nic.example.com"}
        assert all(
            s["conditions"][0]["type"] == "Ready" and s["conditions"][0]["status"] == "True"
            for s in statuses.values()
        )
        network = statuses["nic.example.com"]["networkData"]
        assert network["interfaceName"] == "net1"
        assert network["ips"][0].endswith("/24")
        assert len(network["hardwareAddress"].split(":")) == 6
        assert "networkData" not in statuses["gpu.example.com"]
