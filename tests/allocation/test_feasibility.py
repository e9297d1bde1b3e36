"""Feasibility answers on a small hand-made cluster, read back through the inventory rows."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from allocation.services import whatif_answer, whatif_input_normalize
from allocation.snapshot import snapshot_load
from allocation.whatif.base import Context, WhatIfInputError
from allocation.whatif.kinds.feasibility import _devices_asked, _why_not
from inventory.models import KubeObject
from tests.allocation import whatif_objects as o

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def ask(data: dict[str, Any]) -> dict[str, Any]:
    data = whatif_input_normalize(kind="feasibility", input=data)
    return whatif_answer(kind="feasibility", input=data, context=Context(snapshot=snapshot_load(), now=NOW))


def pasted(obj: dict[str, Any]) -> dict[str, Any]:
    return {"source": "yaml", "yaml": yaml.safe_dump(obj)}


def devices_by_node(result: dict[str, Any]) -> dict[str, list[str]]:
    return {
        n["node"]: [f"{d['pool']}/{d['device']}" for c in n["claims"] for d in c["devices"]]
        for n in result["feasible_nodes"]
    }


def test_it_places_a_one_gpu_claim_on_the_first_free_gpu_of_every_node() -> None:
    o.store(*o.small_cluster().values())
    result = ask(pasted(o.claim("want-one")))
    assert result["feasible"] is True
    assert devices_by_node(result) == {"node-a": ["node-a/gpu-1"], "node-b": ["node-b/gpu-0"]}


def test_it_explains_per_device_why_a_two_gpu_claim_does_not_fit_where_one_gpu_is_taken() -> None:
    o.store(*o.small_cluster().values())
    result = ask(pasted(o.claim("want-two", count=2)))
    assert devices_by_node(result) == {"node-b": ["node-b/gpu-0", "node-b/gpu-1"]}
    (node_a,) = result["infeasible_nodes"]
    assert node_a["node"] == "node-a"
    verdicts = {v["device"]: v["reason"] for v in node_a["claims"][0]["verdicts"]}
    assert verdicts == {"gpu-0": "already in use", "gpu-1": "usable"}
    assert "already in use (1)" in node_a["reason"]


def test_a_node_whose_usable_devices_are_too_few_says_so_in_its_heading() -> None:
    o.store(*o.small_cluster().values())
    result = ask(pasted(o.claim("want-three", count=3)))
    assert result["feasible"] is False
    assert result["subject"]["claims"][0]["asks"] == [f"gpu: 3 × {o.DRIVER}"]  # what it needs, up front
    reasons = {n["node"]: n["reason"] for n in result["infeasible_nodes"]}
    assert reasons == {  # the usable devices are fewer than asked for: the heading says both numbers
        "node-a": "1 usable device; the claim asks for 3; not usable: already in use (1)",
        "node-b": "2 usable devices; the claim asks for 3",
    }


def test_a_heading_names_the_count_asked_for_only_when_the_usable_devices_are_fewer() -> None:
    usable = {(o.DRIVER, "node-b", f"gpu-{i}", 1): ["usable"] for i in range(2)}
    enough = "2 usable devices, but the claim's requests and constraints cannot be met from them"
    assert _why_not(usable, asked=(2, False)) == enough  # enough devices: the combination is what fails
    assert _why_not(usable, asked=None) == enough  # "all of a class": no count to say
    assert _why_not(usable, asked=(3, False)) == "2 usable devices; the claim asks for 3"
    assert (
        _why_not(usable, asked=(3, True), claims=2)
        == "2 usable devices; the claims ask together for at least 3"
    )
    one_of = {
        "name": "gpu",
        "firstAvailable": [{"deviceClassName": "big", "count": 4}, {"deviceClassName": "small", "count": 3}],
    }
    every = {"name": "all", "exactly": {"deviceClassName": "c", "allocationMode": "All"}}
    two = o.claim("two", count=2)
    assert _devices_asked([two, {"spec": {"devices": {"requests": [one_of]}}}]) == (5, True)
    assert _devices_asked([two, {"spec": {"devices": {"requests": [every]}}}]) is None


def test_a_pods_heading_counts_each_device_once_however_many_of_its_claims_looked_at_it() -> None:
    objs = o.small_cluster()
    waiting = o.pod(
        "two-claims",
        claims=[
            {"name": "one", "resourceClaimTemplateName": "one-gpu"},
            {"name": "three", "resourceClaimTemplateName": "three-gpus"},
        ],
    )
    o.store(*objs.values(), o.template("three-gpus", count=3), waiting)
    result = ask({"source": "pick", "kind": "Pod", "namespace": "default", "name": "two-claims"})
    assert result["feasible"] is False
    reasons = {n["node"]: n["reason"] for n in result["infeasible_nodes"]}
    assert reasons == {  # node-a has two GPUs, one in use; node-b two free ones; the claims ask for 1 + 3
        "node-a": "1 usable device; the claims ask together for 4; not usable: already in use (1)",
        "node-b": "2 usable devices; the claims ask together for 4",
    }


def test_it_reports_a_request_selector_that_no_device_of_a_node_satisfies() -> None:
    o.store(*o.small_cluster().values())
    result = ask(
        pasted(o.claim("want-h100", selector='device.attributes["gpu.example.com"].model == "H100"'))
    )
    assert list(devices_by_node(result)) == ["node-b"]
    (node_a,) = result["infeasible_nodes"]
    assert node_a["claims"][0]["counts"] == {"request selector false": 2}


def test_it_reports_a_device_taint_rule_that_the_claim_does_not_tolerate() -> None:
    objs = o.small_cluster()
    rule = o.taint_rule(
        "drain-b", {"driver": o.DRIVER, "pool": "node-b"}, "example.com/maintenance", "NoSchedule"
    )
    o.store(*objs.values(), rule)
    result = ask(pasted(o.claim("want-one")))
    assert list(devices_by_node(result)) == ["node-a"]
    (node_b,) = result["infeasible_nodes"]
    assert node_b["claims"][0]["counts"] == {"taint not tolerated": 2}
    assert "drain-b" in node_b["claims"][0]["verdicts"][0]["detail"]


def test_it_explains_a_node_whose_pool_is_invalid_like_any_node_that_does_not_fit() -> None:
    objs = o.small_cluster()
    twice = []
    for part in ("x", "y"):  # node-b's pool published in two slices with the same device names
        s = o.gpu_slice("node-b", "H100")
        s["metadata"] = {**s["metadata"], "name": f"node-b-{part}", "uid": f"uid-node-b-{part}"}
        s["spec"]["pool"]["resourceSliceCount"] = 2
        twice.append(s)
    del objs["slice-b"]
    o.store(*objs.values(), *twice)
    result = ask(pasted(o.claim("want-one")))
    assert list(devices_by_node(result)) == ["node-a"]
    (node_b,) = result["infeasible_nodes"]
    assert node_b["node"] == "node-b"
    assert node_b["reason"] == "pool invalid (4)"
    assert {v["detail"] for v in node_b["claims"][0]["verdicts"]} == {"duplicate device name gpu-0"}


def test_it_allocates_a_pods_extended_resource_through_the_device_class_that_serves_it() -> None:
    objs = o.small_cluster()
    o.store(*objs.values())
    result = ask(pasted(o.pod("wants-gpus", resources={"example.com/gpu": "2"})))
    assert devices_by_node(result) == {"node-b": ["node-b/gpu-0", "node-b/gpu-1"]}
    extended = result["subject"]["extended"]
    assert [(e["resource"], e["count"], e["device_class"]) for e in extended] == [
        ("example.com/gpu", 2, o.DRIVER)
    ]
    claim = result["feasible_nodes"][0]["claims"][0]
    assert claim["claim"] == "wants-gpus-extended-resources"
    assert claim["devices"][0]["request"] == "container-0-request-0"


def test_it_maps_an_extended_resource_claimed_by_two_classes_to_the_newest_one() -> None:
    objs = o.small_cluster()
    newer = o.device_class("gpu-newer.example.com", created="2026-11-02T00:00:00Z")
    newer["spec"]["selectors"] = [
        {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "H100"'}}
    ]
    o.store(*objs.values(), newer)
    result = ask(pasted(o.pod("wants-gpu", resources={"example.com/gpu": "1"})))
    assert result["subject"]["extended"][0]["device_class"] == "gpu-newer.example.com"
    assert list(devices_by_node(result)) == ["node-b"]


def test_it_resolves_a_picked_pod_with_a_template_claim_and_honours_its_node_selector() -> None:
    objs = o.small_cluster()
    waiting = o.pod(
        "waiting",
        claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        node_selector={"zone": "z2"},
    )
    o.store(*objs.values(), waiting)
    result = ask({"source": "pick", "kind": "Pod", "namespace": "default", "name": "waiting"})
    assert devices_by_node(result) == {"node-b": ["node-b/gpu-0"]}
    assert result["infeasible_nodes"] == [
        {"node": "node-a", "reason": "pod nodeSelector zone=z2 does not match", "claims": []}
    ]
    assert result["subject"]["claims"][0]["source"] == "pod claim gpu from template one-gpu"


def test_a_pod_is_not_placed_on_a_cordoned_node_unless_it_tolerates_the_cordon() -> None:
    objs = o.small_cluster()
    objs["node-b"]["spec"] = {
        "unschedulable": True
    }  # cordoned: kube-scheduler's NodeUnschedulable refuses it
    waiting = o.pod("waiting", claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    daemon = o.pod("daemon", claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    daemon["spec"]["tolerations"] = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]
    o.store(*objs.values(), waiting, daemon)

    result = ask({"source": "pick", "kind": "Pod", "namespace": "default", "name": "waiting"})
    assert list(devices_by_node(result)) == ["node-a"]
    assert result["infeasible_nodes"] == [
        {
            "node": "node-b",
            "reason": "node is cordoned and the pod does not tolerate node.kubernetes.io/unschedulable:NoSchedule",
            "claims": [],
        }
    ]
    tolerant = ask({"source": "pick", "kind": "Pod", "namespace": "default", "name": "daemon"})
    assert list(devices_by_node(tolerant)) == ["node-a", "node-b"]


def test_a_pod_is_not_placed_on_a_node_whose_taint_it_does_not_tolerate_nor_outside_its_affinity() -> None:
    objs = o.small_cluster()
    objs["node-a"]["spec"] = {"taints": [{"key": "maintenance", "value": "gpu", "effect": "NoExecute"}]}
    objs["node-b"]["spec"] = {"taints": [{"key": "spot", "effect": "PreferNoSchedule"}]}  # only scores
    elsewhere = o.pod("elsewhere", claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    elsewhere["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}
                ]
            }
        }
    }
    plain = o.pod("plain", claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    o.store(*objs.values(), elsewhere, plain)

    result = ask({"source": "pick", "kind": "Pod", "namespace": "default", "name": "plain"})
    assert list(devices_by_node(result)) == ["node-b"]
    assert (
        result["infeasible_nodes"][0]["reason"]
        == "pod does not tolerate the node's taint maintenance=gpu:NoExecute"
    )
    # zone z1 is node-a, whose taint it does not tolerate; node-b is outside its required affinity
    nowhere = ask({"source": "pick", "kind": "Pod", "namespace": "default", "name": "elsewhere"})
    assert devices_by_node(nowhere) == {}
    assert {n["node"]: n["reason"] for n in nowhere["infeasible_nodes"]} == {
        "node-a": "pod does not tolerate the node's taint maintenance=gpu:NoExecute",
        "node-b": "pod's required node affinity does not match",
    }


def test_it_answers_for_a_picked_allocated_claim_as_if_it_were_pending() -> None:
    o.store(*o.small_cluster().values())
    result = ask({"source": "pick", "kind": "ResourceClaim", "namespace": "default", "name": "train-0"})
    assert devices_by_node(result) == {"node-a": ["node-a/gpu-0"], "node-b": ["node-b/gpu-0"]}
    assert any("answered as if it were pending" in n for n in result["subject"]["notes"])


def test_it_answers_for_a_node_that_looks_like_one_that_fit_with_that_nodes_own_devices() -> None:
    o.store(*o.small_cluster().values(), o.node("node-c"), o.gpu_slice("node-c", "H100"))
    result = ask(pasted(o.claim("want-one")))
    assert devices_by_node(result) == {
        "node-a": ["node-a/gpu-1"],
        "node-b": ["node-b/gpu-0"],
        "node-c": ["node-c/gpu-0"],
    }
    node_c = result["feasible_nodes"][2]
    assert node_c["same_as"] == "node-b"
    assert node_c["claims"][0]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [
        "node-c"
    ]


def test_it_reads_the_inventory_again_once_it_changes() -> None:
    load = snapshot_load
    o.store(*o.small_cluster().values())
    first = load()
    assert load() is first  # nothing changed: the decoded snapshot is reused
    o.store(o.node("node-c"), o.gpu_slice("node-c", "H100"))
    assert len(load().slices) == 3
    KubeObject.objects.filter(name="node-c").delete()
    assert [n["metadata"]["name"] for n in load().nodes] == ["node-a", "node-b"]


def test_it_answers_for_one_node_when_asked_and_names_an_unknown_node() -> None:
    o.store(*o.small_cluster().values())
    result = ask({**pasted(o.claim("want-one")), "node": "node-b"})
    assert devices_by_node(result) == {"node-b": ["node-b/gpu-0"]}
    assert result["nodes_total"] == 1
    with pytest.raises(WhatIfInputError) as info:
        ask({**pasted(o.claim("want-one")), "node": "node-z"})
    assert str(info.value) == "input.node: no node named node-z in the inventory"


@pytest.mark.parametrize(
    ("request_spec", "asks"),
    [
        ({"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": 16}}, "gpu: 16 × gpu.example.com"),
        ({"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}, "gpu: 1 × gpu.example.com"),
        ({"name": "all", "exactly": {"deviceClassName": "nic", "allocationMode": "All"}}, "all: all of nic"),
        ({"name": "any", "firstAvailable": [{"name": "big", "deviceClassName": "h100", "count": 2},
                                            {"name": "small", "deviceClassName": "mig"}]},
         "any: the first that fits of 2 × h100 | 1 × mig"),
    ],
)  # fmt: skip
def test_the_question_says_what_each_request_asks_for(request_spec: dict[str, Any], asks: str) -> None:
    from allocation.whatif.kinds.feasibility import _asks

    assert _asks(request_spec) == asks
