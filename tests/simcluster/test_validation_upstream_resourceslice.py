"""Upstream's TestValidateResourceSlice and TestValidateResourceSliceUpdate tables
(validation_resourceslice_test.go, stored version 00cb9913), case by case through a running simcluster
(updates through `validate`).

simcluster runs with the 1.37 defaults, which keep DRAConsumableCapacity and DRAFractionalCapacityRange on;
it judges the alpha fields (nodeAllocatableResources, partitionTypeAttribute, skipNodeOperations) as
upstream does with their gates on. Left out: resource-version (see `metadata_cases`), consumable-capacity-
integer, consumable-capacity-valid-values-integer(-okay-if-stored) and consumable-capacity-valid-range-integer
(DRAFractionalCapacityRange off). A value upstream shows
as a Go struct or slice (%#v) is not compared (ANY)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from simcluster.validation import validate
from tests.simcluster.upstream_validation import (
    ANY,
    BAD_NAME,
    DNS_LABEL,
    LABEL_VALUE,
    NAME_PART,
    SUBDOMAIN,
    Case,
    Cause,
    assert_answers,
    duplicate,
    forbidden,
    invalid,
    metadata_cases,
    not_supported,
    required,
    same_causes,
    too_long,
    too_many,
)
from tests.simcluster.validation_samples import SLICE, Obj

DRIVER = "test.example.com"
C_IDENTIFIER = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is "
    "'[A-Za-z_][A-Za-z0-9_]*')"
)
NODE_CHOICE = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
DEVICE_NODE_CHOICE = (
    "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set "
    "to true in the ResourceSlice spec"
)
EFFECTS = ["NoExecute", "NoSchedule", "None"]
INT64_MAX = 2**63 - 1
POOL_NAME_MAX = 253
DEVICES = "spec.devices"


def attributes() -> Obj:
    return {
        "int": {"int": 42},
        "string": {"string": "hello world"},
        "version": {"version": "1.2.3"},
        "bool": {"bool": True},
    }


def a_slice(name: str = "foo", node: str | None = "foo", driver: str = DRIVER, devices: int = 1) -> Obj:
    spec: Obj = {"driver": driver, "pool": {"name": node, "resourceSliceCount": 1, "generation": 0}}
    if node is not None:
        spec["nodeName"] = node
    spec["devices"] = [
        {"name": f"device-{d}", "attributes": attributes(), "capacity": {"memory": {"value": "1Gi"}}}
        for d in range(devices)
    ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": spec,
    }


def counters(count: int = 1) -> Obj:
    if count == 1:
        return {"memory": {"value": "1Gi"}}
    return {f"memory-{i}": {"value": "1Gi"} for i in range(count)}


def consumes(count: int) -> list[Obj]:
    return [{"counterSet": f"counterset-{i}", "counters": counters()} for i in range(count)]


def counter_sets(count: int) -> list[Obj]:
    return [{"name": f"counterset-{i}", "counters": counters()} for i in range(count)]


def with_counter_sets(count: int = 1) -> Obj:
    obj = a_slice()
    del obj["spec"]["devices"]
    obj["spec"]["sharedCounters"] = counter_sets(count)
    return obj


def built(base: Callable[[], Obj], *edits: Callable[[Obj], Any]) -> Callable[[], Obj]:
    def build() -> Obj:
        obj = base()
        for edit in edits:
            edit(obj)
        return obj

    return build


def spec(**values: Any) -> Callable[[Obj], None]:
    def edit(obj: Obj) -> None:
        for key, value in values.items():
            if value is None:
                obj["spec"].pop(key, None)
            else:
                obj["spec"][key] = copy.deepcopy(value)

    return edit


def device(index: int, **values: Any) -> Callable[[Obj], None]:
    def edit(obj: Obj) -> None:
        for key, value in values.items():
            if value is None:
                obj["spec"]["devices"][index].pop(key, None)
            else:
                obj["spec"]["devices"][index][key] = copy.deepcopy(value)

    return edit


def every_device(**values: Any) -> Callable[[Obj], None]:
    def edit(obj: Obj) -> None:
        for item in obj["spec"]["devices"]:
            item.update(copy.deepcopy(values))

    return edit


def extra_attribute(name: str, value: Obj) -> Callable[[Obj], None]:
    def edit(obj: Obj) -> None:
        for item in obj["spec"]["devices"]:
            item["attributes"][name] = copy.deepcopy(value)

    return edit


def first_attribute(name: str, value: Obj) -> Callable[[Obj], None]:
    def edit(obj: Obj) -> None:
        obj["spec"]["devices"][0]["attributes"][name] = copy.deepcopy(value)

    return edit


def taints(*items: Obj) -> list[Obj]:
    return list(items)


NO_EXECUTE = {"key": "example.com/taint", "effect": "NoExecute"}


def attribute_values(limit: int) -> Obj:
    """31 list attributes holding ``limit`` values in all (upstream's maxStringAttributeValuesInList)."""
    values: Obj = {}
    for i in range(31):
        values[f"list_attr_{i}"] = {"strings": ["x"] * (limit - 30 if i == 0 else 1)}
    return values


def values_case() -> Obj:
    obj = a_slice(devices=14)
    extras = [
        {"int": 1},
        {"bool": True},
        {"string": "x"},
        {"version": "1.0.0"},
        {"ints": [1]},
        {"bools": [True]},
        {"strings": ["extra"]},
        {"versions": ["1.0.0"]},
    ]
    for index, item in enumerate(obj["spec"]["devices"]):
        item.pop("capacity")
        item["attributes"] = attribute_values(48)
        if 1 <= index <= 8:
            item["attributes"]["extra_attr"] = extras[index - 1]
    obj["spec"]["devices"][9]["attributes"] = {
        "mixed_list_attrs": {"strings": ["x"] * 46, "ints": [1], "bools": [True], "versions": ["1.0.0"]}
    }
    for index, extra in zip(
        range(10, 14),
        [
            {"bools": [True, False]},
            {"ints": [1, 2]},
            {"strings": ["a", "b"]},
            {"versions": ["1.0.0", "1.0.1"]},
        ],
        strict=True,
    ):
        obj["spec"]["devices"][index]["attributes"] = {**attribute_values(47), "extra_attr": extra}
    return obj


def consumable(devices: int = 12) -> Obj:
    obj = a_slice(devices=devices)
    for item in obj["spec"]["devices"]:
        item.pop("attributes")
        item["allowMultipleAllocations"] = True
        item["capacity"] = {
            "a": {"value": "100", "requestPolicy": {"default": "10", "validValues": ["5", "10", "100"]}}
        }
    return obj


def fractional_capacities() -> Obj:
    obj = consumable()
    caps = [item["capacity"]["a"] for item in obj["spec"]["devices"]]
    caps[1]["value"] = "-1"
    caps[2]["requestPolicy"]["default"] = "-1"
    del caps[3]["requestPolicy"]["validValues"]
    caps[4]["requestPolicy"]["validRange"] = {"min": "10"}
    caps[5]["requestPolicy"] = {"default": "10", "validRange": {"min": "1"}}
    caps[6]["requestPolicy"] = {"default": "10.1", "validValues": ["5.1", "10.1", "100"]}
    caps[7]["requestPolicy"] = {"default": "1.05", "validRange": {"min": "1.1"}}
    caps[8]["requestPolicy"]["validValues"][0] = "9.9"
    caps[9].update(
        value=str(INT64_MAX),
        requestPolicy={
            "default": str(INT64_MAX),
            "validRange": {"min": "0", "step": "1", "max": str(INT64_MAX)},
        },
    )
    max_milli = f"{INT64_MAX}m"
    caps[10].update(
        value=max_milli,
        requestPolicy={"default": max_milli, "validRange": {"min": "0", "step": "1m", "max": max_milli}},
    )
    caps[11].update(
        value=str(INT64_MAX),
        requestPolicy={
            "default": str(INT64_MAX),
            "validRange": {"min": "0", "step": "1m", "max": str(INT64_MAX)},
        },
    )
    return obj


def capacity_path(index: int) -> str:
    return f"{DEVICES}[{index}].capacity[a].requestPolicy"


def node_allocatable(resources: Obj) -> Callable[[], Obj]:
    def build() -> Obj:
        obj = a_slice()
        item = obj["spec"]["devices"][0]
        item["capacity"] = {
            "dra.example.com/cpu": {"value": "100"},
            "dra.example.com/memory": {"value": "100Gi"},
        }
        item["nodeAllocatableResources"] = copy.deepcopy(resources)
        return obj

    return build


MAPPING_CPU = {"mapping": {"capacityKey": "dra.example.com/cpu", "capacityMultiplier": "1"}}
NAR = f"{DEVICES}[0].nodeAllocatableResources"
BAD_ATTRIBUTE = f"{DEVICES}[1].attributes"

CASES = [
    Case("good", lambda: a_slice(devices=128)),
    Case("too-large", lambda: a_slice(driver="foo", devices=129), [too_many(DEVICES, 129, 128)]),
    Case("good-taints", built(lambda: a_slice(driver="foo", devices=64), every_device(taints=[NO_EXECUTE]))),
    Case(
        "too-large-taints",
        built(lambda: a_slice(driver="foo", devices=65), every_device(taints=[NO_EXECUTE])),
        [too_many(DEVICES, 65, 64)],
    ),
    Case(
        "good-partition-type-attribute",
        built(
            a_slice, device(0, consumesCounters=consumes(1)), spec(partitionTypeAttribute=f"{DRIVER}/string")
        ),
    ),
    Case(
        "good-partition-type-attribute-with-exempt-device",
        built(
            lambda: a_slice(devices=2),
            device(0, consumesCounters=consumes(1)),
            device(1, attributes=None),
            spec(partitionTypeAttribute=f"{DRIVER}/string"),
        ),
    ),
    Case(
        "partition-type-attribute-without-partitionable-devices",
        built(a_slice, spec(partitionTypeAttribute=f"{DRIVER}/string")),
        [
            invalid(
                "spec.partitionTypeAttribute",
                f"{DRIVER}/string",
                "may only be set on a slice which declares devices that consume counters",
            )
        ],
    ),
    Case(
        "partition-type-attribute-on-shared-counters-slice",
        built(with_counter_sets, spec(partitionTypeAttribute=f"{DRIVER}/string")),
        [
            invalid(
                "spec.partitionTypeAttribute",
                f"{DRIVER}/string",
                "may only be set on a slice which declares devices that consume counters",
            )
        ],
    ),
    Case(
        "partition-type-attribute-missing-on-partitionable-device",
        built(
            a_slice,
            device(0, consumesCounters=consumes(1)),
            spec(partitionTypeAttribute="gpu.example.com/profile"),
        ),
        [
            required(
                f"{DEVICES}[0].attributes[gpu.example.com/profile]",
                "device consumes counters and `partitionTypeAttribute` names this attribute, so it must be set",
            )
        ],
    ),
    Case(
        "partition-type-attribute-not-a-string",
        built(a_slice, device(0, consumesCounters=consumes(1)), spec(partitionTypeAttribute=f"{DRIVER}/int")),
        [
            invalid(
                f"{DEVICES}[0].attributes[{DRIVER}/int]",
                ANY,
                "must be a string value because `partitionTypeAttribute` names this attribute",
            )
        ],
    ),
    Case(
        "partition-type-attribute-explicit-form-wins",
        built(
            a_slice,
            device(0, consumesCounters=consumes(1)),
            first_attribute(f"{DRIVER}/string", {"int": 1}),
            spec(partitionTypeAttribute=f"{DRIVER}/string"),
        ),
        [
            invalid(
                f"{DEVICES}[0].attributes[{DRIVER}/string]",
                ANY,
                "must be a string value because `partitionTypeAttribute` names this attribute",
            )
        ],
    ),
    *metadata_cases("good-metadata", a_slice)[1:],
    Case(
        "bad-nodename",
        lambda: a_slice(node=BAD_NAME),
        [invalid("spec.pool.name", BAD_NAME, SUBDOMAIN), invalid("spec.nodeName", BAD_NAME, SUBDOMAIN)],
    ),
    Case(
        "bad-multi-pool-name",
        lambda: a_slice(node=f"{BAD_NAME}/{BAD_NAME}"),
        [
            invalid("spec.pool.name", BAD_NAME, SUBDOMAIN),
            invalid("spec.pool.name", BAD_NAME, SUBDOMAIN),
            invalid("spec.nodeName", f"{BAD_NAME}/{BAD_NAME}", SUBDOMAIN),
        ],
    ),
    Case("good-pool-name", built(a_slice, spec(pool={"name": "x" * POOL_NAME_MAX, "resourceSliceCount": 1}))),
    Case(
        "bad-pool",
        built(
            a_slice,
            spec(
                pool={"name": "x/" * (POOL_NAME_MAX // 2) + "xy", "resourceSliceCount": 0, "generation": -1}
            ),
        ),
        [
            too_long("spec.pool.name", POOL_NAME_MAX),
            invalid("spec.pool.resourceSliceCount", 0, "must be greater than zero"),
            invalid("spec.pool.generation", -1, "must be greater than or equal to zero"),
        ],
    ),
    Case(
        "missing-pool-name",
        built(a_slice, spec(pool={"name": "", "resourceSliceCount": 1})),
        [required("spec.pool.name")],
    ),
    Case(
        "bad-empty-node-selector",
        built(a_slice, spec(nodeName=None, nodeSelector={})),
        [
            required("spec.nodeSelector.nodeSelectorTerms", "must have at least one node selector term"),
            invalid("spec.nodeSelector.nodeSelectorTerms", ANY, "must have exactly one node selector term"),
        ],
    ),
    Case(
        "bad-node-selection",
        built(
            a_slice,
            spec(
                nodeName="worker",
                nodeSelector={
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker"]}]}
                    ]
                },
            ),
        ),
        [invalid("spec", "{`nodeName`, `nodeSelector`}", NODE_CHOICE + ", but multiple fields are set")],
    ),
    Case(
        "bad-node-selection-all-nodes",
        built(a_slice, spec(nodeName="worker", allNodes=True)),
        [invalid("spec", "{`nodeName`, `allNodes`}", NODE_CHOICE + ", but multiple fields are set")],
    ),
    Case("empty-node-selection", built(a_slice, spec(nodeName=None)), [required("spec", NODE_CHOICE)]),
    Case("bad-drivername", lambda: a_slice(driver=BAD_NAME), [invalid("spec.driver", BAD_NAME, SUBDOMAIN)]),
    Case(
        "both-shared-counters-and-devices",
        built(a_slice, spec(sharedCounters=[{"name": "counterset", "counters": counters()}])),
        [invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed")],
    ),
    Case(
        "bad-devices",
        built(lambda: a_slice(driver="foo", devices=3), device(1, name=BAD_NAME)),
        [invalid(f"{DEVICES}[1].name", BAD_NAME, DNS_LABEL)],
    ),
    Case(
        "bad-attribute",
        built(
            lambda: a_slice(driver="foo", devices=5),
            device(1, attributes={BAD_NAME: {}}),
            device(2, attributes={"foo": {"string": "x", "version": "1.2.3"}}),
            device(3, attributes={"foo": {"version": "x" * 65}}),
            device(4, attributes={"foo": {"string": "x" * 65}}),
        ),
        [
            invalid(BAD_ATTRIBUTE, BAD_NAME, C_IDENTIFIER),
            invalid(f"{BAD_ATTRIBUTE}[{BAD_NAME}]", "", "exactly one value must be specified"),
            invalid(f"{DEVICES}[2].attributes[foo]", ANY, "exactly one value must be specified"),
            invalid(
                f"{DEVICES}[3].attributes[foo].version",
                "x" * 65,
                "must be a string compatible with semver.org spec 2.0.0",
            ),
            too_long(f"{DEVICES}[3].attributes[foo].version", 64),
            too_long(f"{DEVICES}[4].attributes[foo].string", 64),
        ],
    ),
    Case(
        "good-list-attribute",
        built(
            lambda: a_slice(driver="foo", devices=4),
            device(0, attributes={"foo": {"bools": [True]}}),
            device(1, attributes={"foo": {"ints": [1]}}),
            device(2, attributes={"foo": {"strings": ["x"]}}),
            device(3, attributes={"foo": {"versions": ["1.2.3"]}}),
        ),
    ),
    Case(
        "bad-list-attribute",
        built(
            lambda: a_slice(driver="foo", devices=8),
            device(0, attributes={"foo": {"ints": [1], "bools": [True]}}),
            device(1, attributes={"foo": {"ints": [1], "bools": [True], "strings": []}}),
            device(2, attributes={"foo": {"strings": ["x" * 65]}}),
            device(3, attributes={"foo": {"versions": ["x" * 65]}}),
            device(4, attributes={"foo": {"bools": []}}),
            device(5, attributes={"foo": {"ints": []}}),
            device(6, attributes={"foo": {"strings": []}}),
            device(7, attributes={"foo": {"versions": []}}),
        ),
        [
            invalid(f"{DEVICES}[0].attributes[foo]", ANY, "exactly one value must be specified"),
            invalid(f"{DEVICES}[1].attributes[foo].strings", ANY, "must not be empty if specified"),
            invalid(f"{DEVICES}[1].attributes[foo]", ANY, "exactly one value must be specified"),
            too_long(f"{DEVICES}[2].attributes[foo].strings[0]", 64),
            invalid(
                f"{DEVICES}[3].attributes[foo].versions[0]",
                "x" * 65,
                "must be a string compatible with semver.org spec 2.0.0",
            ),
            too_long(f"{DEVICES}[3].attributes[foo].versions[0]", 64),
            invalid(f"{DEVICES}[4].attributes[foo].bools", ANY, "must not be empty if specified"),
            invalid(f"{DEVICES}[5].attributes[foo].ints", ANY, "must not be empty if specified"),
            invalid(f"{DEVICES}[6].attributes[foo].strings", ANY, "must not be empty if specified"),
            invalid(f"{DEVICES}[7].attributes[foo].versions", ANY, "must not be empty if specified"),
        ],
    ),
    *(
        case
        for name, value in (
            ("int", {"ints": [1, 2, 3]}),
            ("bool", {"bools": [True, False, True]}),
            ("string", {"strings": ["a", "b", "c"]}),
            ("version", {"versions": ["1.0.0", "2.0.0", "3.0.0"]}),
        )
        for case in (
            Case(
                f"max-devices-with-list-of-{name}-attributes",
                built(lambda: a_slice(driver="foo", devices=64), extra_attribute(f"{name}s", value)),
            ),
            Case(
                f"too-many-devices-with-list-of-{name}-attributes",
                built(lambda: a_slice(driver="foo", devices=65), first_attribute(f"{name}s", value)),
                [too_many(DEVICES, 65, 64)],
            ),
        )
    ),
    Case(
        "good-attribute-names",
        built(
            lambda: a_slice(driver="foo", devices=2),
            device(1, attributes={"x" * 32: {"string": "y"}, "x" * 63 + "/" + "y" * 32: {"string": "z"}}),
        ),
    ),
    Case(
        "bad-attribute-c-identifier",
        built(lambda: a_slice(driver="foo", devices=2), device(1, attributes={"." * 33: {"string": "y"}})),
        [too_long(BAD_ATTRIBUTE, 32), invalid(BAD_ATTRIBUTE, "." * 33, C_IDENTIFIER)],
    ),
    Case(
        "bad-attribute-domain",
        built(
            lambda: a_slice(driver="foo", devices=2), device(1, attributes={"_" * 64 + "/y": {"string": "z"}})
        ),
        [too_long(BAD_ATTRIBUTE, 63), invalid(BAD_ATTRIBUTE, "_" * 64, SUBDOMAIN)],
    ),
    Case(
        "bad-key-too-long",
        built(
            lambda: a_slice(driver="foo", devices=2),
            device(1, attributes={"x" * 64 + "/" + "y" * 33: {"string": "z"}}),
        ),
        [too_long(BAD_ATTRIBUTE, 63), too_long(BAD_ATTRIBUTE, 32)],
    ),
    Case(
        "bad-attribute-empty-domain-and-c-identifier",
        built(lambda: a_slice(driver="foo", devices=2), device(1, attributes={"/": {"string": "z"}})),
        [
            invalid(BAD_ATTRIBUTE, "", "the domain must not be empty"),
            invalid(BAD_ATTRIBUTE, "", "the name must not be empty"),
        ],
    ),
    Case(
        "combined-attributes-capacity-length",
        built(
            lambda: a_slice(driver="foo", devices=5),
            device(0, attributes={f"attr_{i}": {"string": "x"} for i in range(32)}, capacity=None),
            device(1, attributes={}, capacity={f"cap_{i}": {"value": "1Gi"} for i in range(32)}),
            device(
                3,
                attributes={f"attr_{i}": {"string": "x"} for i in range(32)},
                capacity={"cap": {"value": "1Gi"}},
            ),
        ),
        [invalid(f"{DEVICES}[3]", 33, "the total number of attributes and capacities must not exceed 32")],
    ),
    Case(
        "max-attribute-values-with-list",
        values_case,
        [
            *(
                invalid(f"{DEVICES}[{i}]", 49, "the total number of attribute values must not exceed 48")
                for i in range(1, 14)
            ),
            invalid(f"{DEVICES}[9].attributes[mixed_list_attrs]", ANY, "exactly one value must be specified"),
        ],
    ),
    Case(
        "forbidden-request-policy-on-single-allocatable-capacity",
        built(
            lambda: a_slice(driver="foo", devices=2),
            device(
                1,
                capacity={
                    "cap": {"value": "1Gi", "requestPolicy": {"default": "1Mi", "validRange": {"min": "1Mi"}}}
                },
            ),
        ),
        [forbidden(f"{DEVICES}[1].capacity[cap].requestPolicy", "allowMultipleAllocations must be true")],
    ),
    *(
        Case(
            f"invalid-request-policy-{name}-step",
            built(
                lambda: a_slice(driver="foo", devices=2),
                device(
                    1,
                    allowMultipleAllocations=True,
                    capacity={
                        "cap": {
                            "value": "1Gi",
                            "requestPolicy": {
                                "default": "10Mi",
                                "validRange": {"min": "1Mi", "max": "100Mi", "step": step},
                            },
                        }
                    },
                ),
            ),
            [
                invalid(
                    f"{DEVICES}[1].capacity[cap].requestPolicy.validRange.step",
                    step,
                    "must be greater than zero",
                )
            ],
        )
        for name, step in (("zero", "0"), ("negative", "-1Mi"))
    ),
    Case(
        "consumable-capacity-fractional",
        fractional_capacities,
        [
            invalid(f"{capacity_path(1)}.validValues[0]", "5", "option is larger than capacity value: -1"),
            invalid(f"{capacity_path(1)}.validValues[1]", "10", "option is larger than capacity value: -1"),
            invalid(f"{capacity_path(1)}.validValues[2]", "100", "option is larger than capacity value: -1"),
            invalid(
                f"{capacity_path(2)}.validValues",
                "-1",
                "default value is not valid according to the requestPolicy",
            ),
            forbidden(
                capacity_path(4),
                'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time',
            ),
            invalid(f"{capacity_path(7)}.validRange.default", "1050m", "default is less than min: 1100m"),
            invalid(
                f"{capacity_path(11)}.validRange.default",
                str(INT64_MAX),
                "value cannot be represented as a milli value",
            ),
            invalid(
                f"{capacity_path(11)}.validRange.max",
                str(INT64_MAX),
                "value cannot be represented as a milli value",
            ),
        ],
    ),
    Case(
        "invalid-node-selecor-label-value",
        built(
            lambda: a_slice(driver="foo", devices=3),
            spec(
                nodeName=None,
                nodeSelector={
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["-1"]}]}
                    ]
                },
            ),
        ),
        [invalid("spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values[0]", "-1", LABEL_VALUE)],
    ),
    Case(
        "taints",
        built(
            lambda: a_slice(driver="foo", devices=3),
            device(
                0,
                taints=[
                    NO_EXECUTE,
                    {
                        "key": "taint",
                        "value": "tainted",
                        "effect": "NoSchedule",
                        "timeAdded": "2026-01-01T00:00:00Z",
                    },
                    {},
                    {"key": BAD_NAME, "value": BAD_NAME, "effect": "some-other-effect"},
                ],
            ),
        ),
        [
            invalid(f"{DEVICES}[0].taints[2].key", "", "name part must be non-empty"),
            invalid(f"{DEVICES}[0].taints[2].key", "", NAME_PART),
            required(f"{DEVICES}[0].taints[2].effect"),
            invalid(f"{DEVICES}[0].taints[3].key", BAD_NAME, NAME_PART),
            invalid(f"{DEVICES}[0].taints[3].value", BAD_NAME, LABEL_VALUE),
            not_supported(f"{DEVICES}[0].taints[3].effect", "some-other-effect", EFFECTS),
        ],
    ),
    Case(
        "too-many-taints",
        built(a_slice, device(0, taints=[NO_EXECUTE] * 17)),
        [too_many(f"{DEVICES}[0].taints", 17, 16)],
    ),
    Case(
        "bad-PerDeviceNodeSelection",
        built(a_slice, spec(nodeName="worker", perDeviceNodeSelection=True)),
        [
            invalid(
                "spec",
                "{`nodeName`, `perDeviceNodeSelection`}",
                NODE_CHOICE + ", but multiple fields are set",
            ),
            required(f"{DEVICES}[0]", DEVICE_NODE_CHOICE),
        ],
    ),
    Case(
        "invalid-false-PerDeviceNodeSelection",
        built(a_slice, spec(nodeName="worker", perDeviceNodeSelection=False)),
        [invalid("spec.perDeviceNodeSelection", False, "must be either unset or set to true")],
    ),
    Case(
        "invalid-false-AllNodes",
        built(a_slice, spec(nodeName="worker", allNodes=False)),
        [invalid("spec.allNodes", False, "must be either unset or set to true")],
    ),
    Case(
        "invalid-empty-NodeName",
        built(a_slice, spec(nodeName="", allNodes=True)),
        [invalid("spec.nodeName", "", "must be either unset or set to a non-empty string")],
    ),
    Case(
        "invalid-node-selector-in-basicdevice",
        built(
            a_slice, spec(perDeviceNodeSelection=True, nodeName=None), device(0, nodeName="", allNodes=False)
        ),
        [
            invalid(f"{DEVICES}[0].nodeName", "", "must not be empty"),
            invalid(f"{DEVICES}[0].allNodes", False, "must be either unset or set to true"),
            required(f"{DEVICES}[0]", DEVICE_NODE_CHOICE),
        ],
    ),
    Case(
        "bad-node-selector-in-basicdevice",
        built(
            a_slice,
            spec(perDeviceNodeSelection=True, nodeName=None),
            device(0, nodeName="worker", allNodes=True),
        ),
        [invalid(f"{DEVICES}[0]", "{`nodeName`, `allNodes`}", DEVICE_NODE_CHOICE)],
    ),
    Case(
        "missing-name-shared-counters",
        built(with_counter_sets, spec(sharedCounters=[{"counters": counters()}])),
        [required("spec.sharedCounters[0].name")],
    ),
    Case(
        "bad-name-shared-counters",
        built(with_counter_sets, spec(sharedCounters=[{"name": BAD_NAME, "counters": counters()}])),
        [invalid("spec.sharedCounters[0].name", BAD_NAME, DNS_LABEL)],
    ),
    Case(
        "missing-counter-shared-counters",
        built(with_counter_sets, spec(sharedCounters=[{"name": "foo"}])),
        [required("spec.sharedCounters[0].counters")],
    ),
    Case(
        "bad-countername-shared-counters",
        built(
            with_counter_sets,
            spec(sharedCounters=[{"name": "foo", "counters": {BAD_NAME: {"value": "1Gi"}}}]),
        ),
        [invalid("spec.sharedCounters[0].counters", BAD_NAME, DNS_LABEL)],
    ),
    Case(
        "duplicate-shared-counters",
        built(with_counter_sets, spec(sharedCounters=[{"name": "foo", "counters": counters()}] * 2)),
        [duplicate("spec.sharedCounters[1]", "foo")],
    ),
    Case("max-shared-counters", built(with_counter_sets, spec(sharedCounters=counter_sets(8)))),
    Case(
        "too-many-shared-counters",
        built(with_counter_sets, spec(sharedCounters=counter_sets(9))),
        [too_many("spec.sharedCounters", 9, 8)],
    ),
    Case(
        "max-counters-in-counter-set",
        built(with_counter_sets, spec(sharedCounters=[{"name": "counterset-0", "counters": counters(32)}])),
    ),
    Case(
        "too-many-counters-in-counter-set",
        built(with_counter_sets, spec(sharedCounters=[{"name": "counterset-0", "counters": counters(33)}])),
        [too_many("spec.sharedCounters[0].counters", 33, 32)],
    ),
    Case(
        "missing-name-counterset-consumes-counter",
        built(a_slice, device(0, consumesCounters=[{"counters": counters()}])),
        [required(f"{DEVICES}[0].consumesCounters[0].counterSet")],
    ),
    Case(
        "bad-name-counterset-consumes-counter",
        built(a_slice, device(0, consumesCounters=[{"counterSet": BAD_NAME, "counters": counters()}])),
        [invalid(f"{DEVICES}[0].consumesCounters[0].counterSet", BAD_NAME, DNS_LABEL)],
    ),
    Case(
        "duplicate-counterset-consumes-counter",
        built(a_slice, device(0, consumesCounters=[{"counterSet": "foo", "counters": counters()}] * 2)),
        [duplicate(f"{DEVICES}[0].consumesCounters[1]", "foo")],
    ),
    Case(
        "missing-counter-consumes-counter",
        built(a_slice, device(0, consumesCounters=[{"counterSet": "counterset-0"}])),
        [required(f"{DEVICES}[0].consumesCounters[0].counters")],
    ),
    Case(
        "max-device-counter-consumption-for-device",
        built(a_slice, device(0, attributes=None, capacity=None, consumesCounters=consumes(2))),
    ),
    Case(
        "too-many-device-counter-consumption-for-device",
        built(a_slice, device(0, attributes=None, capacity=None, consumesCounters=consumes(3))),
        [too_many(f"{DEVICES}[0].consumesCounters", 3, 2)],
    ),
    Case(
        "max-counters-in-device-counter-consumption",
        built(
            a_slice,
            device(
                0,
                attributes=None,
                capacity=None,
                consumesCounters=[{"counterSet": "counterset-0", "counters": counters(32)}],
            ),
        ),
    ),
    Case(
        "too-many-counters-in-device-counter-consumption",
        built(
            a_slice,
            device(
                0,
                attributes=None,
                capacity=None,
                consumesCounters=[{"counterSet": "counterset-0", "counters": counters(33)}],
            ),
        ),
        [too_many(f"{DEVICES}[0].consumesCounters[0].counters", 33, 32)],
    ),
    Case(
        "max-number-of-devices-with-consumes-counters",
        built(lambda: a_slice(driver="foo", devices=64), every_device(consumesCounters=consumes(1))),
    ),
    Case(
        "too-many-devices-with-consumes-counters",
        built(lambda: a_slice(driver="foo", devices=65), device(0, consumesCounters=consumes(1))),
        [too_many(DEVICES, 65, 64)],
    ),
]


