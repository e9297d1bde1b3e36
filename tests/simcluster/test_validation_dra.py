"""DRA rules and limits (dra-api.md §2–§4): one table of bad objects, each naming the field and the rule."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from simcluster.validation import validate
from simcluster.validation.capacity import quantity_of
from simcluster.validation.cel import _cel_engine, cel_syntax_problem


@dataclass(frozen=True)
class Kind:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool


SLICE = Kind("resource.k8s.io", "v1", "ResourceSlice", "resourceslices", False)
CLASS = Kind("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", False)
CLAIM = Kind("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", True)
TEMPLATE = Kind("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", True)
RULE = Kind("resource.k8s.io", "v1", "DeviceTaintRule", "devicetaintrules", False)
POOL_REQUEST = Kind(
    "resource.k8s.io", "v1alpha3", "ResourcePoolStatusRequest", "resourcepoolstatusrequests", False
)
POD = Kind("", "v1", "Pod", "pods", True)
NAMESPACE = Kind("", "v1", "Namespace", "namespaces", False)

Obj = dict[str, Any]


def gpu(index: int) -> Obj:
    return {
        "name": f"gpu-{index}",
        "attributes": {
            "model": {"string": "h200"},
            "driverVersion": {"version": "1.2.3"},
            "resource.kubernetes.io/numaNode": {"int": index % 2},
        },
        "capacity": {"memory": {"value": "141Gi"}},
    }


def a_slice() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "node-1-gpu.example.com-abcde"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 3, "resourceSliceCount": 1},
            "devices": [gpu(i) for i in range(4)],
        },
    }


def a_class() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {
            "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
            "extendedResourceName": "example.com/gpu",
        },
    }


def a_claim() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "firstAvailable": [
                            {"name": "big", "deviceClassName": "gpu.example.com", "count": 2},
                            {"name": "small", "deviceClassName": "gpu.example.com", "count": 4},
                        ],
                    },
                    {
                        "name": "nic",
                        "exactly": {
                            "deviceClassName": "nic.example.com",
                            "tolerations": [
                                {
                                    "key": "nic.example.com/maintenance",
                                    "operator": "Exists",
                                    "effect": "NoExecute",
                                }
                            ],
                        },
                    },
                ],
                "constraints": [
                    {"requests": ["gpu", "nic"], "matchAttribute": "resource.kubernetes.io/numaNode"}
                ],
            }
        },
    }


def a_template() -> Obj:
    claim = a_claim()
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {"metadata": {"labels": {"team": "ml"}}, "spec": claim["spec"]},
    }


def a_rule() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "drain-node-1-gpus"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
            "taint": {"key": "example.com/maintenance", "value": "drain", "effect": "None"},
        },
    }


def a_pool_request() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourcePoolStatusRequest",
        "metadata": {"name": "gpus"},
        "spec": {"driver": "gpu.example.com", "limit": 100},
    }


def a_pod() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "trainer", "namespace": "ml"},
        "spec": {
            "containers": [
                {
                    "name": "trainer",
                    "image": "registry.example.com/trainer:1.4",
                    "resources": {"claims": [{"name": "gpus"}]},
                }
            ],
            "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "train"}],
        },
    }


FACTORIES: dict[Kind, Callable[[], Obj]] = {
    SLICE: a_slice,
    CLASS: a_class,
    CLAIM: a_claim,
    TEMPLATE: a_template,
    RULE: a_rule,
    POOL_REQUEST: a_pool_request,
    POD: a_pod,
}


def devices(obj: Obj) -> list[Obj]:
    result: list[Obj] = obj["spec"]["devices"]
    return result


def requests(obj: Obj) -> list[Obj]:
    result: list[Obj] = obj["spec"]["devices"]["requests"]
    return result


def many_devices(count: int, *, tainted: bool = False) -> Callable[[Obj], None]:
    def mutate(obj: Obj) -> None:
        obj["spec"]["devices"] = [gpu(i) for i in range(count)]
        if tainted:
            obj["spec"]["devices"][0]["taints"] = [{"key": "example.com/ecc", "effect": "NoSchedule"}]

    return mutate


@dataclass(frozen=True)
class Case:
    id: str
    kind: Kind
    mutate: Callable[[Obj], None]
    field: str
    reason: str
    message: str


def _set(path: str, value: Any) -> Callable[[Obj], None]:
    """A mutation that sets a dotted path (list indexes as numbers) to ``value``; ``...`` deletes it."""

    def mutate(obj: Obj) -> None:
        node: Any = obj
        parts = path.split(".")
        for part in parts[:-1]:
            node = node[int(part)] if part.isdigit() else node[part]
        last = parts[-1]
        if value is ...:
            del node[int(last) if last.isdigit() else last]
        elif last.isdigit():
            node[int(last)] = copy.deepcopy(value)
        else:
            node[last] = copy.deepcopy(value)

    return mutate


def _do(*mutations: Callable[[Obj], None]) -> Callable[[Obj], None]:
    def mutate(obj: Obj) -> None:
        for mutation in mutations:
            mutation(obj)

    return mutate


LONG_CEL = "device.driver == '" + "x" * 10240 + "'"
SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"
LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'"

CASES = [
    # ResourceSlice ------------------------------------------------------------------------------------------
    Case(
        "slice driver uppercase",
        SLICE,
        _set("spec.driver", "GPU.example.com"),
        "spec.driver",
        "FieldValueInvalid",
        SUBDOMAIN_MSG,
    ),
    Case(
        "slice driver too long",
        SLICE,
        _set("spec.driver", "g" * 64 + ".com"),
        "spec.driver",
        "FieldValueTooLong",
        "Too long: may not be more than 63 bytes",
    ),
    Case(
        "slice driver missing",
        SLICE,
        _set("spec.driver", ...),
        "spec.driver",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "slice pool name bad part",
        SLICE,
        _set("spec.pool.name", "node-1//x"),
        "spec.pool.name",
        "FieldValueInvalid",
        "each part of the pool name",
    ),
    Case(
        "slice pool count zero",
        SLICE,
        _set("spec.pool.resourceSliceCount", 0),
        "spec.pool.resourceSliceCount",
        "FieldValueInvalid",
        "Invalid value: 0: must be greater than zero",
    ),
    Case(
        "slice no node selection",
        SLICE,
        _set("spec.nodeName", ...),
        "spec",
        "FieldValueRequired",
        "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
    ),
    Case(
        "slice two node selections",
        SLICE,
        _set("spec.allNodes", True),
        "spec",
        "FieldValueInvalid",
        "but multiple fields are set",
    ),
    Case(
        "slice node selector two terms",
        SLICE,
        _do(_set("spec.nodeName", ...), _set("spec.nodeSelector", {"nodeSelectorTerms": [{}, {}]})),
        "spec.nodeSelector.nodeSelectorTerms",
        "FieldValueInvalid",
        "must have exactly one node selector term",
    ),
    Case(
        "slice device name not a label",
        SLICE,
        _set("spec.devices.0.name", "gpu_0"),
        "spec.devices[0].name",
        "FieldValueInvalid",
        LABEL_MSG,
    ),
    Case(
        "slice device names duplicate",
        SLICE,
        _set("spec.devices.1.name", "gpu-0"),
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
        _set("spec.devices.0.attributes.bad-name", {"int": 1}),
        "spec.devices[0].attributes",
        "FieldValueInvalid",
        "a valid C identifier must start with alphabetic character",
    ),
    Case(
        "attribute name too long",
        SLICE,
        _set("spec.devices.0.attributes." + "a" * 33, {"int": 1}),
        "spec.devices[0].attributes",
        "FieldValueTooLong",
        "may not be more than 32 bytes",
    ),
    Case(
        "attribute domain bad",
        SLICE,
        lambda o: devices(o)[0]["attributes"].update({"Example.com/x": {"int": 1}}),
        "spec.devices[0].attributes",
        "FieldValueInvalid",
        SUBDOMAIN_MSG,
    ),
    Case(
        "attribute two values",
        SLICE,
        _set("spec.devices.0.attributes.model", {"string": "h200", "int": 1}),
        "spec.devices[0].attributes[model]",
        "FieldValueInvalid",
        "exactly one value must be specified",
    ),
    Case(
        "attribute no value",
        SLICE,
        _set("spec.devices.0.attributes.model", {}),
        "spec.devices[0].attributes[model]",
        "FieldValueInvalid",
        'Invalid value: "": exactly one value must be specified',
    ),
    Case(
        "attribute string too long",
        SLICE,
        _set("spec.devices.0.attributes.model", {"string": "m" * 65}),
        "spec.devices[0].attributes[model].string",
        "FieldValueTooLong",
        "may not be more than 64 bytes",
    ),
    Case(
        "attribute version not semver",
        SLICE,
        _set("spec.devices.0.attributes.driverVersion", {"version": "1.2"}),
        "spec.devices[0].attributes[driverVersion].version",
        "FieldValueInvalid",
        "semver.org spec 2.0.0",
    ),
    Case(
        "attributes and capacities over 32",
        SLICE,
        _set("spec.devices.0.attributes", {f"a{i}": {"int": i} for i in range(32)}),
        "spec.devices[0]",
        "FieldValueInvalid",
        "Invalid value: 33: the total number of attributes and capacities must not exceed 32",
    ),
    Case(
        "attribute values over 48",
        SLICE,
        _set("spec.devices.0.attributes", {f"l{i}": {"ints": list(range(10))} for i in range(5)}),
        "spec.devices[0]",
        "FieldValueInvalid",
        "Invalid value: 50: the total number of attribute values must not exceed 48",
    ),
    Case(
        "capacity quantity malformed",
        SLICE,
        _set("spec.devices.0.capacity.memory.value", "141 GiB"),
        "spec.devices[0].capacity[memory].value",
        "FieldValueInvalid",
        "quantities must match the regular expression",
    ),
    Case(
        "device taint effect unknown",
        SLICE,
        _set("spec.devices.0.taints", [{"key": "example.com/ecc", "effect": "PreferNoSchedule"}]),
        "spec.devices[0].taints[0].effect",
        "FieldValueNotSupported",
        'Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"',
    ),
    Case(
        "device taint key bad",
        SLICE,
        _set("spec.devices.0.taints", [{"key": "example.com/-ecc", "effect": "NoSchedule"}]),
        "spec.devices[0].taints[0].key",
        "FieldValueInvalid",
        "name part must consist of alphanumeric characters",
    ),
    Case(
        "device taint value bad",
        SLICE,
        _set("spec.devices.0.taints", [{"key": "ecc", "value": "not ok", "effect": "NoSchedule"}]),
        "spec.devices[0].taints[0].value",
        "FieldValueInvalid",
        "a valid label must be an empty string",
    ),
    Case(
        "device 17 taints",
        SLICE,
        _set("spec.devices.0.taints", [{"key": f"k{i}", "effect": "None"} for i in range(17)]),
        "spec.devices[0].taints",
        "FieldValueTooMany",
        "Too many: 17: must have at most 16 items",
    ),
    Case(
        "shared counters with devices",
        SLICE,
        _set("spec.sharedCounters", [{"name": "gpu-0-counters", "counters": {"memory": {"value": "80Gi"}}}]),
        "spec",
        "FieldValueInvalid",
        'Invalid value: "": only one of `sharedCounters` or `devices` is allowed',
    ),
    Case(
        "nine counter sets",
        SLICE,
        _do(
            _set("spec.devices", ...),
            _set(
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
        _do(
            _set("spec.devices", ...),
            _set("spec.sharedCounters", [{"name": "s", "counters": {"mem": {"value": "1"}}}] * 2),
        ),
        "spec.sharedCounters[1]",
        "FieldValueDuplicate",
        'Duplicate value: "s"',
    ),
    Case(
        "three consumesCounters",
        SLICE,
        _set(
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
        _set(
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
        _set("spec.devices.0.nodeName", "node-1"),
        "spec.devices[0]",
        "FieldValueInvalid",
        "can only be set if `perDeviceNodeSelection` is set to true",
    ),
    Case(
        "unknown device field",
        SLICE,
        _set("spec.devices.0.colour", "blue"),
        "spec.devices[0].colour",
        "FieldValueInvalid",
        'unknown field "spec.devices[0].colour"',
    ),
    Case(
        "pool generation wrong type",
        SLICE,
        _set("spec.pool.generation", "three"),
        "spec.pool.generation",
        "FieldValueTypeInvalid",
        "must be of type integer",
    ),
    # DeviceClass --------------------------------------------------------------------------------------------
    Case(
        "class selector without cel",
        CLASS,
        _set("spec.selectors", [{}]),
        "spec.selectors[0].cel",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "class selector empty expression",
        CLASS,
        _set("spec.selectors.0.cel.expression", ""),
        "spec.selectors[0].cel.expression",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "class selector too long",
        CLASS,
        _set("spec.selectors.0.cel.expression", LONG_CEL),
        "spec.selectors[0].cel.expression",
        "FieldValueTooLong",
        "may not be more than 10240 bytes",
    ),
    Case(
        "class selector unbalanced",
        CLASS,
        _set("spec.selectors.0.cel.expression", 'device.attributes["x"'),
        "spec.selectors[0].cel.expression",
        "FieldValueInvalid",
        "compilation failed",
    ),
    Case(
        "class 33 selectors",
        CLASS,
        _set("spec.selectors", [{"cel": {"expression": "true"}}] * 33),
        "spec.selectors",
        "FieldValueTooMany",
        "Too many: 33: must have at most 32 items",
    ),
    Case(
        "class 33 configs",
        CLASS,
        _set("spec.config", [{"opaque": {"driver": "gpu.example.com", "parameters": {}}}] * 33),
        "spec.config",
        "FieldValueTooMany",
        "Too many: 33: must have at most 32 items",
    ),
    Case(
        "class config parameters too big",
        CLASS,
        _set("spec.config", [{"opaque": {"driver": "gpu.example.com", "parameters": {"blob": "x" * 10240}}}]),
        "spec.config[0].opaque.parameters",
        "FieldValueTooLong",
        "may not be more than 10240 bytes",
    ),
    Case(
        "class extended resource without domain",
        CLASS,
        _set("spec.extendedResourceName", "gpu"),
        "spec.extendedResourceName",
        "FieldValueInvalid",
        "must be a valid extended resource name",
    ),
    Case(
        "class extended resource in kubernetes.io",
        CLASS,
        _set("spec.extendedResourceName", "kubernetes.io/gpu"),
        "spec.extendedResourceName",
        "FieldValueInvalid",
        "kubernetes.io",
    ),
    Case(
        "class extended resource of another class",
        CLASS,
        _set("spec.extendedResourceName", "deviceclass.resource.kubernetes.io/other"),
        "spec.extendedResourceName",
        "FieldValueInvalid",
        "must be a valid extended resource name",
    ),
    # ResourceClaim ------------------------------------------------------------------------------------------
    Case(
        "33 requests",
        CLAIM,
        lambda o: requests(o).extend(
            {"name": f"r{i}", "exactly": {"deviceClassName": "c"}} for i in range(31)
        ),
        "spec.devices.requests",
        "FieldValueTooMany",
        "Too many: 33: must have at most 32 items",
    ),
    Case(
        "request name duplicate",
        CLAIM,
        _set("spec.devices.requests.1.name", "gpu"),
        "spec.devices.requests[1]",
        "FieldValueDuplicate",
        'Duplicate value: "gpu"',
    ),
    Case(
        "request name not a label",
        CLAIM,
        _set("spec.devices.requests.1.name", "NIC"),
        "spec.devices.requests[1].name",
        "FieldValueInvalid",
        LABEL_MSG,
    ),
    Case(
        "request with both shapes",
        CLAIM,
        _set("spec.devices.requests.1.firstAvailable", [{"name": "a", "deviceClassName": "c"}]),
        "spec.devices.requests[1]",
        "FieldValueInvalid",
        "Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
    ),
    Case(
        "request with neither shape",
        CLAIM,
        _set("spec.devices.requests.1.exactly", ...),
        "spec.devices.requests[1]",
        "FieldValueRequired",
        "Required value: exactly one of `exactly` or `firstAvailable` is required",
    ),
    Case(
        "request class missing",
        CLAIM,
        _set("spec.devices.requests.1.exactly.deviceClassName", ...),
        "spec.devices.requests[1].exactly.deviceClassName",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "allocation mode unknown",
        CLAIM,
        _set("spec.devices.requests.1.exactly.allocationMode", "Some"),
        "spec.devices.requests[1].exactly.allocationMode",
        "FieldValueNotSupported",
        'Unsupported value: "Some": supported values: "All", "ExactCount"',
    ),
    Case(
        "count with mode All",
        CLAIM,
        _do(
            _set("spec.devices.requests.1.exactly.allocationMode", "All"),
            _set("spec.devices.requests.1.exactly.count", 2),
        ),
        "spec.devices.requests[1].exactly.count",
        "FieldValueInvalid",
        "must not be specified when allocationMode is 'All'",
    ),
    Case(
        "count zero",
        CLAIM,
        _set("spec.devices.requests.1.exactly.count", 0),
        "spec.devices.requests[1].exactly.count",
        "FieldValueInvalid",
        "Invalid value: 0: must be greater than zero",
    ),
    Case(
        "nine subrequests",
        CLAIM,
        _set(
            "spec.devices.requests.0.firstAvailable",
            [{"name": f"s{i}", "deviceClassName": "c"} for i in range(9)],
        ),
        "spec.devices.requests[0].firstAvailable",
        "FieldValueTooMany",
        "Too many: 9: must have at most 8 items",
    ),
    Case(
        "subrequest with adminAccess",
        CLAIM,
        _set("spec.devices.requests.0.firstAvailable.0.adminAccess", True),
        "spec.devices.requests[0].firstAvailable[0].adminAccess",
        "FieldValueInvalid",
        'unknown field "spec.devices.requests[0].firstAvailable[0].adminAccess"',
    ),
    Case(
        "subrequest name duplicate",
        CLAIM,
        _set("spec.devices.requests.0.firstAvailable.1.name", "big"),
        "spec.devices.requests[0].firstAvailable[1]",
        "FieldValueDuplicate",
        'Duplicate value: "big"',
    ),
    Case(
        "selector without expression",
        CLAIM,
        _set("spec.devices.requests.1.exactly.selectors", [{"cel": {}}]),
        "spec.devices.requests[1].exactly.selectors[0].cel.expression",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "17 tolerations",
        CLAIM,
        _set("spec.devices.requests.1.exactly.tolerations", [{"operator": "Exists"}] * 17),
        "spec.devices.requests[1].exactly.tolerations",
        "FieldValueTooMany",
        "Too many: 17: must have at most 16 items",
    ),
    Case(
        "toleration operator unknown",
        CLAIM,
        _set("spec.devices.requests.1.exactly.tolerations.0.operator", "In"),
        "spec.devices.requests[1].exactly.tolerations[0].operator",
        "FieldValueNotSupported",
        'Unsupported value: "In": supported values: "Equal", "Exists"',
    ),
    Case(
        "toleration Exists with value",
        CLAIM,
        _set("spec.devices.requests.1.exactly.tolerations.0.value", "x"),
        "spec.devices.requests[1].exactly.tolerations[0].value",
        "FieldValueInvalid",
        "must be empty for operator `Exists`",
    ),
    Case(
        "toleration empty key with Equal",
        CLAIM,
        _set("spec.devices.requests.1.exactly.tolerations", [{"operator": "Equal", "value": "x"}]),
        "spec.devices.requests[1].exactly.tolerations[0].operator",
        "FieldValueInvalid",
        "operator must be Exists when `key` is empty",
    ),
    Case(
        "toleration effect PreferNoSchedule",
        CLAIM,
        _set("spec.devices.requests.1.exactly.tolerations.0.effect", "PreferNoSchedule"),
        "spec.devices.requests[1].exactly.tolerations[0].effect",
        "FieldValueNotSupported",
        'Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"',
    ),
    Case(
        "constraint with both attributes",
        CLAIM,
        _set("spec.devices.constraints.0.distinctAttribute", "example.com/x"),
        "spec.devices.constraints[0]",
        "FieldValueInvalid",
        "but multiple fields are set",
    ),
    Case(
        "constraint with no attribute",
        CLAIM,
        _set("spec.devices.constraints.0.matchAttribute", ...),
        "spec.devices.constraints[0]",
        "FieldValueRequired",
        'exactly one of "matchAttribute" or "distinctAttribute" is required',
    ),
    Case(
        "constraint attribute not qualified",
        CLAIM,
        _set("spec.devices.constraints.0.matchAttribute", "numaNode"),
        "spec.devices.constraints[0].matchAttribute",
        "FieldValueInvalid",
        "a fully qualified name must be a domain and a name separated by a slash",
    ),
    Case(
        "constraint unknown request",
        CLAIM,
        _set("spec.devices.constraints.0.requests", ["gpu", "fpga"]),
        "spec.devices.constraints[0].requests[1]",
        "FieldValueInvalid",
        "must be the name of a request in the claim",
    ),
    Case(
        "constraint subrequest reference ok but unknown sub",
        CLAIM,
        _set("spec.devices.constraints.0.requests", ["gpu/huge"]),
        "spec.devices.constraints[0].requests[0]",
        "FieldValueInvalid",
        "must be the name of a request in the claim",
    ),
    Case(
        "33 constraints",
        CLAIM,
        _set("spec.devices.constraints", [{"matchAttribute": "example.com/x"}] * 33),
        "spec.devices.constraints",
        "FieldValueTooMany",
        "Too many: 33: must have at most 32 items",
    ),
    Case(
        "config unknown request",
        CLAIM,
        _set(
            "spec.devices.config",
            [{"requests": ["tpu"], "opaque": {"driver": "gpu.example.com", "parameters": {}}}],
        ),
        "spec.devices.config[0].requests[0]",
        "FieldValueInvalid",
        "must be the name of a request in the claim",
    ),
    Case(
        "config driver bad",
        CLAIM,
        _set("spec.devices.config", [{"opaque": {"driver": "GPU", "parameters": {}}}]),
        "spec.devices.config[0].opaque.driver",
        "FieldValueInvalid",
        SUBDOMAIN_MSG,
    ),
    Case(
        "config without parameters",
        CLAIM,
        _set("spec.devices.config", [{"opaque": {"driver": "gpu.example.com"}}]),
        "spec.devices.config[0].opaque.parameters",
        "FieldValueRequired",
        "Required value",
    ),
    # ResourceClaimTemplate ----------------------------------------------------------------------------------
    Case(
        "template metadata name",
        TEMPLATE,
        _set("spec.metadata.name", "x"),
        "spec.metadata.name",
        "FieldValueForbidden",
        "Forbidden: cannot be set",
    ),
    Case(
        "template request bad",
        TEMPLATE,
        _set("spec.spec.devices.requests.1.exactly.count", -1),
        "spec.spec.devices.requests[1].exactly.count",
        "FieldValueInvalid",
        "must be greater than zero",
    ),
    # DeviceTaintRule ----------------------------------------------------------------------------------------
    Case(
        "rule without taint",
        RULE,
        _set("spec.taint", ...),
        "spec.taint",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "rule effect PreferNoSchedule",
        RULE,
        _set("spec.taint.effect", "PreferNoSchedule"),
        "spec.taint.effect",
        "FieldValueNotSupported",
        'Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"',
    ),
    Case(
        "rule effect missing",
        RULE,
        _set("spec.taint.effect", ...),
        "spec.taint.effect",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "rule selector driver bad",
        RULE,
        _set("spec.deviceSelector.driver", "Bad_Driver"),
        "spec.deviceSelector.driver",
        "FieldValueInvalid",
        SUBDOMAIN_MSG,
    ),
    Case(
        "rule selector device bad",
        RULE,
        _set("spec.deviceSelector.device", "GPU_0"),
        "spec.deviceSelector.device",
        "FieldValueInvalid",
        LABEL_MSG,
    ),
    Case(
        # v1.37 tells a name that would be a valid subdomain what it lacks rather than the whole rule
        "rule selector device with a dot",
        RULE,
        _set("spec.deviceSelector.device", "gpu.0"),
        "spec.deviceSelector.device",
        "FieldValueInvalid",
        "must not contain dots",
    ),
    Case(
        "rule selector CEL tombstoned",
        RULE,
        _set("spec.deviceSelector.selectors", []),
        "spec.deviceSelector.selectors",
        "FieldValueInvalid",
        "unknown field",
    ),
    Case(
        "rule nine conditions",
        RULE,
        _set(
            "status",
            {
                "conditions": [
                    {
                        "type": f"T{i}",
                        "status": "True",
                        "reason": "R",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                    for i in range(9)
                ]
            },
        ),
        "status.conditions",
        "FieldValueTooMany",
        "Too many: 9: must have at most 8 items",
    ),
    Case(
        "rule condition status bad",
        RULE,
        _set(
            "status",
            {
                "conditions": [
                    {
                        "type": "EvictionInProgress",
                        "status": "Yes",
                        "reason": "R",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                ]
            },
        ),
        "status.conditions[0].status",
        "FieldValueNotSupported",
        'supported values: "False", "True", "Unknown"',
    ),
    # Python's `$` matches before a final newline, Go's does not: formats are matched whole
    Case(
        "rule condition reason with a trailing newline",
        RULE,
        _set(
            "status",
            {
                "conditions": [
                    {
                        "type": "EvictionInProgress",
                        "status": "True",
                        "reason": "Pending\n",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                ]
            },
        ),
        "status.conditions[0].reason",
        "FieldValueInvalid",
        "a condition reason must start with alphabetic character",
    ),
    Case(
        "rule condition time with a trailing newline",
        RULE,
        _set(
            "status",
            {
                "conditions": [
                    {
                        "type": "EvictionInProgress",
                        "status": "True",
                        "reason": "Pending",
                        "lastTransitionTime": "2026-01-01T00:00:00Z\n",
                    }
                ]
            },
        ),
        "status.conditions[0].lastTransitionTime",
        "FieldValueInvalid",
        "must be an RFC 3339 date-time",
    ),
    Case(
        "slice version attribute with a trailing newline",
        SLICE,
        _set("spec.devices.0.attributes.driverVersion", {"version": "1.2.3\n"}),
        "spec.devices[0].attributes[driverVersion].version",
        "FieldValueInvalid",
        "semver",
    ),
    # ResourcePoolStatusRequest ------------------------------------------------------------------------------
    Case(
        "pool request without driver",
        POOL_REQUEST,
        _set("spec.driver", ...),
        "spec.driver",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "pool request limit zero",
        POOL_REQUEST,
        _set("spec.limit", 0),
        "spec.limit",
        "FieldValueInvalid",
        "Invalid value: 0: must be at least 1",
    ),
    Case(
        "pool request limit too high",
        POOL_REQUEST,
        _set("spec.limit", 1001),
        "spec.limit",
        "FieldValueInvalid",
        "Invalid value: 1001: must not exceed 1000",
    ),
    # Pod ----------------------------------------------------------------------------------------------------
    Case(
        "pod without containers",
        POD,
        _set("spec.containers", []),
        "spec.containers",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "pod container without name",
        POD,
        _set("spec.containers.0.name", ""),
        "spec.containers[0].name",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "pod container without image",
        POD,
        _set("spec.containers.0.image", ...),
        "spec.containers[0].image",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "pod claim with both sources",
        POD,
        _set("spec.resourceClaims.0.resourceClaimName", "c"),
        "spec.resourceClaims[0]",
        "FieldValueInvalid",
        "at most one of `resourceClaimName` or `resourceClaimTemplateName`",
    ),
    Case(
        "pod claim with no source",
        POD,
        _set("spec.resourceClaims.0.resourceClaimTemplateName", ...),
        "spec.resourceClaims[0]",
        "FieldValueInvalid",
        "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
    ),
    Case(
        "pod container uses unknown claim",
        POD,
        _set("spec.containers.0.resources.claims.0.name", "tpus"),
        "spec.containers[0].resources.claims[0].name",
        "FieldValueNotSupported",
        'Unsupported value: "tpus": supported values: "gpus"',
    ),
    # rules aligned with kube-apiserver's resource validation ----------------------------------------------
    Case(
        "slice empty node name",
        SLICE,
        _do(_set("spec.nodeName", ""), _set("spec.allNodes", True)),
        "spec.nodeName",
        "FieldValueInvalid",
        "must be either unset or set to a non-empty string",
    ),
    Case(
        "slice allNodes false",
        SLICE,
        _set("spec.allNodes", False),
        "spec.allNodes",
        "FieldValueInvalid",
        "must be either unset or set to true",
    ),
    Case(
        "binding conditions without failure conditions",
        SLICE,
        _set("spec.devices.0.bindingConditions", ["example.com/ready"]),
        "spec.devices[0].bindingFailureConditions",
        "FieldValueInvalid",
        "bindingFailureConditions are required to use bindingConditions",
    ),
    Case(
        "binding conditions overlap",
        SLICE,
        _do(
            _set("spec.devices.0.bindingConditions", ["ready"]),
            _set("spec.devices.0.bindingFailureConditions", ["ready"]),
        ),
        "spec.devices[0].bindingFailureConditions[0]",
        "FieldValueInvalid",
        "must not overlap with bindingConditions",
    ),
    Case(
        "five binding conditions",
        SLICE,
        _do(
            _set("spec.devices.0.bindingConditions", [f"c{i}" for i in range(5)]),
            _set("spec.devices.0.bindingFailureConditions", ["failed"]),
        ),
        "spec.devices[0].bindingConditions",
        "FieldValueTooMany",
        "Too many: 5: must have at most 4 items",
    ),
    Case(
        "partition type attribute without consumers",
        SLICE,
        _set("spec.partitionTypeAttribute", "gpu.example.com/profile"),
        "spec.partitionTypeAttribute",
        "FieldValueInvalid",
        "may only be set on a slice which declares devices that consume counters",
    ),
    Case(
        "partition type attribute missing on a device",
        SLICE,
        _do(
            _set("spec.partitionTypeAttribute", "gpu.example.com/profile"),
            _set(
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
        _set("spec.skipNodeOperations", ["NodePrepareResources"]),
        "spec.skipNodeOperations",
        "FieldValueInvalid",
        "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped",
    ),
    Case(
        "config parameters a list",
        CLAIM,
        _set("spec.devices.config", [{"opaque": {"driver": "gpu.example.com", "parameters": []}}]),
        "spec.devices.config[0].opaque.parameters",
        "FieldValueTypeInvalid",
        "must be of type object",
    ),
    Case(
        "derived attribute not used by a constraint",
        CLAIM,
        _set(
            "spec.devices.requests.1.exactly.derivedAttributes",
            [{"name": "example.com/numa", "expression": "1"}],
        ),
        "spec.devices.requests[1].exactly.derivedAttributes[0].name",
        "FieldValueInvalid",
        "must be referenced by at least one matchAttribute or distinctAttribute constraint",
    ),
    Case(
        "reference with two slashes",
        CLAIM,
        _set("spec.devices.constraints.0.requests", ["gpu/big/x"]),
        "spec.devices.constraints[0].requests[0]",
        "FieldValueInvalid",
        "must be the name of a request in the claim",
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
def test_it_rejects_the_bad_object_naming_field_and_rule(case: Case) -> None:
    obj = FACTORIES[case.kind]()
    assert validate(case.kind, obj, None)[0] == [], "the base object must be valid"
    case.mutate(obj)
    causes, _ = validate(case.kind, obj, None)
    matching = [c for c in causes if c["field"] == case.field]
    assert matching, f"no cause for {case.field}; got {causes}"
    assert any(c["reason"] == case.reason and case.message in c["message"] for c in matching), matching


@pytest.mark.parametrize("kind", list(FACTORIES), ids=lambda k: k.kind)
def test_it_accepts_the_well_formed_objects(kind: Kind) -> None:
    assert validate(kind, FACTORIES[kind](), None) == ([], [])


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


def test_it_warns_but_accepts_an_empty_device_selector() -> None:
    rule = a_rule()
    rule["spec"]["deviceSelector"] = {}
    causes, warnings = validate(RULE, rule, None)
    assert causes == []
    assert len(warnings) == 1
    assert "deviceSelector" in warnings[0]
    assert "matches all devices" in warnings[0]


def test_it_accepts_a_rule_without_selector_silently() -> None:
    rule = a_rule()
    del rule["spec"]["deviceSelector"]
    assert validate(RULE, rule, None) == ([], [])


def test_it_accepts_subrequest_references_in_constraints_and_config() -> None:
    claim = a_claim()
    claim["spec"]["devices"]["constraints"] = [
        {"requests": ["gpu/big", "nic"], "matchAttribute": "resource.kubernetes.io/numaNode"}
    ]
    claim["spec"]["devices"]["config"] = [
        {
            "requests": ["gpu/small"],
            "opaque": {"driver": "gpu.example.com", "parameters": {"sharing": "time"}},
        }
    ]
    assert validate(CLAIM, claim, None)[0] == []


def test_it_reports_several_problems_at_once() -> None:
    claim = a_claim()
    requests(claim)[1]["exactly"]["count"] = 0
    requests(claim)[1]["exactly"]["tolerations"][0]["operator"] = "In"
    fields = {c["field"] for c in validate(CLAIM, claim, None)[0]}
    assert fields == {
        "spec.devices.requests[1].exactly.count",
        "spec.devices.requests[1].exactly.tolerations[0].operator",
    }


@pytest.mark.parametrize(
    ("expression", "fragment"),
    [
        ("device.driver ==", "compilation failed"),
        ('"gpu"', "must evaluate to bool"),
        ("device.nope(1)", "compilation failed"),
    ],
)
def test_it_compiles_selectors_with_the_allocators_cel_engine(expression: str, fragment: str) -> None:
    if _cel_engine() is None:
        pytest.skip("the allocator's CEL engine does not import; validation falls back to a syntax check")
    device_class = a_class()
    device_class["spec"]["selectors"][0]["cel"]["expression"] = expression
    causes, _ = validate(CLASS, device_class, None)
    assert [c["field"] for c in causes] == ["spec.selectors[0].cel.expression"]
    assert fragment in causes[0]["message"]


def test_it_does_not_recompile_selectors_already_stored() -> None:
    stored = a_class()
    stored["spec"]["selectors"][0]["cel"]["expression"] = '"legacy"'
    updated = copy.deepcopy(stored)
    updated["metadata"]["labels"] = {"team": "gpu"}
    assert validate(CLASS, updated, stored)[0] == []


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ('device.attributes["x"].y == "a"', None),
        ('device.attributes["x"', "unclosed '['"),
        ('device.driver == "a', "unterminated string literal"),
        ("(a))", "unexpected ')'"),
        ("   ", "empty expression"),
    ],
)
def test_it_falls_back_to_a_syntax_check_without_the_engine(expression: str, problem: str | None) -> None:
    assert cel_syntax_problem(expression) == problem


def shareable(policy: Obj) -> Obj:
    obj = a_slice()
    device = devices(obj)[0]
    device["allowMultipleAllocations"] = True
    device["capacity"]["memory"]["requestPolicy"] = policy
    return obj


@pytest.mark.parametrize(
    ("policy", "field", "fragment"),
    [
        ({"default": "10Gi", "validValues": ["10Gi", "20Gi"]}, None, None),
        ({"default": "10Gi", "validRange": {"min": "1Gi", "max": "100Gi", "step": "1Gi"}}, None, None),
        ({"validValues": ["10Gi"]}, "requestPolicy.default", "Required value"),
        ({"default": "10Gi", "validValues": ["20Gi", "10Gi"]}, "requestPolicy.validValues[1]", "ascending"),
        (
            {"default": "15Gi", "validValues": ["10Gi", "20Gi"]},
            "requestPolicy.validValues",
            "default value is not valid according to the requestPolicy",
        ),
        (
            {"default": "1Gi", "validValues": [f"{i}Gi" for i in range(1, 12)]},
            "requestPolicy.validValues",
            "Too many: 11",
        ),
        ({"default": "200Gi"}, None, None),
        (
            {"default": "10Gi", "validValues": ["10Gi", "200Gi"]},
            "requestPolicy.validValues[1]",
            "option is larger than capacity value: 141Gi",
        ),
        (
            {"default": "2Gi", "validRange": {"min": "1Gi", "step": "2Gi"}},
            "requestPolicy.validRange.step",
            "value is not a multiple of a given step (2Gi) from (1Gi)",
        ),
        (
            {"default": "1Gi", "validRange": {"min": "2Gi"}},
            "requestPolicy.validRange.default",
            "default is less than min: 2Gi",
        ),
        (
            {"default": "2Gi", "validRange": {"min": "2Gi", "max": "1Gi"}},
            "requestPolicy.validRange.max",
            "min is larger than max: 1Gi",
        ),
        (
            {"default": "2Gi", "validRange": {"min": "1Gi", "step": "0"}},
            "requestPolicy.validRange.step",
            "greater than zero",
        ),
        # quantities in messages are canonical (Quantity.String()), not a number of bytes
        (
            {"default": "140Gi", "validRange": {"min": "140Gi", "step": "2Gi"}},
            "requestPolicy.validRange.step",
            "one step 142Gi is larger than capacity value: 141Gi",
        ),
        (
            {"default": "1024Mi", "validRange": {"min": "2048Mi"}},
            "requestPolicy.validRange.default",
            "default is less than min: 2Gi",
        ),
        # a step is exact: 0.5 is a multiple of 100m, as nano-units say (no float rounding)
        ({"default": "500m", "validRange": {"min": "0", "step": "100m"}}, None, None),
    ],
)
def test_it_checks_capacity_request_policies(policy: Obj, field: str | None, fragment: str | None) -> None:
    causes, _ = validate(SLICE, shareable(policy), None)
    if field is None:
        assert causes == []
    else:
        full = f"spec.devices[0].capacity[memory].{field}"
        assert fragment is not None
        assert any(c["field"] == full and fragment in c["message"] for c in causes), causes
        assert all(c["field"].startswith("spec.devices[0].capacity[memory].requestPolicy") for c in causes)


def test_it_forbids_a_request_policy_on_an_exclusive_device() -> None:
    obj = shareable({"default": "1Gi"})
    del devices(obj)[0]["allowMultipleAllocations"]
    causes, _ = validate(SLICE, obj, None)
    assert [c["reason"] for c in causes] == ["FieldValueForbidden"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("80Gi", "80Gi"),
        ("1.5", "1500m"),
        ("100m", "100m"),
        ("2k", "2k"),
        ("1e3", "1e3"),
        (3, "3"),
        (0.5, "500m"),
        ("12 Gi", None),
        ("1Zi", None),
        (True, None),
    ],
)
def test_it_reads_quantity_fields_as_the_api_server_decodes_them(text: Any, value: str | None) -> None:
    parsed = quantity_of(text)
    assert (None if parsed is None else str(parsed)) == value
