"""A converted object as the API server gives it back: stored, then read as resource.k8s.io/v1.

`kubectl get -o yaml` of an object created from an old manifest does not show the manifest's text but
what the server decoded into its Go types, defaulted, stored (protobuf) and encoded again as JSON:

* defaults (upstream ``SetDefaults_ExactDeviceRequest`` / ``SetDefaults_DeviceSubRequest`` and the
  ``+default`` of ``DeviceToleration.operator``, the same in every version since v1beta1): a request's
  ``allocationMode`` is ``ExactCount`` when unset, its ``count`` 1 when it is ExactCount and unset or 0;
  a toleration's ``operator`` is ``Equal`` when unset;
* every Quantity in its canonical form (``1.5Gi`` → ``1536Mi``, ``1000M`` → ``1G``, the number ``64``
  → the string ``"64"``); a value that is not a quantity is refused, as the server's decoder does;
* a field tagged ``omitempty`` whose value is empty is not written: ``null``, ``[]``, ``{}``, and for
  the plain (non-pointer) strings and integers ``""`` and ``0`` (a pointer keeps ``false``, ``0``, ``""``
  and an empty object). Entries of a map (attribute, capacity and counter names) always stay.

`TYPES` is our table of the v1 Go types reached from each kind (`staging/src/k8s.io/api/resource/v1/
types.go`, 1.37): for each field, what the JSON encoder and the defaulting see. A field the table does
not know is left as it is (the 1.37 schema check reports unknown fields).

What the server adds that a manifest cannot carry is left out on purpose: metadata it sets (uid,
creationTimestamp …), ``status: {}`` and the empty non-pointer structs it writes (``allocation.devices:
{}``), and a taint's ``timeAdded`` (the moment of creation).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from dra.jsontypes import a_type
from dra.quantity import Quantity, QuantityError

from .tree import Tree, insert_before_comments, remove_key

# What a field is, as the encoder sees it:
#   "str"/"int": a plain value with omitempty ("" / 0 are not written); "ptr": a pointer to a scalar
#   (null is not written, every other value is); "qty": a Quantity; "qty*": a pointer to a Quantity;
#   "opaque": kept as it is (RawExtension, conditions); ("list", T) / ("map", T): omitempty list / map
#   of T; a type name: a pointer to a struct (an empty one is written as {}). A trailing "!" marks a field
#   without omitempty, or a struct that is not a pointer: kept even when empty or null.
Kind = str | tuple[str, str]

_SELECTOR: dict[str, Kind] = {"cel": "CELDeviceSelector"}
_TOLERATION: dict[str, Kind] = {
    "key": "str",
    "operator": "str",
    "value": "str",
    "effect": "str",
    "tolerationSeconds": "ptr",
}
_OPAQUE_CONFIG: dict[str, Kind] = {"driver": "str!", "parameters": "opaque"}
_REQUEST_FIELDS: dict[str, Kind] = {
    "deviceClassName": "str!",
    "selectors": ("list", "DeviceSelector"),
    "allocationMode": "str",
    "count": "int",
    "tolerations": ("list", "DeviceToleration"),
    "capacity": "CapacityRequirements",
    "derivedAttributes": ("list", "DerivedAttribute"),
}
_NODE_REQUIREMENT: dict[str, Kind] = {"key": "str!", "operator": "str!", "values": ("list", "scalar")}

TYPES: Mapping[str, Mapping[str, Kind]] = {
    # DeviceClass
    "DeviceClassSpec": {
        "selectors": ("list", "DeviceSelector"),
        "config": ("list", "DeviceClassConfiguration"),
        "extendedResourceName": "ptr",
    },
    "DeviceSelector": _SELECTOR,
    "CELDeviceSelector": {"expression": "str!"},
    "DeviceClassConfiguration": {"opaque": "OpaqueDeviceConfiguration"},
    "OpaqueDeviceConfiguration": _OPAQUE_CONFIG,
    # ResourceClaim(Template)
    "ResourceClaimTemplateSpec": {"metadata": "opaque", "spec": "ResourceClaimSpec!"},
    "ResourceClaimSpec": {"devices": "DeviceClaim!"},
    "DeviceClaim": {
        "requests": ("list!", "DeviceRequest"),
        "constraints": ("list", "DeviceConstraint"),
        "config": ("list", "DeviceClaimConfiguration"),
    },
    "DeviceRequest": {
        "name": "str!",
        "exactly": "ExactDeviceRequest",
        "firstAvailable": ("list", "DeviceSubRequest"),
    },
    "ExactDeviceRequest": {**_REQUEST_FIELDS, "adminAccess": "ptr"},
    "DeviceSubRequest": {"name": "str!", **_REQUEST_FIELDS},
    "DerivedAttribute": {"name": "str!", "expression": "str!"},
    "CapacityRequirements": {"requests": ("map", "qty")},
    "DeviceToleration": _TOLERATION,
    "DeviceConstraint": {
        "requests": ("list", "scalar"),
        "matchAttribute": "ptr",
        "distinctAttribute": "ptr",
    },
    "DeviceClaimConfiguration": {"requests": ("list", "scalar"), "opaque": "OpaqueDeviceConfiguration"},
    "ResourceClaimStatus": {
        "allocation": "AllocationResult",
        "reservedFor": ("list", "ResourceClaimConsumerReference"),
        "devices": ("list", "AllocatedDeviceStatus"),
    },
    "AllocationResult": {
        "devices": "DeviceAllocationResult!",
        "nodeSelector": "NodeSelector",
        "allocationTimestamp": "ptr",
    },
    "DeviceAllocationResult": {
        "results": ("list", "DeviceRequestAllocationResult"),
        "config": ("list", "DeviceAllocationConfiguration"),
    },
    "DeviceRequestAllocationResult": {
        "request": "str!",
        "driver": "str!",
        "pool": "str!",
        "device": "str!",
        "adminAccess": "ptr",
        "tolerations": ("list", "DeviceToleration"),
        "bindingConditions": ("list", "scalar"),
        "bindingFailureConditions": ("list", "scalar"),
        "shareID": "ptr",
        "consumedCapacity": ("map", "qty"),
        "skipNodeOperations": ("list", "scalar"),
    },
    "DeviceAllocationConfiguration": {
        "source": "str!",
        "requests": ("list", "scalar"),
        "opaque": "OpaqueDeviceConfiguration",
    },
    "ResourceClaimConsumerReference": {"apiGroup": "str", "resource": "str!", "name": "str!", "uid": "str!"},
    "AllocatedDeviceStatus": {
        "driver": "str!",
        "pool": "str!",
        "device": "str!",
        "shareID": "ptr",
        "conditions": "opaque",
        "data": "opaque",
        "networkData": "NetworkDeviceData",
    },
    "NetworkDeviceData": {"interfaceName": "str", "ips": ("list", "scalar"), "hardwareAddress": "str"},
    # ResourceSlice
    "ResourceSliceSpec": {
        "driver": "str!",
        "pool": "ResourcePool!",
        "nodeName": "ptr",
        "nodeSelector": "NodeSelector",
        "allNodes": "ptr",
        "devices": ("list", "Device"),
        "perDeviceNodeSelection": "ptr",
        "sharedCounters": ("list", "CounterSet"),
        "partitionTypeAttribute": "ptr",
        "skipNodeOperations": ("list", "scalar"),
    },
    "ResourcePool": {"name": "str!", "generation": "int!", "resourceSliceCount": "int!"},
    "CounterSet": {"name": "str!", "counters": ("map", "Counter")},
    "Counter": {"value": "qty!"},
    "Device": {
        "name": "str!",
        "attributes": ("map", "DeviceAttribute"),
        "capacity": ("map", "DeviceCapacity"),
        "consumesCounters": ("list", "DeviceCounterConsumption"),
        "nodeName": "ptr",
        "nodeSelector": "NodeSelector",
        "allNodes": "ptr",
        "taints": ("list", "DeviceTaint"),
        "bindsToNode": "ptr",
        "bindingConditions": ("list", "scalar"),
        "bindingFailureConditions": ("list", "scalar"),
        "allowMultipleAllocations": "ptr",
        "nodeAllocatableResources": ("map", "NodeAllocatableResource"),
    },
    "DeviceAttribute": {
        "int": "ptr",
        "bool": "ptr",
        "string": "ptr",
        "version": "ptr",
        "ints": ("list", "scalar"),
        "bools": ("list", "scalar"),
        "strings": ("list", "scalar"),
        "versions": ("list", "scalar"),
    },
    "DeviceCapacity": {"value": "qty!", "requestPolicy": "CapacityRequestPolicy"},
    "CapacityRequestPolicy": {
        "default": "qty*",
        "validValues": ("list", "qty"),
        "validRange": "CapacityRequestPolicyRange",
    },
    "CapacityRequestPolicyRange": {"min": "qty*", "max": "qty*", "step": "qty*"},
    "DeviceCounterConsumption": {
        "counterSet": "str!",
        "counters": ("map", "Counter"),
        "compatibilityGroups": ("list", "scalar"),
    },
    "NodeAllocatableResource": {"mapping": "NodeAllocatableMapping", "overhead": "NodeAllocatableOverhead"},
    "NodeAllocatableMapping": {
        "capacityKey": "ptr",
        "capacityMultiplier": "qty*",
        "deviceMultiplier": "qty*",
    },
    "NodeAllocatableOverhead": {"perPod": "qty*", "perContainer": "qty*"},
    "DeviceTaint": {"key": "str!", "value": "str", "effect": "str!", "timeAdded": "ptr"},
    # DeviceTaintRule
    "DeviceTaintRuleSpec": {"deviceSelector": "DeviceTaintSelector", "taint": "DeviceTaint!"},
    "DeviceTaintSelector": {"driver": "ptr", "pool": "ptr", "device": "ptr"},
    "DeviceTaintRuleStatus": {"conditions": "opaque"},
    # core/v1
    "NodeSelector": {"nodeSelectorTerms": ("list!", "NodeSelectorTerm")},
    "NodeSelectorTerm": {
        "matchExpressions": ("list", "NodeSelectorRequirement"),
        "matchFields": ("list", "NodeSelectorRequirement"),
    },
    "NodeSelectorRequirement": _NODE_REQUIREMENT,
}

#: the type of `spec` and `status` of each kind
TOP: Mapping[str, Mapping[str, str]] = {
    "DeviceClass": {"spec": "DeviceClassSpec"},
    "ResourceClaim": {"spec": "ResourceClaimSpec", "status": "ResourceClaimStatus"},
    "ResourceClaimTemplate": {"spec": "ResourceClaimTemplateSpec"},
    "ResourceSlice": {"spec": "ResourceSliceSpec"},
    "DeviceTaintRule": {"spec": "DeviceTaintRuleSpec", "status": "DeviceTaintRuleStatus"},
}

#: v1 ExactDeviceRequest's fields in Go struct order (v1beta1's flat DeviceRequest had the same, which
#: `rules` moves under `exactly`)
EXACT_REQUEST_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
    "derivedAttributes",
)
#: the Go struct order of the fields a default adds, so it lands where `kubectl get` would list it (a
#: subrequest has a name first, then the same fields)
_REQUEST_ORDER = ("name", *EXACT_REQUEST_FIELDS)


@dataclass
class ReadBack:
    """What reading the object back changed (for the notes) and what the server would refuse."""

    refuse: Callable[[str, str], None]
    defaults: list[str] = field(default_factory=list)
    canonical: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        out = []
        if self.defaults:
            out.append("defaults the API server fills in: " + _listing(self.defaults))
        if self.canonical:
            out.append("quantities in the API server's canonical form: " + _listing(self.canonical))
        if self.dropped:
            out.append("empty fields the API server does not keep, removed: " + _listing(self.dropped))
        return out


def _listing(items: list[str], limit: int = 6) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def read_back(obj: Tree, kind: str, path: str, refuse: Callable[[str, str], None]) -> ReadBack:
    """Turn the converted v1 object `obj` (in place) into what the API server would give back."""
    state = ReadBack(refuse)
    for key, type_name in TOP.get(kind, {}).items():
        value = obj.get(key)
        if isinstance(value, MutableMapping):
            _struct(value, type_name, _join(path, key), state)
    return state


def _join(path: str, child: str) -> str:
    return f"{path}.{child}" if path else child


def _struct(node: Tree, type_name: str, path: str, state: ReadBack) -> None:
    fields = TYPES[type_name]
    if type_name in ("ExactDeviceRequest", "DeviceSubRequest"):
        _default_request(node, path, state)
    elif type_name == "DeviceToleration" and node.get("operator") in (None, ""):
        _set(node, "operator", "Equal", tuple(fields), path, state)
    for key in list(node):
        kind = fields.get(str(key))
        if kind is not None:
            _field(node, str(key), kind, _join(path, str(key)), state)


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, list | Mapping) and not value)


def _field(node: Tree, key: str, kind: Kind, path: str, state: ReadBack) -> None:
    value = node[key]
    if kind == "opaque":
        return
    if isinstance(kind, tuple):
        container, item = kind
        if not container.endswith("!") and _empty(value):
            _drop(node, key, path, state)
        elif isinstance(value, list):
            for index in range(len(value)):
                _element(value, index, item, f"{path}[{index}]", state)
        elif container == "map" and isinstance(value, MutableMapping):
            for name in list(value):
                _element(value, name, item, f"{path}.{name}", state)
        return
    kept = kind.endswith("!")
    kind = kind.rstrip("!")
    if not kept and (value is None or kind == "str" and value == "" or kind == "int" and _is_zero_int(value)):
        _drop(node, key, path, state)
    elif kind in ("qty", "qty*") and value is not None:
        _quantity(node, key, path, state)
    elif kind in TYPES and isinstance(value, MutableMapping):
        _struct(value, kind, path, state)


def _element(holder: Any, index: Any, item: str, path: str, state: ReadBack) -> None:
    value = holder[index]
    if item == "qty":
        _quantity(holder, index, path, state)
    elif item in TYPES and isinstance(value, MutableMapping):
        _struct(value, item, path, state)


def _is_zero_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value == 0


def _quantity(holder: Any, key: Any, path: str, state: ReadBack) -> None:
    value = holder[key]
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        state.refuse(path, f"must be a quantity (a string such as 80Gi, or a number), got {a_type(value)}")
        return
    text = (
        str(int(value))
        if isinstance(value, int)
        else repr(float(value))
        if isinstance(value, float)
        else value
    )
    try:
        canonical = str(Quantity.parse(text))
    except QuantityError as error:
        state.refuse(path, str(error))
        return
    if canonical != value:
        holder[key] = type(value)(canonical) if isinstance(value, str) else canonical
        shown = value if isinstance(value, str) else f"{value} (a number)"
        state.canonical.append(
            f'{path} {shown} → "{canonical}"' if shown != value else f"{path} {value} → {canonical}"
        )


def _default_request(node: Tree, path: str, state: ReadBack) -> None:
    mode = node.get("allocationMode")
    if mode in (None, ""):
        _set(node, "allocationMode", "ExactCount", _REQUEST_ORDER, path, state)
        mode = "ExactCount"
    if mode == "ExactCount" and (node.get("count") is None or _is_zero_int(node.get("count"))):
        _set(node, "count", 1, _REQUEST_ORDER, path, state)


def _set(node: Tree, key: str, value: Any, order: tuple[str, ...], path: str, state: ReadBack) -> None:
    """`node[key] = value`, a new key placed after the fields that come before it in the Go struct."""
    state.defaults.append(f"{_join(path, key)}: {value}")
    if key in node:
        node[key] = value
        return
    after = set(order[order.index(key) + 1 :]) if key in order else set()
    keys = list(node)
    position = next((i for i, k in enumerate(keys) if k in after), len(keys))
    insert_before_comments(node, position, key, value)


def _drop(node: Tree, key: str, path: str, state: ReadBack) -> None:
    remove_key(node, key)
    state.dropped.append(path)
