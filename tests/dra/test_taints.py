"""dra.taints: the one toleration matcher, effective taints with provenance, NoExecute eviction time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dra.taints import (
    RuleIndex,
    Taint,
    blocking_taint,
    effective_effect,
    effective_taints,
    eviction_time,
    no_execute_delay,
    parse_taint_rule,
    parse_toleration,
    tolerates,
)

NOW = datetime(2026, 9, 1, 10, 0, tzinfo=UTC)
MAINT = {"key": "example.com/maintenance", "value": "drain", "effect": "NoExecute"}


@pytest.mark.parametrize(
    ("toleration", "expected"),
    [
        ({"key": "example.com/maintenance", "operator": "Exists"}, True),
        ({"operator": "Exists"}, True),  # empty key with Exists tolerates every key
        ({"key": "example.com/maintenance", "value": "drain"}, True),  # no operator means Equal
        ({"key": "example.com/maintenance", "operator": "Equal", "value": "other"}, False),
        ({"key": "example.com/other", "operator": "Exists"}, False),
        ({"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"}, False),
        ({"key": "example.com/maintenance", "operator": "Exists", "effect": "NoExecute"}, True),
        ({"key": "example.com/maintenance", "operator": "Unknown"}, False),
    ],
)
def test_it_matches_tolerations_as_upstream_tolerates_taint(toleration: dict, expected: bool) -> None:
    assert tolerates(toleration, MAINT) is expected


def test_it_treats_unknown_effects_as_none() -> None:
    assert effective_effect("PreferNoSchedule") == "None"
    assert effective_effect("NoExecute") == "NoExecute"


def test_it_blocks_allocation_only_for_no_schedule_and_no_execute() -> None:
    taints = [Taint("a", "", "None"), Taint("b", "", "Bogus"), Taint("c", "", "NoSchedule")]
    assert blocking_taint(taints, []) == taints[2]
    assert blocking_taint(taints, [parse_toleration({"key": "c", "operator": "Exists"})]) is None


def rule(name: str, selector: dict | None, effect: str = "NoExecute") -> dict:
    spec: dict = {"taint": {"key": f"example.com/{name}", "effect": effect}}
    if selector is not None:
        spec["deviceSelector"] = selector
    return {"metadata": {"name": name}, "spec": spec}


def test_it_lists_slice_taints_then_rule_taints_by_rule_name_with_provenance() -> None:
    taints = effective_taints(
        driver="gpu.example.com",
        pool="node-1",
        device="gpu-0",
        slice_taints=[{"key": "gpu.example.com/ecc", "value": "bad", "effect": "NoSchedule"}],
        rules=[
            rule("zeta", {"pool": "node-1"}),
            rule("alpha", {}),
            rule("none", None),
            rule("x", {"pool": "n2"}),
        ],
    )
    assert [(t.key, t.source, t.rule) for t in taints] == [
        ("gpu.example.com/ecc", "slice", None),
        ("example.com/alpha", "rule", "alpha"),
        ("example.com/zeta", "rule", "zeta"),
    ]
    assert taints[1].origin == "DeviceTaintRule alpha"


def test_it_finds_the_same_rules_through_the_index_as_by_scanning() -> None:
    rules = [
        rule("all", {}),
        rule("drv", {"driver": "gpu.example.com"}),
        rule("pool", {"driver": "gpu.example.com", "pool": "node-1"}),
        rule("dev", {"device": "gpu-0"}),
        rule("exact", {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}),
        rule("other", {"driver": "nic.example.com"}),
        rule("absent", None),
    ]
    index = RuleIndex.of(rules)
    for device in [
        ("gpu.example.com", "node-1", "gpu-0"),
        ("gpu.example.com", "node-2", "gpu-1"),
        ("nic.example.com", "node-1", "gpu-0"),
    ]:
        scanned = [
            t.rule for t in effective_taints(driver=device[0], pool=device[1], device=device[2], rules=rules)
        ]
        assert [r.name for r in index.rules_for(*device)] == scanned
    index.remove("all")
    index.add(parse_taint_rule(rule("pool", {"pool": "node-2"})))
    assert [r.name for r in index.rules_for("gpu.example.com", "node-2", "gpu-1")] == ["drv", "pool"]
    assert len(index) == 6


@pytest.mark.parametrize(
    ("tolerations", "delay"),
    [
        ([], 0),
        (
            [
                {
                    "key": "example.com/maintenance",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
            300,
        ),
        ([{"key": "example.com/maintenance", "operator": "Exists", "effect": "NoExecute"}], None),
        (
            [
                {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 600},
                {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60},
            ],
            60,
        ),
        ([{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": -5}], 0),
        # An empty effect lets the scheduler allocate but does not delay eviction (upstream's controller).
        ([{"key": "example.com/maintenance", "operator": "Exists"}], 0),
        ([{"key": "example.com/other", "operator": "Exists", "effect": "NoExecute"}], 0),
    ],
)
def test_it_computes_the_no_execute_delay_like_the_eviction_controller(
    tolerations: list, delay: int | None
) -> None:
    assert no_execute_delay(MAINT, tolerations) == delay


def test_it_adds_the_delay_to_time_added() -> None:
    taint = {**MAINT, "timeAdded": "2026-09-01T09:00:00Z"}
    tols = [{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 90}]
    assert eviction_time(taint, tols, now=NOW) == datetime(2026, 9, 1, 9, 1, 30, tzinfo=UTC)
    assert eviction_time(MAINT, [], now=NOW) == NOW  # no timeAdded: now
    assert eviction_time(taint, [{"operator": "Exists", "effect": "NoExecute"}], now=NOW) is None
    assert eviction_time({**MAINT, "timeAdded": "2026-09-01T09:00:00+00:00"}, [], now=NOW) == NOW - timedelta(
        hours=1
    )
