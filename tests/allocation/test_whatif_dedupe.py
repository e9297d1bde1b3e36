"""Nodes that look alike share one answer: the shortcut must give what computing every node gives.

The cluster has several node shapes, and pairs that look alike but are not: a device in use, a
blocking DeviceTaintRule (or one with another value), a taint in the slice, counters partly consumed.
Each question is answered twice — with the shortcut and with every node computed — and compared as a
user reads the answer: per node, how many copies (headroom), which devices or why not (feasibility).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from allocation.snapshot import snapshot_load
from allocation.whatif.kinds.feasibility import feasibility
from allocation.whatif.kinds.headroom import headroom
from allocation.whatif.subject import resolve_subject
from tests.allocation import whatif_objects as o

pytestmark = pytest.mark.django_db

Obj = dict[str, Any]


def counter_pool(node_name: str) -> list[Obj]:
    """One 80Gi GPU offered whole or as two 40Gi halves; the counter set in a slice of its own."""

    def part(name: str, mem: str) -> Obj:
        return {
            "name": name,
            "attributes": {"model": {"string": "H100"}},
            "consumesCounters": [{"counterSet": "gpu-0-mem", "counters": {"memory": {"value": mem}}}],
        }

    pool = {"name": node_name, "generation": 1, "resourceSliceCount": 2}
    counters = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": o._meta(f"{node_name}-counters"),
        "spec": {
            "driver": o.DRIVER,
            "nodeName": node_name,
            "pool": pool,
            "sharedCounters": [{"name": "gpu-0-mem", "counters": {"memory": {"value": "80Gi"}}}],
        },
    }
    parts = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": o._meta(f"{node_name}-parts"),
        "spec": {
            "driver": o.DRIVER,
            "nodeName": node_name,
            "pool": dict(pool),
            "devices": [part("full", "80Gi"), part("half-0", "40Gi"), part("half-1", "40Gi")],
        },
    }
    return [counters, parts]


def held(name: str, node_name: str, device: str) -> Obj:
    return o.allocated_claim(name, node_name, device, None)


def cluster() -> list[Obj]:
    objs: list[Obj] = [o.device_class(extended=None)]
    for n in ("plain-1", "plain-2", "plain-3", "busy-1", "busy-2", "busy-other", "a100"):
        objs += [o.node(n), o.gpu_slice(n, "A100" if n == "a100" else "H100", count=4)]
    objs += [held("hold-b1", "busy-1", "gpu-1"), held("hold-b2", "busy-2", "gpu-1")]
    objs += [held("hold-bo", "busy-other", "gpu-2")]
    for n in ("ns-1", "ns-2", "ns-other-value", "none-effect", "slice-taint"):
        taints = (
            [{"key": "example.com/ecc", "value": "bad", "effect": "NoExecute"}]
            if n == "slice-taint"
            else None
        )
        objs += [o.node(n), o.gpu_slice(n, "H100", count=4, taints=taints)]
    objs += [
        o.taint_rule("r-ns-1", {"driver": o.DRIVER, "pool": "ns-1", "device": "gpu-0"}, "example.com/m", "NoSchedule", "a"),
        o.taint_rule("r-ns-2", {"driver": o.DRIVER, "pool": "ns-2", "device": "gpu-0"}, "example.com/m", "NoSchedule", "a"),
        o.taint_rule(
            "r-ns-value", {"driver": o.DRIVER, "pool": "ns-other-value", "device": "gpu-0"}, "example.com/m", "NoSchedule", "b"
        ),
        o.taint_rule("r-none", {"driver": o.DRIVER, "pool": "none-effect"}, "example.com/info", "None", "x"),
    ]  # fmt: skip
    for n in ("parts-1", "parts-2", "parts-3"):
        objs += [o.node(n), *counter_pool(n)]
    objs += [held("hold-p2", "parts-2", "half-0")]
    return objs


def headroom_by_node(result: dict[str, Any]) -> dict[str, Any]:
    return {n["node"]: (n["copies"], n["devices_per_class"], n["capped"]) for n in result["per_node"]}


def feasibility_by_node(result: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in result["feasible_nodes"]:
        out[n["node"]] = ("fits", [(c["claim"], c["devices"], c["nodeSelector"]) for c in n["claims"]])
    for n in result["infeasible_nodes"]:
        out[n["node"]] = ("does not fit", n["reason"])
    return out


def subject_of(data: dict[str, Any]) -> Any:
    return resolve_subject(data, snapshot_load())


@pytest.mark.parametrize("count", [1, 2, 3])
def test_headroom_with_nodes_alike_sharing_an_answer_is_the_headroom_of_every_node_computed(
    count: int,
) -> None:
    o.store(*cluster())
    subject = subject_of({"source": "class", "deviceClassName": o.DRIVER, "count": count})
    fast = headroom(snapshot=snapshot_load(), subject=subject, max_per_node=64)
    plain = headroom(snapshot=snapshot_load(), subject=subject, max_per_node=64, memo=False)
    again = headroom(snapshot=snapshot_load(), subject=subject, max_per_node=64)  # fingerprints remembered
    assert headroom_by_node(fast) == headroom_by_node(plain) == headroom_by_node(again)
    assert (fast["total"], fast["per_class"]) == (plain["total"], plain["per_class"])
    assert fast["computed_nodes"] < plain["computed_nodes"] == plain["nodes_total"]


def test_nodes_that_only_look_alike_get_their_own_headroom() -> None:
    o.store(*cluster())
    subject = subject_of({"source": "class", "deviceClassName": o.DRIVER, "count": 1})
    copies = {
        n: c
        for n, (c, _, _) in headroom_by_node(
            headroom(snapshot=snapshot_load(), subject=subject, max_per_node=64)
        ).items()
    }
    assert copies["plain-1"] == copies["plain-3"] == copies["a100"] == copies["none-effect"] == 4
    assert copies["busy-1"] == copies["busy-other"] == 3  # one GPU in use
    assert copies["ns-1"] == copies["ns-other-value"] == copies["slice-taint"] == 3  # one GPU tainted
    assert copies["parts-1"] == copies["parts-2"] == 1  # the whole GPU, or the half left
    one = o.claim("one")
    fits = feasibility_by_node(
        feasibility(
            snapshot=snapshot_load(), subject=subject_of({"source": "yaml", "yaml": yaml.safe_dump(one)})
        )
    )
    devices = {n: [d["device"] for d in fits[n][1][0][1]] for n in ("parts-1", "parts-2", "parts-3")}
    assert devices == {"parts-1": ["full"], "parts-2": ["half-1"], "parts-3": ["full"]}


@pytest.mark.parametrize(
    "claim",
    [
        o.claim("three", count=3),
        o.claim("four", count=4),
        o.claim("h100", selector='device.attributes["gpu.example.com"].model == "H100"'),
        o.claim(
            "tolerant", count=4, tolerations=[{"key": "example.com/m", "operator": "Equal", "value": "a", "effect": "NoSchedule"}]
        ),
    ],
    ids=["three", "four", "model", "toleration"],
)  # fmt: skip
def test_feasibility_with_nodes_alike_sharing_an_answer_is_every_node_tried(claim: Obj) -> None:
    o.store(*cluster())
    subject = subject_of({"source": "yaml", "yaml": yaml.safe_dump(claim)})
    fast = feasibility(snapshot=snapshot_load(), subject=subject)
    plain = feasibility(snapshot=snapshot_load(), subject=subject, memo=False)
    again = feasibility(snapshot=snapshot_load(), subject=subject)  # fingerprints remembered
    assert feasibility_by_node(fast) == feasibility_by_node(plain) == feasibility_by_node(again)
    assert fast["nodes_feasible"] == plain["nodes_feasible"]
    assert fast["reasons"] == plain["reasons"]
    shared = [n for n in fast["feasible_nodes"] + fast["infeasible_nodes"] if n.get("same_as")]
    assert shared, "no node reused another's answer"


def test_a_tolerated_rule_is_told_apart_from_one_with_another_value() -> None:
    o.store(*cluster())
    claim = o.claim(
        "tolerant",
        count=4,
        tolerations=[{"key": "example.com/m", "operator": "Equal", "value": "a", "effect": "NoSchedule"}],
    )
    answer = feasibility_by_node(
        feasibility(
            snapshot=snapshot_load(), subject=subject_of({"source": "yaml", "yaml": yaml.safe_dump(claim)})
        )
    )
    assert answer["ns-1"][0] == answer["ns-2"][0] == "fits"
    assert answer["ns-other-value"][0] == "does not fit"
    assert answer["ns-1"][1][0][1][0]["pool"] == "ns-1"  # its own devices, not the node it looked like


def test_a_claim_allocated_since_the_last_question_changes_the_next_answer() -> None:
    o.store(*cluster())
    subject = subject_of({"source": "class", "deviceClassName": o.DRIVER, "count": 1})
    before = headroom_by_node(headroom(snapshot=snapshot_load(), subject=subject, max_per_node=64))
    o.store(held("hold-p2b", "plain-2", "gpu-3"))  # the mirror wrote one claim; slices are unchanged
    snapshot = snapshot_load()
    after = headroom_by_node(headroom(snapshot=snapshot, subject=subject, max_per_node=64))
    plain = headroom_by_node(headroom(snapshot=snapshot, subject=subject, max_per_node=64, memo=False))
    assert (before["plain-2"][0], after["plain-2"][0]) == (4, 3)
    assert after == plain
    assert after["plain-1"] == before["plain-1"]


def test_a_claim_deallocated_since_the_last_question_frees_its_device_in_the_next_answer() -> None:
    from inventory.models import KubeObject

    o.store(*cluster())
    subject = subject_of({"source": "class", "deviceClassName": o.DRIVER, "count": 1})
    before = headroom_by_node(headroom(snapshot=snapshot_load(), subject=subject, max_per_node=64))
    KubeObject.objects.filter(kind="resourceclaims", name="hold-b1").delete()
    snapshot = snapshot_load()
    after = headroom_by_node(headroom(snapshot=snapshot, subject=subject, max_per_node=64))
    assert (before["busy-1"][0], after["busy-1"][0], after["busy-2"][0]) == (3, 4, 3)
    assert after == headroom_by_node(
        headroom(snapshot=snapshot, subject=subject, max_per_node=64, memo=False)
    )
