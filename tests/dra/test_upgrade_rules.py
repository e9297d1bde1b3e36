"""The v1.33-era → v1 conversion rules of dra.upgrade, on plain API JSON (one object at a time)."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import pytest

from dra.upgrade import CompiledSelection, InventoryError, LegacyTaintSelector, upgrade_object
from dra.upgrade.rules import BASIC_DEVICE_FIELDS, FLAT_REQUEST_FIELDS, compiled_rule_name
from dra.upgrade.schema import schema_problems

JSON = dict[str, Any]

ALL_FLAT_FIELDS: JSON = {
    "deviceClassName": "gpu.example.com",
    "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "H100"'}}],
    "allocationMode": "ExactCount",
    "count": 2,
    "adminAccess": True,
    "tolerations": [{"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"}],
    "capacity": {"requests": {"memory": "40Gi"}},
    "derivedAttributes": [
        {"name": "derived/numa", "expression": 'device.attributes["gpu.example.com"].numa'}
    ],
}


def claim(version: str, *requests: JSON, **spec: Any) -> JSON:
    return {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ml"},
        "spec": {"devices": {"requests": list(requests), **spec}},
    }


def test_it_wraps_every_flat_request_field_in_exactly() -> None:
    old = claim("v1beta1", {"name": "gpu", **copy.deepcopy(ALL_FLAT_FIELDS)})
    outcome = upgrade_object(old)
    assert outcome.action == "converted"
    (new,) = outcome.objects
    assert new["apiVersion"] == "resource.k8s.io/v1"
    assert new["spec"]["devices"]["requests"] == [{"name": "gpu", "exactly": ALL_FLAT_FIELDS}]
    assert list(new["spec"]["devices"]["requests"][0]) == ["name", "exactly"]
    assert schema_problems(new) == []


def test_it_keeps_constraints_and_config_beside_the_requests() -> None:
    constraints = [{"requests": ["gpu", "nic"], "matchAttribute": "resource.kubernetes.io/numaNode"}]
    config = [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]
    old = claim(
        "v1alpha3",
        {"name": "gpu", "deviceClassName": "gpu.example.com"},
        {"name": "nic", "deviceClassName": "nic.example.com"},
        constraints=constraints,
        config=config,
    )
    (new,) = upgrade_object(old).objects
    assert new["spec"]["devices"]["constraints"] == constraints
    assert new["spec"]["devices"]["config"] == config
    assert [r["exactly"]["deviceClassName"] for r in new["spec"]["devices"]["requests"]] == [
        "gpu.example.com",
        "nic.example.com",
    ]


def test_it_keeps_first_available_subrequests_as_they_are() -> None:
    subrequests = [
        {"name": "full", "deviceClassName": "gpu.example.com"},
        {
            "name": "mig",
            "deviceClassName": "mig.example.com",
            "count": 2,
            "tolerations": [{"operator": "Exists"}],
        },
    ]
    old = claim("v1beta1", {"name": "accel", "firstAvailable": copy.deepcopy(subrequests)})
    outcome = upgrade_object(old)
    (new,) = outcome.objects
    defaulted = [
        {**subrequests[0], "allocationMode": "ExactCount", "count": 1},
        subrequests[1] | {"allocationMode": "ExactCount"},
    ]
    assert new["spec"]["devices"]["requests"] == [{"name": "accel", "firstAvailable": defaulted}]
    assert any("firstAvailable kept (2 subrequests)" in n for n in outcome.notes)


def test_it_refuses_a_request_with_both_first_available_and_flat_fields() -> None:
    old = claim(
        "v1beta1",
        {"name": "x", "deviceClassName": "a", "firstAvailable": [{"name": "s", "deviceClassName": "b"}]},
    )
    outcome = upgrade_object(old)
    assert outcome.action == "refused"
    assert [p.path for p in outcome.problems] == ["spec.devices.requests[0]"]
    assert "firstAvailable and deviceClassName are both set" in outcome.problems[0].message


def test_it_reports_an_unknown_request_field_instead_of_dropping_it() -> None:
    old = claim(
        "v1beta1", {"name": "gpu", "deviceClassName": "a", "selector": [{"cel": {"expression": "true"}}]}
    )
    outcome = upgrade_object(old)
    assert outcome.action == "refused"
    assert [p.path for p in outcome.problems] == ["spec.devices.requests[0].selector"]
    assert "unknown field" in outcome.problems[0].message
    assert outcome.objects == [old]


def test_it_refuses_a_request_without_class_or_alternatives() -> None:
    outcome = upgrade_object(claim("v1beta1", {"name": "gpu"}))
    assert [str(p) for p in outcome.problems] == [
        "spec.devices.requests[0].deviceClassName: Required value: a request needs deviceClassName or firstAvailable"
    ]


def test_it_leaves_the_input_untouched() -> None:
    old = claim("v1beta1", {"name": "gpu", "deviceClassName": "a", "count": 1})
    before = copy.deepcopy(old)
    upgrade_object(old)
    assert old == before


def test_it_relabels_v1beta2_objects_and_fills_in_only_the_servers_defaults() -> None:
    request = {"name": "gpu", "exactly": {"deviceClassName": "a", "count": 1}}
    old = claim("v1beta2", copy.deepcopy(request))
    (new,) = upgrade_object(old).objects
    exactly = {"deviceClassName": "a", "allocationMode": "ExactCount", "count": 1}
    assert new == {**old, "apiVersion": "resource.k8s.io/v1"} | {
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}
    }


def test_it_converts_claim_templates_inside_spec_spec() -> None:
    old = {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "ml"},
        "spec": {
            "metadata": {"labels": {"a": "b"}},
            "spec": {
                "devices": {"requests": [{"name": "g", "deviceClassName": "c", "allocationMode": "All"}]}
            },
        },
    }
    (new,) = upgrade_object(old).objects
    assert new["spec"]["metadata"] == {"labels": {"a": "b"}}
    assert new["spec"]["spec"]["devices"]["requests"] == [
        {"name": "g", "exactly": {"deviceClassName": "c", "allocationMode": "All"}}
    ]
    assert schema_problems(new) == []


def slice_(version: str, *devices: JSON, **spec: Any) -> JSON:
    return {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-9",
            "pool": {"name": "node-9", "generation": 1, "resourceSliceCount": 1},
            "devices": list(devices),
            **spec,
        },
    }


def test_it_moves_basic_device_fields_onto_the_device() -> None:
    basic = {
        "attributes": {"model": {"string": "H100"}},
        "capacity": {"memory": {"value": "80Gi"}},
        "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
        "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}],
    }
    old = slice_("v1beta1", {"name": "gpu-0", "basic": copy.deepcopy(basic)}, {"name": "bare"})
    (new,) = upgrade_object(old).objects
    assert new["spec"]["devices"] == [{"name": "gpu-0", **basic}, {"name": "bare"}]
    assert list(new["spec"]["devices"][0]) == ["name", "attributes", "capacity", "taints", "consumesCounters"]


def test_it_wraps_plain_v1alpha3_capacities_as_value() -> None:
    old = slice_("v1alpha3", {"name": "nic-0", "basic": {"capacity": {"bandwidth": "400G", "queues": 64}}})
    outcome = upgrade_object(old)
    (new,) = outcome.objects
    assert new["spec"]["devices"][0]["capacity"] == {
        "bandwidth": {"value": "400G"},
        "queues": {"value": "64"},
    }
    assert schema_problems(new) == []
    assert any("2 capacities" in n for n in outcome.notes)


def test_it_reports_unknown_fields_beside_basic() -> None:
    outcome = upgrade_object(slice_("v1beta1", {"name": "d", "attributes": {}, "basic": {"bogus": 1}}))
    assert sorted(p.path for p in outcome.problems) == [
        "spec.devices[0].attributes",
        "spec.devices[0].basic.bogus",
    ]


@pytest.mark.parametrize(
    ("obj", "path", "words"),
    [
        (
            claim(
                "v1alpha3",
                {"name": "g", "deviceClassName": "c"},
            )
            | {"spec": {"controller": "x", "devices": {"requests": []}}},
            "spec.controller",
            "classic DRA",
        ),
        (
            {
                "apiVersion": "resource.k8s.io/v1alpha3",
                "kind": "DeviceClass",
                "metadata": {"name": "c"},
                "spec": {"suitableNodes": {}},
            },
            "spec.suitableNodes",
            "classic DRA",
        ),
        (
            {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass", "metadata": {"name": "c"}},
            "apiVersion",
            "removed in Kubernetes 1.31",
        ),
        (
            {
                "apiVersion": "resource.k8s.io/v1alpha3",
                "kind": "PodSchedulingContext",
                "metadata": {"name": "p"},
            },
            "kind",
            "delete it",
        ),
        (
            {"apiVersion": "resource.k8s.io/v1beta1", "kind": "DeviceTaintRule", "metadata": {"name": "r"}},
            "kind",
            "not a kind",
        ),
        (
            claim("v1alpha3", {"name": "g", "deviceClassName": "c"})
            | {"status": {"deallocationRequested": True}},
            "status.deallocationRequested",
            "classic DRA",
        ),
    ],
)
def test_it_refuses_what_v1_cannot_express(obj: JSON, path: str, words: str) -> None:
    outcome = upgrade_object(obj)
    assert outcome.action == "refused"
    assert [p.path for p in outcome.problems] == [path]
    assert words in outcome.problems[0].message


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}},
        claim("v1", {"name": "g", "exactly": {"deviceClassName": "c"}}),
        {
            "apiVersion": "resource.k8s.io/v1alpha3",
            "kind": "ResourcePoolStatusRequest",
            "metadata": {"name": "r"},
        },
        None,
    ],
)
def test_it_leaves_other_documents_alone(obj: Any) -> None:
    outcome = upgrade_object(obj)
    assert outcome.action == "kept"
    assert outcome.objects == ([obj] if obj is not None else [])


def test_it_converts_the_items_of_a_list() -> None:
    old = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            claim("v1beta1", {"name": "g", "deviceClassName": "c"}),
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}},
        ],
    }
    outcome = upgrade_object(old)
    (new,) = outcome.objects
    assert new["apiVersion"] == "v1"
    assert new["items"][0]["spec"]["devices"]["requests"] == [
        {"name": "g", "exactly": {"deviceClassName": "c", "allocationMode": "ExactCount", "count": 1}}
    ]
    assert new["items"][1] == old["items"][1]
    assert outcome.notes[0].startswith("items[0]: apiVersion")


# ------------------------------------------------------------------------------ DeviceTaintRules


def rule(selector: JSON | None, version: str = "v1alpha3", name: str = "node-2-firmware") -> JSON:
    spec: JSON = {"taint": {"key": "example.com/firmware", "value": "2.4", "effect": "NoSchedule"}}
    if selector is not None:
        spec["deviceSelector"] = selector
    return {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name, "uid": "u-1", "resourceVersion": "7", "labels": {"team": "infra"}},
        "spec": spec,
    }


class FakeInventory:
    """Devices as (driver, pool, name, classes, model); answers like the mirrored inventory would."""

    def __init__(self, devices: list[tuple[str, str, str, tuple[str, ...], str]]) -> None:
        self.devices = devices
        self.asked: list[LegacyTaintSelector] = []

    def compile_selector(self, selector: LegacyTaintSelector) -> CompiledSelection:
        self.asked.append(selector)
        if selector.device_class == "missing":
            raise InventoryError("device class 'missing' is not in the mirrored inventory")
        picked = [
            d
            for d in self.devices
            if (selector.driver in (None, d[0]))
            and (selector.pool in (None, d[1]))
            and (selector.device in (None, d[2]))
            and (selector.device_class is None or selector.device_class in d[3])
            and all(f'== "{d[4]}"' in e for e in selector.cel)
        ]
        pools: dict[tuple[str, str], list[str]] = {}
        for d in picked:
            pools.setdefault((d[0], d[1]), []).append(d[2])
        out: list[Mapping[str, str]] = []
        for (driver, pool), names in sorted(pools.items()):
            everything = [d[2] for d in self.devices if (d[0], d[1]) == (driver, pool)]
            if sorted(names) == sorted(everything):
                out.append({"driver": driver, "pool": pool})
            else:
                out.extend({"driver": driver, "pool": pool, "device": n} for n in sorted(names))
        return CompiledSelection(tuple(out), len(picked), "2026-11-02T09:00:00Z")


INVENTORY = [
    ("gpu.example.com", "node-1", "gpu-0", ("gpu.example.com",), "H100"),
    ("gpu.example.com", "node-1", "gpu-1", ("gpu.example.com",), "H100"),
    ("gpu.example.com", "node-2", "gpu-0", ("gpu.example.com",), "H100"),
    ("gpu.example.com", "node-2", "gpu-1", ("gpu.example.com",), "A100"),
    ("nic.example.com", "node-2", "nic-0", ("nic.example.com",), "CX7"),
]


def test_it_only_relabels_a_rule_that_selects_by_name() -> None:
    old = rule({"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"})
    outcome = upgrade_object(old, inventory=None)
    assert outcome.action == "converted" and not outcome.generated
    assert outcome.objects == [{**old, "apiVersion": "resource.k8s.io/v1"}]


def test_it_compiles_a_class_and_cel_selector_into_name_based_rules() -> None:
    inventory = FakeInventory(INVENTORY)
    selector = {
        "deviceClassName": "gpu.example.com",
        "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "H100"'}}],
    }
    outcome = upgrade_object(rule(selector), inventory=inventory)
    assert outcome.action == "converted" and outcome.generated
    assert inventory.asked == [
        LegacyTaintSelector(
            device_class="gpu.example.com", cel=('device.attributes["gpu.example.com"].model == "H100"',)
        )
    ]
    selectors = [r["spec"]["deviceSelector"] for r in outcome.objects]
    assert selectors == [
        {"driver": "gpu.example.com", "pool": "node-1"},
        {"driver": "gpu.example.com", "pool": "node-2", "device": "gpu-0"},
    ]
    for new in outcome.objects:
        assert new["apiVersion"] == "resource.k8s.io/v1"
        assert new["spec"]["taint"] == {"key": "example.com/firmware", "value": "2.4", "effect": "NoSchedule"}
        meta = new["metadata"]
        assert meta["name"].startswith("node-2-firmware-node-")
        assert "uid" not in meta and "resourceVersion" not in meta
        assert meta["labels"] == {"team": "infra", "dradash.io/compiled-from": "node-2-firmware"}
        assert meta["annotations"]["dradash.io/compiled-at"] == "2026-11-02T09:00:00Z"
        assert json.loads(meta["annotations"]["dradash.io/compiled-selector"]) == selector
        assert "regenerate if devices change" in meta["annotations"]["dradash.io/note"]
        assert schema_problems(new) == []
    assert len({r["metadata"]["name"] for r in outcome.objects}) == 2
    (note,) = [n for n in outcome.notes if "compiled into" in n]
    assert "2 name-based rules (1 whole pool, 1 single device; 3 devices)" in note
    assert "2026-11-02T09:00:00Z" in note


def test_it_names_compiled_rules_predictably() -> None:
    one = compiled_rule_name("fw", {"driver": "gpu.example.com", "pool": "Rack/7", "device": "gpu-0"})
    assert one == compiled_rule_name("fw", {"driver": "gpu.example.com", "pool": "Rack/7", "device": "gpu-0"})
    assert one.startswith("fw-rack-7-gpu-0-")
    assert one != compiled_rule_name(
        "fw", {"driver": "other.example.com", "pool": "Rack/7", "device": "gpu-0"}
    )
    long = compiled_rule_name("r" * 253, {"driver": "d", "pool": "p" * 300})
    assert len(long) <= 253 and long[-1].isalnum()


def test_it_refuses_a_legacy_selector_without_an_inventory() -> None:
    old = rule({"deviceClassName": "gpu.example.com"})
    outcome = upgrade_object(old, inventory=None)
    assert outcome.action == "refused"
    assert [p.path for p in outcome.problems] == ["spec.deviceSelector.deviceClassName"]
    assert "mirrored inventory" in outcome.problems[0].message
    assert outcome.objects == [old]


def test_it_refuses_a_legacy_selector_that_selects_nothing() -> None:
    outcome = upgrade_object(
        rule({"deviceClassName": "gpu.example.com", "pool": "node-7"}), inventory=FakeInventory(INVENTORY)
    )
    assert outcome.action == "refused"
    assert "selects no device" in outcome.problems[0].message
    assert "empty selector selects every device" in outcome.problems[0].message


def test_it_passes_on_what_the_inventory_cannot_answer() -> None:
    outcome = upgrade_object(rule({"deviceClassName": "missing"}), inventory=FakeInventory(INVENTORY))
    assert [str(p) for p in outcome.problems] == [
        "spec.deviceSelector.deviceClassName: cannot compile against the inventory: "
        "device class 'missing' is not in the mirrored inventory"
    ]


def test_it_knows_the_fields_the_1_37_schema_has() -> None:
    """The rules' field tables against the shipped v1beta1 and v1 schemas: drift shows up here."""
    from dra.upgrade.schema import _read

    defs = _read("_definitions.json")["$defs"]
    props = lambda name: set(defs[f"io.k8s.api.resource.{name}"]["properties"])  # noqa: E731
    assert set(FLAT_REQUEST_FIELDS) == props("v1beta1.DeviceRequest") - {"name", "firstAvailable"}
    assert set(FLAT_REQUEST_FIELDS) == props("v1.ExactDeviceRequest")
    assert BASIC_DEVICE_FIELDS == props("v1beta1.BasicDevice") == props("v1.Device") - {"name"}


