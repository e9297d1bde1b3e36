"""Taint impact: devices, claims and pods affected, eviction times, PDBs, re-allocation, pending pods."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from allocation.snapshot import snapshot_load
from allocation.whatif.base import WhatIfInputError
from allocation.whatif.kinds import taint_impact as kind
from tests.allocation import whatif_objects as o

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
NO_EXECUTE = {"key": "example.com/broken", "value": "ecc", "effect": "NoExecute"}


def taint_impact(**kwargs: Any) -> kind.TaintImpact:
    return kind.taint_impact(snapshot=snapshot_load(), **kwargs)


def cluster_with_two_trainers() -> None:
    """train-0 on node-a/gpu-0 tolerates the taint for 300 s (and 600 s); train-1 on node-a/gpu-1 does not."""
    objs = o.small_cluster()
    del objs["claim-train-0"]
    tolerations = [
        {"key": "example.com/broken", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 600},
        {
            "key": "example.com/broken",
            "operator": "Equal",
            "value": "ecc",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
        {"key": "example.com/broken", "operator": "Exists", "effect": "NoSchedule"},
    ]
    train0 = objs["train-0"]
    train1 = o.pod(
        "train-1",
        node_name="node-a",
        labels={"app": "train"},
        claims=[{"name": "gpu", "resourceClaimName": "train-1"}],
    )
    o.store(
        *objs.values(),
        o.allocated_claim("train-0", "node-a", "gpu-0", train0, tolerations=tolerations),
        train1,
        o.allocated_claim("train-1", "node-a", "gpu-1", train1),
        o.pdb("train", {"app": "train"}, current=2, desired=1),
    )


def test_it_lists_devices_claims_and_pods_with_the_eviction_time_of_each_pod() -> None:
    cluster_with_two_trainers()
    impact = taint_impact(selector={"driver": o.DRIVER, "pool": "node-a"}, taint=NO_EXECUTE, now=NOW)
    assert impact.devices == ["gpu.example.com/node-a/gpu-0", "gpu.example.com/node-a/gpu-1"]
    assert sorted(c.name for c in impact.claims) == ["train-0", "train-1"]
    evictions = {p.name: (p.evicted, p.evict_at) for p in impact.pods}
    assert evictions == {
        "train-1": (True, "2026-11-29T12:00:00+00:00"),
        "train-0": (True, "2026-11-29T12:05:00+00:00"),
    }
    assert [p.name for p in impact.pods] == ["train-1", "train-0"]  # soonest first


def test_it_warns_about_a_disruption_budget_the_evictions_would_break() -> None:
    cluster_with_two_trainers()
    impact = taint_impact(selector={"driver": o.DRIVER, "pool": "node-a"}, taint=NO_EXECUTE, now=NOW)
    (budget,) = impact.budgets
    assert (budget.name, budget.current_healthy, budget.desired_healthy, budget.evicted) == ("train", 2, 1, 2)
    one_device = taint_impact(
        selector={"driver": o.DRIVER, "pool": "node-a", "device": "gpu-1"}, taint=NO_EXECUTE, now=NOW
    )
    assert one_device.budgets == []  # 2 healthy - 1 evicted still meets 1


def test_it_checks_whether_evicted_pods_claims_fit_on_what_remains() -> None:
    cluster_with_two_trainers()
    impact = taint_impact(selector={"driver": o.DRIVER, "pool": "node-a"}, taint=NO_EXECUTE, now=NOW)
    assert {p.name: p.reallocation for p in impact.pods} == {
        "train-1": "fits on node node-b",
        "train-0": "fits on node node-a, but on devices with this taint (tolerated for a time)",
    }
    everything = taint_impact(selector={"driver": o.DRIVER}, taint=NO_EXECUTE, now=NOW)
    assert {p.name: p.reallocatable for p in everything.pods} == {"train-0": True, "train-1": False}


def test_it_does_not_evict_pods_that_tolerate_the_taint_forever_or_when_the_effect_does_not_evict() -> None:
    objs = o.small_cluster()
    del objs["claim-train-0"]
    forever = [{"key": "example.com/broken", "operator": "Exists", "effect": "NoExecute"}]
    o.store(
        *objs.values(), o.allocated_claim("train-0", "node-a", "gpu-0", objs["train-0"], tolerations=forever)
    )
    impact = taint_impact(selector={"pool": "node-a"}, taint=NO_EXECUTE, now=NOW)
    assert [(p.name, p.evicted) for p in impact.pods] == [("train-0", False)]
    no_schedule = taint_impact(
        selector={"pool": "node-a"}, taint={**NO_EXECUTE, "effect": "NoSchedule"}, now=NOW
    )
    assert [(p.name, p.evicted, p.why) for p in no_schedule.pods] == [
        ("train-0", False, "effect NoSchedule does not evict")
    ]


def test_it_lists_pending_pods_the_taint_would_make_unschedulable() -> None:
    objs = o.small_cluster()
    pinned = o.pod(
        "pinned",
        claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        node_selector={"zone": "z2"},
    )
    roaming = o.pod("roaming", claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    o.store(*objs.values(), pinned, roaming)
    impact = taint_impact(
        selector={"pool": "node-b"}, taint={"key": "k", "value": "", "effect": "NoSchedule"}, now=NOW
    )
    assert impact.pending_unschedulable == [
        {"namespace": "default", "name": "pinned", "fits_now_on": "node-b"}
    ]


def test_it_looks_past_a_node_whose_pool_is_invalid_when_placing_pending_pods() -> None:
    objs = o.small_cluster()
    twice = []
    for part in ("x", "y"):  # node-a's pool published in two slices with the same device names
        s = o.gpu_slice("node-a", "A100")
        s["metadata"] = {**s["metadata"], "name": f"node-a-{part}", "uid": f"uid-node-a-{part}"}
        s["spec"]["pool"]["resourceSliceCount"] = 2
        twice.append(s)
    del objs["slice-a"]
    roaming = o.pod("roaming", claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    o.store(*objs.values(), *twice, roaming)
    impact = taint_impact(
        selector={"pool": "node-b"}, taint={"key": "k", "value": "", "effect": "NoSchedule"}, now=NOW
    )
    assert impact.pending_unschedulable == [
        {"namespace": "default", "name": "roaming", "fits_now_on": "node-b"}
    ]


def test_it_returns_a_json_serialisable_result_with_a_summary() -> None:
    cluster_with_two_trainers()
    data = taint_impact(selector={"pool": "node-a"}, taint=NO_EXECUTE, now=NOW).to_json()
    assert json.loads(json.dumps(data))["summary"] == {
        "devices": 2,
        "claims": 2,
        "pods": 2,
        "evicted": 2,
        "budgets_broken": 1,
        "pending_unschedulable": 0,
        "not_reallocatable": 0,
    }


def test_it_rejects_an_unknown_effect_naming_the_field() -> None:
    with pytest.raises(WhatIfInputError) as info:
        taint_impact(selector={"pool": "x"}, taint={"key": "k", "effect": "Evict"}, now=NOW)
    assert info.value.field == "input.taint.effect"


def test_it_accepts_several_selectors_as_maintenance_writes_one_rule_per_device() -> None:
    cluster_with_two_trainers()
    impact = taint_impact(
        selectors=[
            {"driver": o.DRIVER, "pool": "node-a", "device": "gpu-1"},
            {"pool": "node-b", "device": "gpu-0"},
        ],
        taint=NO_EXECUTE,
        now=NOW,
    )
    assert impact.devices == ["gpu.example.com/node-a/gpu-1", "gpu.example.com/node-b/gpu-0"]
    assert [(p.name, p.evicted) for p in impact.pods] == [("train-1", True)]
    assert impact.pods[0].reallocation == "fits on node node-b"  # node-b/gpu-1 is left


def test_it_selects_the_devices_each_kind_of_selector_names() -> None:
    from dra.selection import device_selector

    devices = [(drv, pool, dev) for drv in ("a", "b") for pool in ("p1", "p2") for dev in ("d1", "d2")]
    raw = [
        {"driver": "a", "pool": "p1"},
        {"device": "d2", "pool": "p2"},
        {"driver": "b", "pool": "p1", "device": "d1"},
    ]
    selectors = [device_selector(r) for r in raw]

    got = kind._selected(devices, selectors)

    assert got == {d for d in devices if any(s.selects(*d) for s in selectors)}
    assert got == {
        ("a", "p1", "d1"),
        ("a", "p1", "d2"),
        ("a", "p2", "d2"),
        ("b", "p2", "d2"),
        ("b", "p1", "d1"),
    }
    assert kind._selected(devices, [device_selector({})]) == set(devices)


def test_it_does_not_keep_the_views_of_earlier_runs_rules() -> None:
    from datetime import timedelta

    from allocation.whatif import view

    cluster_with_two_trainers()
    snapshot = snapshot_load()
    for minute in range(3):
        kind.taint_impact(
            snapshot=snapshot,
            selector={"driver": o.DRIVER, "pool": "node-a"},
            taint=NO_EXECUTE,
            now=NOW + timedelta(minutes=minute),
        )
    assert len([key for key in view._bases if key[2]]) == 1  # the last run's, not one per run


def test_it_tries_one_node_of_each_kind_that_does_not_fit_not_every_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """20 full nodes alike, then one free node: the evicted pod and the pending pod are tried on the
    first full node only, and still found where they fit (the last node); without the memo each
    scan would call the allocator on all 21 nodes."""
    objects = [o.device_class(), o.template("one-gpu")]
    for i in range(21):
        name = f"n-{i:02d}"
        objects += [o.node(name), o.gpu_slice(name, "A100")]
        if i < 20:
            for device in ("gpu-0", "gpu-1"):
                holder = o.pod(
                    f"{name}-{device}",
                    node_name=name,
                    claims=[{"name": "gpu", "resourceClaimName": f"{name}-{device}"}],
                )
                objects += [holder, o.allocated_claim(f"{name}-{device}", name, device, holder)]
    victim = o.pod("victim", node_name="n-20", claims=[{"name": "gpu", "resourceClaimName": "victim"}])
    roaming = o.pod("roaming", claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    o.store(*objects, victim, o.allocated_claim("victim", "n-20", "gpu-0", victim), roaming)
    calls: list[str] = []
    real = kind.allocate_on

    def counted(view: Any, *, node: str, claims: Any) -> Any:
        calls.append(node)
        return real(view, node=node, claims=claims)

    monkeypatch.setattr(kind, "allocate_on", counted)
    impact = taint_impact(selector={"pool": "n-20", "device": "gpu-0"}, taint=NO_EXECUTE, now=NOW)

    assert {p.name: p.reallocation for p in impact.pods} == {"victim": "fits on node n-20"}
    assert impact.pending_unschedulable == []  # roaming still fits on n-20's gpu-1
    # the evicted pod: n-00 (full), then n-20; the pending pod after the taint: the same two
    assert calls == ["n-00", "n-20", "n-00", "n-20"]

    calls.clear()
    whole_node = taint_impact(
        selector={"pool": "n-20"}, taint={**NO_EXECUTE, "effect": "NoSchedule"}, now=NOW
    )
    assert whole_node.pending_unschedulable == [
        {"namespace": "default", "name": "roaming", "fits_now_on": "n-20"}
    ]
    # after the taint: n-00 and n-20 (tainted) do not fit; before it: n-00 does not, n-20 does
    assert calls == ["n-00", "n-20", "n-00", "n-20"]