def binding(conditions: list[str] | None, failures: list[str] | None) -> Callable[[], Obj]:
    values = {"bindingConditions": conditions, "bindingFailureConditions": failures}
    return built(a_slice, device(0, **{k: v for k, v in values.items() if v is not None}))


BC = f"{DEVICES}[0].bindingConditions"
BFC = f"{DEVICES}[0].bindingFailureConditions"
CASES += [
    Case(
        "good-binding-conditions",
        binding(["example.com/condition1", "condition2"], ["example.com/condition3", "condition4"]),
    ),
    Case(
        "too-many-binding-conditions",
        binding([f"condition{i}" for i in range(1, 6)], ["condition6", "condition7"]),
        [too_many(BC, 5, 4)],
    ),
    Case(
        "too-many-binding-failure-conditions",
        binding(["condition1", "condition2"], [f"condition{i}" for i in range(3, 8)]),
        [too_many(BFC, 5, 4)],
    ),
    Case(
        "invalid-binding-conditions",
        binding(["condition1", "condition2!"], ["condition3", "condition4"]),
        [invalid(f"{BC}[1]", "condition2!", NAME_PART)],
    ),
    Case(
        "invalid-binding-failure-conditions",
        binding(["condition1", "condition2"], ["condition3!", "condition4"]),
        [invalid(f"{BFC}[0]", "condition3!", NAME_PART)],
    ),
    Case(
        "invalid-slice-has-binding-failure-but-no-binding-conditions",
        binding(None, ["condition1", "condition2"]),
        [invalid(BC, ANY, "bindingConditions are required to use bindingFailureConditions")],
    ),
    Case(
        "invalid-slice-has-binding-conditions-but-no-binding-failure-conditions",
        binding(["condition1", "condition2"], None),
        [invalid(BFC, ANY, "bindingFailureConditions are required to use bindingConditions")],
    ),
    Case(
        "duplicate-binding-conditions",
        binding(["condition1", "condition1"], ["condition2", "condition3"]),
        [duplicate(f"{BC}[1]", "condition1")],
    ),
    Case(
        "duplicate-binding-failure-conditions",
        binding(["condition1", "condition2"], ["condition3", "condition3"]),
        [duplicate(f"{BFC}[1]", "condition3")],
    ),
    Case(
        "overlapping-binding-conditions",
        binding(["condition1", "condition2"], ["condition1", "condition3"]),
        [
            invalid(
                f"{BFC}[0]", "condition1", "bindingFailureConditions must not overlap with bindingConditions"
            )
        ],
    ),
    Case(
        "correct-node-allocatable-resource-mappings",
        node_allocatable({"cpu": MAPPING_CPU, "memory": MAPPING_CPU}),
    ),
    Case("node-allocatable-resources-both-quantityfrom", node_allocatable({"cpu": MAPPING_CPU})),
    Case(
        "bad-node-allocatable-resources-capacityKey-empty",
        node_allocatable({"cpu": {"mapping": {"capacityKey": "", "capacityMultiplier": "1"}}}),
        [invalid(f"{NAR}[cpu].mapping.capacityKey", "", "capacityKey must not be an empty string")],
    ),
    Case(
        "bad-node-allocatable-resources-capacity-key-not-found",
        node_allocatable({"cpu": {"mapping": {"capacityKey": "nonexistent", "capacityMultiplier": "1"}}}),
        [(f"{NAR}[cpu].mapping.capacityKey", "FieldValueNotFound", 'Not found: "nonexistent"')],
    ),
    Case(
        "bad-node-allocatable-resources-invalid-device-multiplier-negative",
        built(a_slice, device(0, nodeAllocatableResources={"cpu": {"mapping": {"deviceMultiplier": "-1"}}})),
        [invalid(f"{NAR}[cpu].mapping.deviceMultiplier", "-1", "must be positive")],
    ),
    Case(
        "bad-node-allocatable-resources-invalid-capacity-multiplier-negative",
        node_allocatable(
            {"cpu": {"mapping": {"capacityKey": "dra.example.com/cpu", "capacityMultiplier": "-1"}}}
        ),
        [invalid(f"{NAR}[cpu].mapping.capacityMultiplier", "-1", "must be positive")],
    ),
    Case(
        "bad-node-allocatable-resources-invalid-device-multiplier-zero",
        built(a_slice, device(0, nodeAllocatableResources={"cpu": {"mapping": {"deviceMultiplier": "0"}}})),
        [invalid(f"{NAR}[cpu].mapping.deviceMultiplier", "0", "must be positive")],
    ),
    Case(
        "bad-node-allocatable-resources-invalid-capacity-multiplier-zero",
        node_allocatable(
            {"cpu": {"mapping": {"capacityKey": "dra.example.com/cpu", "capacityMultiplier": "0"}}}
        ),
        [invalid(f"{NAR}[cpu].mapping.capacityMultiplier", "0", "must be positive")],
    ),
    Case(
        "capacity key not in spec.devices[].capacity",
        node_allocatable(
            {"memory": {"mapping": {"capacityKey": "dra.example.com/hugepages", "capacityMultiplier": "1"}}}
        ),
        [
            (
                f"{NAR}[memory].mapping.capacityKey",
                "FieldValueNotFound",
                'Not found: "dra.example.com/hugepages"',
            )
        ],
    ),
    *(
        Case(
            name,
            node_allocatable({resource: value}),
            [invalid(f"{NAR}[{resource}]", resource, "must be a node allocatable resource name")],
        )
        for name, resource, value in (
            ("mapped resource is not a node allocatable resource", "dra.example.com/gpu", MAPPING_CPU),
            ("non standard resource name", "abc", {"overhead": {"perPod": "1"}}),
            ("kubernetes.io namespace is rejected", "kubernetes.io/foo", {"overhead": {"perPod": "1"}}),
            ("ephemeral-storage is rejected", "ephemeral-storage", {"overhead": {"perPod": "2Gi"}}),
        )
    ),
    Case("valid hugepages resource", node_allocatable({"hugepages-2Mi": {"overhead": {"perPod": "2Mi"}}})),
    Case(
        "bad-node-allocatable-resources-overhead-neither-perpod-nor-percontainer-set",
        node_allocatable({"memory": {"overhead": {}}}),
        [invalid(f"{NAR}[memory].overhead", "", "at least one of perPod or perContainer must be set")],
    ),
    Case(
        "bad-node-allocatable-resources-overhead-negative-perpod",
        node_allocatable({"memory": {"overhead": {"perPod": "-1Gi"}}}),
        [invalid(f"{NAR}[memory].overhead.perPod", "-1Gi", "must be non-negative")],
    ),
    Case(
        "bad-node-allocatable-resources-overhead-negative-percontainer",
        node_allocatable({"memory": {"overhead": {"perContainer": "-500Mi"}}}),
        [invalid(f"{NAR}[memory].overhead.perContainer", "-500Mi", "must be non-negative")],
    ),
    Case(
        "good-node-allocatable-resources-overhead",
        node_allocatable({"memory": {"overhead": {"perPod": "1Gi", "perContainer": "500Mi"}}}),
    ),
    Case(
        "good-node-allocatable-resources-both-mapping-and-overhead-set",
        node_allocatable({"cpu": {**MAPPING_CPU, "overhead": {"perPod": "1Gi"}}}),
    ),
    Case(
        "bad-node-allocatable-resources-neither-mapping-nor-overhead-set",
        node_allocatable({"cpu": {}}),
        [required(f"{NAR}[cpu]", "at least one of mapping or overhead must be set")],
    ),
    Case(
        "bad-node-allocatable-resources-capacity-key-set-without-multiplier",
        node_allocatable({"cpu": {"mapping": {"capacityKey": "dra.example.com/cpu"}}}),
        [
            required(
                f"{NAR}[cpu].mapping.capacityMultiplier",
                "capacityMultiplier is required when capacityKey is set",
            )
        ],
    ),
    Case(
        "bad-node-allocatable-resources-multiplier-set-without-capacity-key",
        node_allocatable({"cpu": {"mapping": {"capacityMultiplier": "1"}}}),
        [
            required(
                f"{NAR}[cpu].mapping.capacityKey", "capacityKey is required when capacityMultiplier is set"
            )
        ],
    ),
    Case(
        "valid: skipNodeOperations All and Prepare",
        built(a_slice, spec(skipNodeOperations=["*", "NodePrepareResources"])),
    ),
    Case(
        "valid: skipNodeOperations Prepare and Unprepare",
        built(a_slice, spec(skipNodeOperations=["NodePrepareResources", "NodeUnprepareResources"])),
    ),
    Case(
        "invalid: skipNodeOperations Prepare only",
        built(a_slice, spec(skipNodeOperations=["NodePrepareResources"])),
        [
            invalid(
                "spec.skipNodeOperations",
                ANY,
                "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped",
            )
        ],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_it_answers_upstreams_resource_slice_table(shared_api: client.ApiClient, case: Case) -> None:
    assert_answers(shared_api, SLICE, case)


def valid_slice() -> Obj:
    return a_slice("valid", "valid", "valid")


def with_bad_taints(obj: Obj) -> Obj:
    obj["spec"]["devices"][0]["taints"] = [
        {"key": "unhealthy-power", "effect": "NoExecute"},
        {"key": "unhealthy-mem", "effect": "some-other-effect"},
    ]
    return obj


def renamed(obj: Obj) -> Obj:
    obj["metadata"]["name"] += "-update"
    return obj


def edited(*edits: Callable[[Obj], Any]) -> Callable[[Obj], Obj]:
    def update(obj: Obj) -> Obj:
        for edit in edits:
            edit(obj)
        return obj

    return update


def pool_renamed(obj: Obj) -> None:
    obj["spec"]["pool"]["name"] += "-updated"


def label_selector(value: str) -> Obj:
    return {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": [value]}]}]
    }


def second_device(obj: Obj) -> None:
    other = copy.deepcopy(obj["spec"]["devices"][0])
    other["name"] += "-other"
    obj["spec"]["devices"].append(other)


UPDATES: list[tuple[str, Obj, Callable[[Obj], Obj], list[Cause]]] = [
    ("valid-no-op-update", valid_slice(), lambda s: s, []),
    (
        "invalid-name-update",
        valid_slice(),
        renamed,
        [invalid("metadata.name", "valid-update", "field is immutable")],
    ),
    (
        "invalid-update-nodename",
        valid_slice(),
        edited(spec(nodeName="valid-updated")),
        [invalid("spec.nodeName", "valid-updated", "field is immutable")],
    ),
    (
        "invalid-update-drivername",
        valid_slice(),
        edited(spec(driver="valid-updated")),
        [invalid("spec.driver", "valid-updated", "field is immutable")],
    ),
    (
        "invalid-update-pool",
        valid_slice(),
        edited(pool_renamed),
        [invalid("spec.pool.name", "valid-updated", "field is immutable")],
    ),
    (
        "invalid-update-to-invalid-nodeselector-label-value",
        edited(spec(nodeName=None, nodeSelector=label_selector("bar")))(valid_slice()),
        edited(spec(nodeSelector=label_selector("-1"))),
        [invalid("spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values[0]", "-1", LABEL_VALUE)],
    ),
    (
        "invalid-new-effect-in-old-device",
        valid_slice(),
        with_bad_taints,
        [not_supported(f"{DEVICES}[0].taints[1].effect", "some-other-effect", EFFECTS)],
    ),
    (
        "valid-old-effect",
        with_bad_taints(valid_slice()),
        edited(first_attribute("foo", {"string": "bar"})),
        [],
    ),
    (
        "invalid-new-effect-in-new-device",
        with_bad_taints(valid_slice()),
        edited(second_device),
        [not_supported(f"{DEVICES}[1].taints[1].effect", "some-other-effect", EFFECTS)],
    ),
]


def consumable_slice() -> Obj:
    return consumable(devices=1)


def capacity_of(obj: Obj) -> Obj:
    cap: Obj = obj["spec"]["devices"][0]["capacity"]["a"]
    return cap


def spelled_twice(obj: Obj) -> Obj:
    """upstream's spellFirstValidValueTwice: option 10 becomes 5.0, a second spelling of 5, the default 5."""
    capacity_of(obj)["requestPolicy"].update(default="5", validValues=["5", "5.0", "100"])
    return obj


def negative_min(obj: Obj) -> Obj:
    capacity_of(obj)["requestPolicy"] = {"default": "0", "validRange": {"min": "-1", "step": "1"}}
    return obj


def milli_option(obj: Obj) -> Obj:
    capacity_of(obj)["requestPolicy"]["validValues"][0] = "9.9"
    return obj


def milli_range_too_large(obj: Obj) -> Obj:
    capacity_of(obj).update(
        value=str(INT64_MAX),
        requestPolicy={
            "default": str(INT64_MAX),
            "validRange": {"min": "0", "step": "1m", "max": str(INT64_MAX)},
        },
    )
    return obj


def add_capacity_b(obj: Obj) -> Obj:
    obj["spec"]["devices"][0]["capacity"]["b"] = {"value": "1"}
    return obj


def labelled(obj: Obj) -> Obj:
    obj["metadata"]["labels"] = {"updated": "true"}
    return obj


VALUES_A = f"{DEVICES}[0].capacity[a].requestPolicy"
UPDATES += [
    (
        "consumable-capacity-valid-values-spelling-fractional-gate",
        consumable_slice(),
        spelled_twice,
        [duplicate(f"{VALUES_A}.validValues[1]", "5")],
    ),
    (
        "consumable-capacity-valid-values-spelling-fractional-gate-okay-if-stored",
        spelled_twice(consumable_slice()),
        labelled,
        [],
    ),
    (
        "consumable-capacity-valid-values-spelling-fractional-gate-rechecked",
        spelled_twice(consumable_slice()),
        add_capacity_b,
        [duplicate(f"{VALUES_A}.validValues[1]", "5")],
    ),
    (
        "consumable-capacity-valid-range-out-of-int64-bound",
        consumable_slice(),
        negative_min,
        [invalid(f"{VALUES_A}.validRange.min", "-1", "must be greater than or equal to 0")],
    ),
    (
        "consumable-capacity-valid-range-out-of-int64-bound-okay-if-stored",
        negative_min(consumable_slice()),
        lambda s: s,
        [],
    ),
    ("consumable-capacity-valid-values-milli-values", consumable_slice(), milli_option, []),
    (
        "consumable-capacity-valid-range-integer-okay-if-stored",
        milli_range_too_large(consumable_slice()),
        lambda s: s,
        [],
    ),
    (
        "consumable-capacity-valid-range-milli-values",
        consumable_slice(),
        milli_range_too_large,
        [
            invalid(
                f"{VALUES_A}.validRange.default",
                str(INT64_MAX),
                "value cannot be represented as a milli value",
            ),
            invalid(
                f"{VALUES_A}.validRange.max", str(INT64_MAX), "value cannot be represented as a milli value"
            ),
        ],
    ),
]


@pytest.mark.parametrize(("name", "old", "update", "want"), UPDATES, ids=[u[0] for u in UPDATES])
def test_it_answers_upstreams_resource_slice_update_table(
    name: str, old: Obj, update: Callable[[Obj], Obj], want: list[Cause]
) -> None:
    old = {**old, "metadata": {**old["metadata"], "resourceVersion": "1"}}
    causes, _ = validate(SLICE, update(copy.deepcopy(old)), old)
    assert same_causes(want, [(c["field"], c["reason"], c["message"]) for c in causes]), causes
