"""Effective taints: ResourceSlice taints and DeviceTaintRules, with provenance (dra-api.md §9)."""

from __future__ import annotations

import pytest

from inventory.selectors.rules import taint_rule_list
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def test_it_merges_slice_taints_and_rule_taints_with_their_provenance() -> None:
    driver_taint = {"key": "gpu.example.com/ecc", "value": "uncorrectable", "effect": "NoExecute"}
    f.write(
        (
            "resourceslices",
            f.resource_slice("s0", devices=[f.gpu("gpu-0", taints=[driver_taint]), f.gpu("gpu-1")]),
        ),
        ("devicetaintrules", f.taint_rule("maint", selector={"device": "gpu-0"}, effect="NoSchedule")),
    )

    taints = f.device("gpu-0").taints

    assert [(t["source"], t["rule"], t["key"], t["effect"]) for t in taints] == [
        ("slice", "", "gpu.example.com/ecc", "NoExecute"),
        ("rule", "maint", "example.com/maint", "NoSchedule"),
    ]
    assert f.device("gpu-0").max_taint_effect == "NoExecute"
    assert f.device("gpu-1").taints == []
    assert [(r.name, r.matched_devices) for r in taint_rule_list()] == [("maint", 1)]


def test_it_applies_an_empty_rule_selector_to_every_device_and_a_missing_one_to_none() -> None:
    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])),
        ("resourceslices", f.resource_slice("s1", pool="node-1", node="node-1", devices=[f.gpu("gpu-0")])),
        ("devicetaintrules", f.taint_rule("everything", selector={})),
        ("devicetaintrules", f.taint_rule("nothing", selector=None)),
    )

    rules = {r.name: r.matched_devices for r in taint_rule_list()}

    assert rules == {"everything": 2, "nothing": 0}
    assert [t["rule"] for t in f.device("gpu-0", "node-1").taints] == ["everything"]


def test_it_shows_an_unknown_effect_but_treats_it_as_none() -> None:
    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])),
        ("devicetaintrules", f.taint_rule("future", selector={}, effect="PreferNoDevice")),
    )

    taint = f.device("gpu-0").taints[0]

    assert taint["effect"] == "PreferNoDevice"
    assert taint["effectiveEffect"] == "None" and taint["knownEffect"] is False
    assert f.device("gpu-0").taint_none and not f.device("gpu-0").taint_no_schedule


def test_it_follows_rule_changes_and_deletion() -> None:
    rule = f.taint_rule("maint", selector={"pool": "node-0"}, effect="None")
    f.write(("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])), ("devicetaintrules", rule))
    changed = {
        **rule,
        "metadata": {**rule["metadata"], "resourceVersion": "2"},
        "spec": {**rule["spec"], "deviceSelector": {"pool": "elsewhere"}},
    }

    f.write(("devicetaintrules", changed))
    assert f.device("gpu-0").taints == []
    f.write(("devicetaintrules", rule))
    assert f.device("gpu-0").taint_none
    f.delete("devicetaintrules", rule)
    assert f.device("gpu-0").taints == []
