"""Selections become name-based DeviceTaintRules: whole pools collapse, partial pools list devices."""

from __future__ import annotations

from dra.names import QUALIFIED_NAME_MSG
from maintenance.planning import DeviceRef, plan_rules, rule_name, rule_object
from maintenance.taints import selector_errors, taint_errors

POOLS = {
    ("gpu.example.com", "node-01"): ["gpu-0", "gpu-1", "gpu-2", "gpu-3"],
    ("gpu.example.com", "node-02"): ["gpu-0", "gpu-1"],
}


def test_it_makes_one_rule_for_a_whole_pool() -> None:
    selected = [DeviceRef("gpu.example.com", "node-01", d) for d in POOLS[("gpu.example.com", "node-01")]]
    plans = plan_rules(maintenance_id="m1", selected=selected, pool_devices=POOLS)
    assert [p.selector for p in plans] == [{"driver": "gpu.example.com", "pool": "node-01"}]
    assert len(plans[0].devices) == 4


def test_it_makes_one_rule_per_device_for_a_partial_pool() -> None:
    selected = [
        DeviceRef("gpu.example.com", "node-02", "gpu-1"),
        DeviceRef("gpu.example.com", "node-01", "gpu-3"),
    ]
    plans = plan_rules(maintenance_id="m1", selected=selected, pool_devices=POOLS)
    assert [p.selector for p in plans] == [
        {"driver": "gpu.example.com", "pool": "node-01", "device": "gpu-3"},
        {"driver": "gpu.example.com", "pool": "node-02", "device": "gpu-1"},
    ]


def test_it_names_rules_predictably_and_validly() -> None:
    selector = {"driver": "gpu.example.com", "pool": "node-01", "device": "gpu-3"}
    name = rule_name("M-42", selector)
    assert name == rule_name("M-42", dict(selector))
    assert name.startswith("dradash-m-42-node-01-gpu-3-")
    assert len(name) <= 253 and name == name.lower()
    assert rule_name("M-42", {**selector, "device": "gpu-2"}) != name


def test_it_labels_the_rule_with_who_why_and_the_maintenance() -> None:
    plan = plan_rules(
        maintenance_id="m7", selected=[DeviceRef("gpu.example.com", "node-02", "gpu-0")], pool_devices=POOLS
    )[0]
    rule = rule_object(
        plan, maintenance_id="m7", author="alice", reason="firmware update", ticket="OPS-1",
        key="example.com/maintenance", value="firmware", effect="None",
    )  # fmt: skip
    assert rule["metadata"]["labels"]["dradash.io/maintenance"] == "m7"
    assert rule["metadata"]["labels"]["dradash.io/author"] == "alice"
    assert rule["metadata"]["annotations"]["dradash.io/reason"] == "firmware update"
    assert rule["metadata"]["annotations"]["dradash.io/ticket"] == "OPS-1"
    assert rule["spec"]["taint"] == {"key": "example.com/maintenance", "value": "firmware", "effect": "None"}


def test_it_refuses_bad_taints_naming_the_field() -> None:
    fields = {e.field for e in taint_errors(key="bad key!", value="x" * 64, effect="PreferNoSchedule")}
    assert fields == {"taint.key", "taint.value", "taint.effect"}
    assert taint_errors(key="example.com/maintenance", value="fw-1.2", effect="NoExecute") == []
    assert (
        "PreferNoSchedule is not valid"
        in taint_errors(key="k", value="", effect="PreferNoSchedule")[0].message
    )


def test_it_refuses_empty_and_missing_selectors_unless_confirmed() -> None:
    assert selector_errors(None, confirm_all_devices=True)[0].field == "deviceSelector"
    errors = selector_errors({}, confirm_all_devices=False)
    assert errors and "every device in the cluster" in errors[0].message
    assert selector_errors({}, confirm_all_devices=True) == []
    assert selector_errors({"driver": "gpu.example.com", "pool": "node-01"}, confirm_all_devices=False) == []
    assert (
        selector_errors({"driver": "Bad_Driver"}, confirm_all_devices=False)[0].field
        == "deviceSelector.driver"
    )


def test_it_words_name_errors_as_the_api_server_does() -> None:
    (key_error,) = taint_errors(key="bad key!", value="", effect="None")
    assert key_error.message == f'Invalid value: "bad key!": name part {QUALIFIED_NAME_MSG}'
    (device_error,) = selector_errors({"device": "gpu.0"}, confirm_all_devices=False)
    assert device_error.message == 'Invalid value: "gpu.0": must not contain dots'


def test_it_shows_a_non_ascii_value_as_typed_as_the_api_server_does() -> None:
    # The API server quotes the value with its letters as they are ("ü", not "\u00fc"): the operator must
    # recognise what they typed.
    (value_error,) = taint_errors(key="example.com/maintenance", value="früh", effect="None")
    assert value_error.message.startswith('Invalid value: "früh": ')
