"""ResourceSlice rules and limits (dra-api.md §2): pool and node selection, devices, attributes, capacities,
taints, shared counters and their consumption; each bad slice names the field and the rule."""

from __future__ import annotations

import pytest

from simcluster.validation import validate
from tests.simcluster.validation_samples import (
    LABEL_MSG,
    SLICE,
    SUBDOMAIN_MSG,
    Case,
    a_slice,
    assert_rejected,
    devices,
    do_all,
    many_devices,
    set_path,
)

CASES = [
    Case(
        "slice driver underscore",
        SLICE,
        set_path("spec.driver", "gpu_example.com"),
        "spec.driver",
        "FieldValueInvalid",
        SUBDOMAIN_MSG,
    ),
    Case(
        "slice driver too long",
        SLICE,
        set_path("spec.driver", "g" * 64 + ".com"),
        "spec.driver",
        "FieldValueTooLong",
        "Too long: may not be more than 63 bytes",
    ),
    Case(
        "slice driver missing",
        SLICE,
        set_path("spec.driver", ...),
        "spec.driver",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "slice pool name bad part",
        SLICE,
        set_path("spec.pool.name", "node-1//x"),
        "spec.pool.name",
        "FieldValueInvalid",
        SUBDOMAIN_MSG,
    ),
    Case(
        "slice pool count zero",
        SLICE,
        set_path("spec.pool.resourceSliceCount", 0),
        "spec.pool.resourceSliceCount",
        "FieldValueInvalid",
        "Invalid value: 0: must be greater than zero",
    ),
    Case(
        "slice no node selection",
        SLICE,
        set_path("spec.nodeName", ...),
        "spec",
        "FieldValueRequired",
        "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
    ),
    Case(
        "slice two node selections",
        SLICE,
        set_path("spec.allNodes", True),
        "spec",
        "FieldValueInvalid",
        "but multiple fields are set",
    ),
    Case(
        "slice node selector two terms",
        SLICE,
        do_all(
            set_path("spec.nodeName", ...), set_path("spec.nodeSelector", {"nodeSelectorTerms": [{}, {}]})
        ),
        "spec.nodeSelector.nodeSelectorTerms",
        "FieldValueInvalid",
        "must have exactly one node selector term",
    ),
    Case(
        "slice device name not a label",
        SLICE,
        set_path("spec.devices.0.name", "gpu_0"),
        "spec.devices[0].name",
        "FieldValueInvalid",
        LABEL_MSG,
    ),
    Case(
        "slice device names duplicate",
        SLICE,
        set_path("spec.devices.1.name", "gpu-0"),
        "spec.devices[1]",
        "FieldValueDuplicate",
        'Duplicate value: "gpu-0"',
    ),
    Case(
        "slice 129 devices",
        SLICE,
        many_devices(129),
        "spec.devices",
        "FieldValueTooMany",
        "Too many: 129: must have at most 128 items",
    ),
    Case(
        "slice 65 devices with taints",
        SLICE,
        many_devices(65, tainted=True),
        "spec.devices",
        "FieldValueTooMany",
        "Too many: 65: must have at most 64 items",
    ),
    Case(
        "attribute name not an identifier",
        SLICE,
        set_path("spec.devices.0.attributes.bad-name", {"int": 1}),
        "spec.devices[0].attributes",
        "FieldValueInvalid",
        "a valid C identifier must start with alphabetic character",
    ),
    Case(
        "attribute name too long",
        SLICE,
        set_path("spec.devices.0.attributes." + "a" * 33, {"int": 1}),
        "spec.devices[0].attributes",
        "FieldValueTooLong",
        "may not be more than 32 bytes",
    ),
    Case(
        "attribute domain bad",
        SLICE,
        lambda o: devices(o)[0]["attributes"].update({"exa_mple.com/x": {"int": 1}}),
        "spec.devices[0].attributes",
        "FieldValueInvalid",
        SUBDOMAIN_MSG,
    ),
    Case(
        "attribute two values",
        SLICE,
        set_path("spec.devices.0.attributes.model", {"string": "h200", "int": 1}),
        "spec.devices[0].attributes[model]",
        "FieldValueInvalid",
        "exactly one value must be specified",
    ),
    Case(
        "attribute no value",
        SLICE,
        set_path("spec.devices.0.attributes.model", {}),
        "spec.devices[0].attributes[model]",
        "FieldValueInvalid",
        'Invalid value: "": exactly one value must be specified',
    ),
    Case(
        "attribute string too long",
        SLICE,
        set_path("spec.devices.0.attributes.model", {"string": "m" * 65}),
        "spec.devices[0].attributes[model].string",
        "FieldValueTooLong",
        "may not be more than 64 bytes",
    ),
    Case(
        "attribute version not semver",
        SLICE,
        set_path("spec.devices.0.attributes.driverVersion", {"version": "1.2"}),
        "spec.devices[0].attributes[driverVersion].version",
        "FieldValueInvalid",
        "semver.org spec 2.0.0",
    ),
    Case(
        "attributes and capacities over 32",
        SLICE,
        set_path("spec.devices.0.attributes", {f"a{i}": {"int": i} for i in range(32)}),
        "spec.devices[0]",
        "FieldValueInvalid",
        "Invalid value: 33: the total number of attributes and capacities must not exceed 32",
    ),
    Case(
        "attribute values over 48",
        SLICE,
        set_path("spec.devices.0.attributes", {f"l{i}": {"ints": list(range(10))} for i in range(5)}),
        "spec.devices[0]",
        "FieldValueInvalid",
        "Invalid value: 50: the total number of attribute values must not exceed 48",
    ),
    Case(
        "capacity quantity malformed",
        SLICE,
        set_path("spec.devices.0.capacity.memory.value", "141 GiB"),
        "spec.devices[0].capacity[memory].value",
        "FieldValueInvalid",
        "quantities must match the regular expression",
    ),
    Case(
        "device taint effect unknown",
        SLICE,
        set_path("spec.devices.0.taints", [{"key": "example.com/ecc", "effect": "PreferNoSchedule"}]),
        "spec.devices[0].taints[0].effect",
        "FieldValueNotSupported",
        'Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"',
    ),
    Case(
        "device taint key bad",
        SLICE,
        set_path("spec.devices.0.taints", [{"key": "example.com/-ecc", "effect": "NoSchedule"}]),
        "spec.devices[0].taints[0].key",
        "FieldValueInvalid",
        "name part must consist of alphanumeric characters",
    ),
    Case(
        "device taint value bad",
        SLICE,
        set_path("spec.devices.0.taints", [{"key": "ecc", "value": "not ok", "effect": "NoSchedule"}]),
        "spec.devices[0].taints[0].value",
        "FieldValueInvalid",
        "a valid label must be an empty string",
    ),
    Case(
        "device 17 taints",
        SLICE,
        set_path("spec.devices.0.taints", [{"key": f"k{i}", "effect": "None"} for i in range(17)]),
        "spec.devices[0].taints",
        "FieldValueTooMany",
        "Too many: 17: must have at most 16 items",
    ),
    Case(
        "shared counters with devices",
        SLICE,
        set_path(
            "spec.sharedCounters", [{"name": "gpu-0-counters", "counters": {"memory": {"value": "80Gi"}}}]
        ),
        "spec",
        "FieldValueInvalid",
        'Invalid value: "": only one of `sharedCounters` or `devices` is allowed',
    ),
    Case(
        "nine counter sets",
        SLICE,
        do_all(
            set_path("spec.devices", ...),
            set_path(
                "spec.sharedCounters",
                [{"name": f"set-{i}", "counters": {"mem": {"value": "1"}}} for i in range(9)],
            ),
        ),
        "spec.sharedCounters",
        "FieldValueTooMany",
        "Too many: 9: must have at most 8 items",
    ),
    Case(
        "counter set names duplicate",
        SLICE,
        do_all(
            set_path("spec.devices", ...),
            set_path("spec.sharedCounters", [{"name": "s", "counters": {"mem": {"value": "1"}}}] * 2),
        ),
        "spec.sharedCounters[1]",
        "FieldValueDuplicate",
        'Duplicate value: "s"',
    ),
    Case(
        "three consumesCounters",
        SLICE,
        set_path(
            "spec.devices.0.consumesCounters",
            [{"counterSet": f"s{i}", "counters": {"mem": {"value": "1"}}} for i in range(3)],
        ),
        "spec.devices[0].consumesCounters",
        "FieldValueTooMany",
        "Too many: 3: must have at most 2 items",
    ),
    Case(
        "33 consumed counters",
        SLICE,
        set_path(
            "spec.devices.0.consumesCounters",
            [{"counterSet": "s", "counters": {f"c{i}": {"value": "1"} for i in range(33)}}],
        ),
        "spec.devices[0].consumesCounters[0].counters",
        "FieldValueTooMany",
        "Too many: 33: must have at most 32 items",
    ),
    Case(
        "device node name without per-device selection",
        SLICE,
        set_path("spec.devices.0.nodeName", "node-1"),
        "spec.devices[0]",
        "FieldValueInvalid",
        "can only be set if `perDeviceNodeSelection` is set to true",
    ),
    Case(
        "unknown device field",
        SLICE,
        set_path("spec.devices.0.colour", "blue"),
        "spec.devices[0].colour",
        "FieldValueInvalid",
        'unknown field "spec.devices[0].colour"',
    ),
    Case(
        "pool generation wrong type",
        SLICE,
        set_path("spec.pool.generation", "three"),
        "spec.pool.generation",
        "FieldValueTypeInvalid",
        "must be of type integer",
    ),
    Case(
        "slice version attribute with a trailing newline",
        SLICE,
        set_path("spec.devices.0.attributes.driverVersion", {"version": "1.2.3\n"}),
        "spec.devices[0].attributes[driverVersion].version",
        "FieldValueInvalid",
        "semver",
    ),
    Case(
        "slice empty node name",
        SLICE,
        do_all(set_path("spec.nodeName", ""), set_path("spec.allNodes", True)),
        "spec.nodeName",
        "FieldValueInvalid",
        "must be either unset or set to a non-empty string",
    ),
    Case(
        "slice allNodes false",
        SLICE,
        set_path("spec.allNodes", False),
        "spec.allNodes",
        "FieldValueInvalid",
        "must be either unset or set to true",
    ),
    Case(
        "binding conditions without failure conditions",
        SLICE,
        set_path("spec.devices.0.bindingConditions", ["example.com/ready"]),
        "spec.devices[0].bindingFailureConditions",
        "FieldValueInvalid",
        "bindingFailureConditions are required to use bindingConditions",
    ),
    Case(
        "binding conditions overlap",
        SLICE,
        do_all(
            set_path("spec.devices.0.bindingConditions", ["ready"]),
            set_path("spec.devices.0.bindingFailureConditions", ["ready"]),
        ),
        "spec.devices[0].bindingFailureConditions[0]",
        "FieldValueInvalid",
        "must not overlap with bindingConditions",
    ),
    Case(
        "five binding conditions",
        SLICE,
        do_all(
            set_path("spec.devices.0.bindingConditions", [f"c{i}" for i in range(5)]),
            set_path("spec.devices.0.bindingFailureConditions", ["failed"]),
        ),
        "spec.devices[0].bindingConditions",
        "FieldValueTooMany",
        "Too many: 5: must have at most 4 items",
    ),
    Case(
        "partition type attribute without consumers",
        SLICE,
        set_path("spec.partitionTypeAttribute", "gpu.example.com/profile"),
        "spec.partitionTypeAttribute",
        "FieldValueInvalid",
        "may only be set on a slice which declares devices that consume counters",
    ),
    Case(
        "partition type attribute missing on a device",
        SLICE,
        do_all(
            set_path("spec.partitionTypeAttribute", "gpu.example.com/profile"),
            set_path(
                "spec.devices.0.consumesCounters", [{"counterSet": "s", "counters": {"mem": {"value": "1"}}}]
            ),
        ),
        "spec.devices[0].attributes[gpu.example.com/profile]",
        "FieldValueRequired",
        "so it must be set",
    ),
    Case(
        "skip prepare without unprepare",
        SLICE,
        set_path("spec.skipNodeOperations", ["NodePrepareResources"]),
        "spec.skipNodeOperations",
        "FieldValueInvalid",
        "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped",
    ),
    Case(
        "node allocatable extended resource",
        SLICE,
        set_path(
            "spec.devices.0.nodeAllocatableResources", {"example.com/foo": {"overhead": {"perPod": "1"}}}
        ),
        "spec.devices[0].nodeAllocatableResources[example.com/foo]",
        "FieldValueInvalid",
        "must be a node allocatable resource name",
    ),
    Case(
        "node allocatable entry empty",
        SLICE,
        set_path("spec.devices.0.nodeAllocatableResources", {"memory": {}}),
        "spec.devices[0].nodeAllocatableResources[memory]",
        "FieldValueRequired",
        "at least one of mapping or overhead must be set",
    ),
    Case(
        "node allocatable mapping both kinds",
        SLICE,
        set_path(
            "spec.devices.0.nodeAllocatableResources",
            {
                "cpu": {
                    "mapping": {"deviceMultiplier": "8", "capacityKey": "memory", "capacityMultiplier": "1"}
                }
            },
        ),
        "spec.devices[0].nodeAllocatableResources[cpu].mapping",
        "FieldValueInvalid",
        "but both are set",
    ),
    Case(
        "node allocatable capacity key unknown",
        SLICE,
        set_path(
            "spec.devices.0.nodeAllocatableResources",
            {"cpu": {"mapping": {"capacityKey": "cores", "capacityMultiplier": "2"}}},
        ),
        "spec.devices[0].nodeAllocatableResources[cpu].mapping.capacityKey",
        "FieldValueNotFound",
        'Not found: "cores"',
    ),
    Case(
        "node allocatable multiplier without key",
        SLICE,
        set_path(
            "spec.devices.0.nodeAllocatableResources", {"cpu": {"mapping": {"capacityMultiplier": "2"}}}
        ),
        "spec.devices[0].nodeAllocatableResources[cpu].mapping.capacityKey",
        "FieldValueRequired",
        "capacityKey is required when capacityMultiplier is set",
    ),
    Case(
        "node allocatable negative overhead",
        SLICE,
        set_path(
            "spec.devices.0.nodeAllocatableResources", {"memory": {"overhead": {"perContainer": "-1Gi"}}}
        ),
        "spec.devices[0].nodeAllocatableResources[memory].overhead.perContainer",
        "FieldValueInvalid",
        "must be non-negative",
    ),
    Case(
        "compatibility groups repeated",
        SLICE,
        set_path(
            "spec.devices.0.consumesCounters",
            [{"counterSet": "s", "counters": {"mem": {"value": "1"}}, "compatibilityGroups": ["mig", "mig"]}],
        ),
        "spec.devices[0].consumesCounters[0].compatibilityGroups[1]",
        "FieldValueDuplicate",
        "Duplicate value",
    ),
    Case(
        "attribute name with two slashes",
        SLICE,
        lambda o: devices(o)[0]["attributes"].update({"a.com/b/c": {"int": 1}}),
        "spec.devices[0].attributes",
        "FieldValueInvalid",
        "must not contain more than one slash",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_it_rejects_the_bad_slice_naming_field_and_rule(case: Case) -> None:
    assert_rejected(case)


def test_it_accepts_a_full_slice_of_128_plain_devices() -> None:
    obj = a_slice()
    many_devices(128)(obj)
    assert validate(SLICE, obj, None)[0] == []


def test_it_accepts_64_devices_with_taints() -> None:
    obj = a_slice()
    many_devices(64, tainted=True)(obj)
    assert validate(SLICE, obj, None)[0] == []


def test_it_accepts_per_device_node_selection() -> None:
    obj = a_slice()
    del obj["spec"]["nodeName"]
    obj["spec"]["perDeviceNodeSelection"] = True
    for device in devices(obj):
        device["nodeName"] = "node-1"
    assert validate(SLICE, obj, None)[0] == []


def test_it_requires_a_node_choice_per_device_with_per_device_selection() -> None:
    obj = a_slice()
    del obj["spec"]["nodeName"]
    obj["spec"]["perDeviceNodeSelection"] = True
    causes, _ = validate(SLICE, obj, None)
    assert {c["field"] for c in causes} == {f"spec.devices[{i}]" for i in range(4)}


def test_it_accepts_a_counter_set_slice_without_devices() -> None:
    obj = a_slice()
    del obj["spec"]["devices"]
    obj["spec"]["sharedCounters"] = [{"name": "gpu-0-counters", "counters": {"memory": {"value": "80Gi"}}}]
    assert validate(SLICE, obj, None)[0] == []


def test_it_accepts_the_1_37_alpha_fields_of_a_partitioned_gpu() -> None:
    obj = a_slice()
    first = devices(obj)[0]
    first["consumesCounters"] = [
        {
            "counterSet": "gpu-0",
            "counters": {"mem": {"value": "4Gi"}},
            "compatibilityGroups": ["mig", "shared"],
        }
    ]
    first["nodeAllocatableResources"] = {
        "memory": {"overhead": {"perPod": "512Mi", "perContainer": "256Mi"}},
        "cpu": {"mapping": {"deviceMultiplier": "500m"}},
        "hugepages-2Mi": {"overhead": {"perPod": "2Mi"}},
    }
    first["allowMultipleAllocations"] = True
    first["capacity"] = {
        "bandwidth": {
            "value": "1",
            "requestPolicy": {"default": "200m", "validRange": {"min": "200m", "max": "1", "step": "100m"}},
        }
    }
    obj["spec"]["skipNodeOperations"] = ["*"]
    assert validate(SLICE, obj, None)[0] == []