@pytest.mark.parametrize(
    ("document", "path", "words"),
    [
        ("just a string", "", "is a string, not a Kubernetes object"),
        (["a", "list"], "", "is a list, not a Kubernetes object"),
        (42, "", "is a number, not a Kubernetes object"),
        ({"kind": "ResourceClaim", "metadata": {"name": "x"}}, "apiVersion", "Required value"),
        ({"apiVersion": "resource.k8s.io/v1beta1"}, "kind", "Required value"),
        ({"apiVersion": 1, "kind": "ResourceClaim"}, "apiVersion", "must be a string"),
    ],
)
def test_it_refuses_a_document_that_is_not_a_kubernetes_object_naming_what_is_missing(
    document: Any, path: str, words: str
) -> None:
    outcome = upgrade_object(document)
    assert outcome.action == "refused"
    (problem,) = outcome.problems
    assert problem.path == path and words in problem.message, problem


def test_an_empty_document_is_dropped_as_before() -> None:
    assert upgrade_object(None).objects == [] and upgrade_object(None).action == "kept"


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 10**26])
def test_it_refuses_an_int_attribute_outside_int64_which_the_api_server_cannot_decode(value: int) -> None:
    old = slice_("v1beta1", {"name": "gpu-0", "basic": {"attributes": {"cores": {"int": value}}}})
    (new,) = upgrade_object(old).objects
    assert [(p.path, p.message) for p in schema_problems(new)] == [
        ("spec.devices[0].attributes.cores.int", f"Kubernetes 1.37.0 schema: {value} is not a 'int64'")
    ]


@pytest.mark.parametrize("value", [2**63 - 1, -(2**63), 0])
def test_it_takes_an_int_attribute_within_int64(value: int) -> None:
    old = slice_("v1beta1", {"name": "gpu-0", "basic": {"attributes": {"cores": {"int": value}}}})
    (new,) = upgrade_object(old).objects
    assert schema_problems(new) == []


def test_it_refuses_an_int64_field_outside_int64_anywhere_in_the_object() -> None:
    old = slice_("v1beta1", {"name": "gpu-0"})
    (new,) = upgrade_object(old).objects
    new["spec"]["pool"]["generation"] = 2**64
    assert [p.path for p in schema_problems(new)] == ["spec.pool.generation"]
