"""The what-if snapshot holds what a what-if reads, not every byte the mirror stored."""

from __future__ import annotations

import pytest

from allocation.snapshot import snapshot_load
from tests.allocation import whatif_objects as o

pytestmark = pytest.mark.django_db


def test_it_drops_the_fields_no_what_if_reads_and_keeps_the_ones_it_does() -> None:
    pod = o.pod("p", node_name="node-a", resources={"example.com/nic": "1"}, claims=[{"name": "g"}])
    pod["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]
    pod["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": "{...}",
        "team": "ml",
    }
    pod["spec"]["containers"][0].update(env=[{"name": "A", "value": "1"}], restartPolicy="Always")
    pod["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}]
    pod["status"].update(podIP="10.0.0.1", containerStatuses=[{"name": "main", "ready": True}])
    node = o.node("node-a")
    node["status"].update(images=[{"names": ["busybox"], "sizeBytes": 1}], capacity={"cpu": "8"})
    o.store(pod, node)

    snapshot = snapshot_load()

    (got,) = snapshot.pods
    assert "managedFields" not in got["metadata"]
    assert got["metadata"]["annotations"] == {"team": "ml"}
    assert got["spec"]["containers"] == [
        {
            "name": "main",
            "resources": {"requests": {"example.com/nic": "1"}, "limits": {"example.com/nic": "1"}},
            "restartPolicy": "Always",
        }
    ]
    assert "volumes" not in got["spec"]
    assert got["spec"]["resourceClaims"] == [{"name": "g"}] and got["spec"]["nodeName"] == "node-a"
    assert got["status"] == {"phase": "Running"}
    (got_node,) = snapshot.nodes
    assert got_node["status"] == {"allocatable": {"cpu": "8"}, "capacity": {"cpu": "8"}}


def test_equal_attribute_values_of_devices_are_one_object_and_unequal_ones_stay_apart() -> None:
    a, b = o.gpu_slice("node-a", "H100", count=3), o.gpu_slice("node-b", "A100")
    a["spec"]["devices"][2]["attributes"]["flag"] = {"bool": True}
    a["spec"]["devices"][1]["attributes"]["flag"] = {"int": 1}
    o.store(a, b)

    slices = {s["spec"]["nodeName"]: s["spec"]["devices"] for s in snapshot_load().slices}

    models = [d["attributes"]["model"] for devices in slices.values() for d in devices]
    assert [m["string"] for m in models] == ["H100", "H100", "H100", "A100", "A100"]
    assert models[0] is models[1] is models[2] and models[3] is models[4] and models[0] is not models[3]
    assert [d["attributes"]["index"] for d in slices["node-a"]] == [{"int": 0}, {"int": 1}, {"int": 2}]
    memory = [d["capacity"]["memory"] for devices in slices.values() for d in devices]
    assert all(m is memory[0] for m in memory)
    flags = [d["attributes"].get("flag") for d in slices["node-a"]]
    assert flags == [None, {"int": 1}, {"bool": True}] and type(flags[2]["bool"]) is bool
