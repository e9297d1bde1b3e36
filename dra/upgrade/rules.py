"""The v1.33-era → resource.k8s.io/v1 conversion rules, one object at a time.

What changed between the versions (upstream's Go types at v0.31–v0.36 and the 1.37 OpenAPI):

* v1beta2 already has v1's shapes: ``apiVersion`` changes (and `readback` applies, as to every version).
* v1beta1 and v1alpha3 requests are flat (``deviceClassName``, ``selectors``, ``allocationMode``,
  ``count``, ``adminAccess``, ``tolerations``, later ``capacity`` and ``derivedAttributes`` directly
  under the request): v1 wraps them in ``exactly``. ``firstAvailable`` requests keep their subrequests,
  whose shape never changed. A request with both is invalid in every version (refused here).
* v1beta1 and v1alpha3 slices nest each device's fields under ``basic``: v1 has them on the device.
  v1alpha3 capacities are plain quantities (``memory: 80Gi``): v1 has ``memory: {value: 80Gi}``.
* 1.31's v1alpha3 ``ResourceClaimSpec.controller``, ``DeviceClassSpec.suitableNodes``,
  ``status.deallocationRequested`` and ``status.allocation.controller`` belong to classic DRA, which
  1.32 removed: refused, v1 cannot express them. So is ``PodSchedulingContext`` and all of v1alpha2.
* 1.33's v1alpha3 DeviceTaintRule selector had ``deviceClassName`` and CEL ``selectors``; 1.35 removed
  both, v1 selects only by ``driver``/``pool``/``device``. Such a rule is compiled, through the
  `TaintInventory` the caller passes, into name-based v1 rules against the devices that exist now
  (`compile_taint_rule`); without an inventory it is refused.

Then `readback.read_back` makes the result what the API server gives back when the old manifest is
stored and read as v1: its defaults, canonical quantities, no empty fields it does not keep (a flat field
left at its zero value is unset, as upstream's conversion decides; it is not moved under ``exactly``).

Every field v1 keeps survives. Fields of the restructured types that the old version did not have are
reported (never dropped); the caller validates the result against the 1.37 schema, which reports
unknown fields anywhere else. Conversion works on a deep copy, so a refused object is left untouched.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from dra.jsontypes import a_type

from .readback import EXACT_REQUEST_FIELDS, read_back
from .tree import (
    Tree,
    add_comment_lines,
    attach_comment,
    comment_of,
    insert_at,
    leading_comment_lines,
    move_key,
    new_map_like,
    prefer_flow,
    remove_key,
)

GROUP = "resource.k8s.io"
TARGET_VERSION = "v1"
TARGET_API_VERSION = f"{GROUP}/{TARGET_VERSION}"
OLD_VERSIONS = ("v1alpha3", "v1beta1", "v1beta2")
CONVERTED_KINDS = (
    "DeviceClass",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "ResourceSlice",
    "DeviceTaintRule",
)
#: which kinds each old version served (v1beta1 never had DeviceTaintRule)
KINDS_BY_VERSION: Mapping[str, frozenset[str]] = {
    "v1alpha3": frozenset(CONVERTED_KINDS),
    "v1beta1": frozenset(CONVERTED_KINDS) - {"DeviceTaintRule"},
    "v1beta2": frozenset(CONVERTED_KINDS),
}
#: kinds of an old version that are still current in 1.37 and stay as they are
CURRENT_KINDS = {("v1alpha3", "ResourcePoolStatusRequest")}

#: the fields of a flat v1beta1/v1alpha3 DeviceRequest that v1 moves under `exactly`: v1's ExactDeviceRequest
#: (tests/dra/test_upgrade_rules.py checks these against the 1.37 schema)
FLAT_REQUEST_FIELDS = EXACT_REQUEST_FIELDS
REQUEST_FIELDS = frozenset({"name", "firstAvailable", *FLAT_REQUEST_FIELDS})
#: the fields of v1beta1/v1alpha3 BasicDevice; all of them are fields of the v1 Device
BASIC_DEVICE_FIELDS = frozenset(
    {
        "attributes",
        "capacity",
        "consumesCounters",
        "nodeName",
        "nodeSelector",
        "allNodes",
        "taints",
        "bindsToNode",
        "bindingConditions",
        "bindingFailureConditions",
        "allowMultipleAllocations",
        "nodeAllocatableResources",
    }
)
LEGACY_TAINT_SELECTOR_FIELDS = frozenset({"deviceClassName", "driver", "pool", "device", "selectors"})
CLASSIC_DRA = "classic DRA (resource drivers with a controller), which Kubernetes 1.32 removed"

ANNOTATION_PREFIX = "dradash.io"
ANNOTATION_COMPILED_FROM = f"{ANNOTATION_PREFIX}/compiled-from"
ANNOTATION_COMPILED_SELECTOR = f"{ANNOTATION_PREFIX}/compiled-selector"
ANNOTATION_COMPILED_AT = f"{ANNOTATION_PREFIX}/compiled-at"
ANNOTATION_NOTE = f"{ANNOTATION_PREFIX}/note"
LABEL_COMPILED_FROM = ANNOTATION_COMPILED_FROM
COMPILED_NOTE = (
    "compiled from a deviceClassName/CEL device selector against the mirrored inventory; "
    "regenerate if devices change"
)
#: metadata the API server sets; a generated object must not carry the original's
SERVER_METADATA = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink")


@dataclass(frozen=True)
class FieldProblem:
    """Why a document cannot be converted: the field path (kube style) as the manifest has it, the reason,
    and where the conversion moved that field (`converted_path`, the v1 path the API server would name),
    when it moved (a v1beta1 request's `count` is v1's `exactly.count`)."""

    path: str
    message: str
    converted_path: str = ""

    def __str__(self) -> str:
        where = f"{self.path} (in v1: {self.converted_path})" if self.converted_path else self.path
        return f"{where}: {self.message}" if where else self.message


# ----------------------------------------------------------------------------------- the inventory seam


@dataclass(frozen=True)
class LegacyTaintSelector:
    """A 1.33 DeviceTaintRule selector: every set field must match (CEL: every expression true)."""

    device_class: str | None = None
    driver: str | None = None
    pool: str | None = None
    device: str | None = None
    cel: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompiledSelection:
    """What a legacy selector selects today, as v1 selectors (`{driver, pool}` or `{driver, pool, device}`)."""

    selectors: tuple[Mapping[str, str], ...]
    device_count: int
    as_of: str  # RFC 3339: when the inventory was read


class InventoryError(Exception):
    """The inventory cannot answer (unknown class, CEL that does not compile or fails on a device)."""


class TaintInventory(Protocol):
    def compile_selector(self, selector: LegacyTaintSelector) -> CompiledSelection: ...


# ----------------------------------------------------------------------------------- the outcome


@dataclass
class Outcome:
    """The result of `upgrade_object`. `objects` is the original (kept, refused) or the v1 object(s)."""

    action: str  # "kept" | "converted" | "refused"
    objects: list[Tree]
    kind: str = ""
    name: str = ""
    from_version: str = ""
    to_version: str = ""
    notes: list[str] = field(default_factory=list)
    problems: list[FieldProblem] = field(default_factory=list)
    generated: bool = False  # the objects are new (compiled DeviceTaintRules), not the input rewritten
    #: (v1 path, manifest path) of every field the conversion moved, in the order it moved them
    moves: list[tuple[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.action == "converted"

    def at_source(self, problem: FieldProblem) -> FieldProblem:
        """`problem`, found on the converted object, named by the manifest's own path (and its v1 path)."""
        return at_source(problem, self.moves)


def at_source(problem: FieldProblem, moves: list[tuple[str, str]]) -> FieldProblem:
    path = problem.path
    # the last move undone first: a v1alpha3 device's capacity was wrapped in {value} before it left `basic`
    for converted, source in reversed(moves):
        if path == converted or path.startswith((converted + ".", converted + "[")):
            path = source + path[len(converted) :]
    if path == problem.path:
        return problem
    return FieldProblem(path, problem.message, converted_path=problem.path)


class _Work:
    def __init__(self, version: str, kind: str, indent: int) -> None:
        self.version = version
        self.kind = kind
        self.indent = indent
        self.notes: list[str] = []
        self.problems: list[FieldProblem] = []
        self.moves: list[tuple[str, str]] = []

    def moved(self, converted: str, source: str) -> None:
        self.moves.append((converted, source))

    def refuse(self, path: str, message: str) -> None:
        self.problems.append(FieldProblem(path, message))

    def unknown(self, path: str, type_name: str) -> None:
        self.refuse(
            path,
            f"unknown field: resource.k8s.io/{self.version} {type_name} has no such field; "
            "not converted (fix or remove it first)",
        )


def _split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def upgrade_object(
    obj: Any, *, inventory: TaintInventory | None = None, indent: int = 2, path: str = ""
) -> Outcome:
    """Convert one manifest object to resource.k8s.io/v1 (or say why not, or that it stays as it is).

    `indent` is how far the manifest indents a nested mapping; moved comments are re-indented by it.
    """
    if obj is None:
        return Outcome("kept", [])  # an empty document (`---` twice): nothing to write
    if not isinstance(obj, MutableMapping):
        problem = f"is {a_type(obj)}, not a Kubernetes object (a mapping with apiVersion and kind)"
        return Outcome("refused", [obj], problems=[FieldProblem(path, problem)])
    problems = [
        FieldProblem(_join(path, name), "Required value: every Kubernetes object names its " + name)
        if obj.get(name) in (None, "")
        else FieldProblem(_join(path, name), f"must be a string, got {a_type(obj[name])}")
        for name in ("apiVersion", "kind")
        if not isinstance(obj.get(name), str) or not obj.get(name)
    ]
    if problems:
        return Outcome("refused", [obj], problems=problems)
    api_version, kind = obj["apiVersion"], obj["kind"]
    name = (
        str((obj.get("metadata") or {}).get("name") or "") if isinstance(obj.get("metadata"), Mapping) else ""
    )
    group, version = _split_api_version(api_version)
    if (kind == "List" and api_version == "v1") or (group == GROUP and kind.endswith("List")):
        return _upgrade_list(obj, inventory=inventory, indent=indent, path=path)
    if group != GROUP or version == TARGET_VERSION or (version, kind) in CURRENT_KINDS:
        return Outcome("kept", [obj], kind=kind, name=name, from_version=api_version, to_version=api_version)
    outcome = Outcome("refused", [obj], kind=kind, name=name, from_version=api_version)
    if version not in OLD_VERSIONS:
        detail = (
            "is classic DRA, removed in Kubernetes 1.31, and has no v1 equivalent: rewrite it by hand"
            if version in ("v1alpha1", "v1alpha2")
            else "is not a version this converter knows (v1alpha3, v1beta1, v1beta2)"
        )
        outcome.problems.append(FieldProblem(_join(path, "apiVersion"), f"{api_version} {detail}"))
        return outcome
    if kind not in KINDS_BY_VERSION[version]:
        detail = (
            f"belongs to {CLASSIC_DRA}; v1 has no equivalent: delete it"
            if kind == "PodSchedulingContext"
            else f"is not a kind resource.k8s.io/{version} served"
        )
        outcome.problems.append(FieldProblem(_join(path, "kind"), f"{kind} {detail}"))
        return outcome

    work = _Work(version, kind, indent)
    converted = copy.deepcopy(obj)
    converted["apiVersion"] = TARGET_API_VERSION
    generated: list[Tree] | None = None
    spec = converted.get("spec")
    spec = spec if isinstance(spec, MutableMapping) else None
    if kind == "DeviceClass":
        _device_class(spec, work, _join(path, "spec"))
    elif kind == "ResourceClaim":
        _claim_spec(spec, work, _join(path, "spec"))
        _claim_status(converted.get("status"), work, _join(path, "status"))
    elif kind == "ResourceClaimTemplate":
        inner = spec.get("spec") if spec is not None else None
        _claim_spec(inner if isinstance(inner, MutableMapping) else None, work, _join(path, "spec.spec"))
    elif kind == "ResourceSlice":
        _slice_spec(spec, work, _join(path, "spec"))
    elif kind == "DeviceTaintRule":
        generated = _taint_rule(converted, spec, work, path, inventory)
    if not work.problems:
        for number, result in enumerate(generated if generated is not None else [converted]):
            prefix = f"{path}[{number}]" if generated is not None and len(generated) > 1 else path
            work.notes.extend(read_back(result, kind, prefix, work.refuse).notes())
    outcome.moves = work.moves
    outcome.problems = [outcome.at_source(problem) for problem in work.problems]
    if work.problems:
        return outcome
    outcome.action = "converted"
    outcome.to_version = TARGET_API_VERSION
    outcome.notes = [f"apiVersion {api_version} → {TARGET_API_VERSION}", *work.notes]
    if generated is not None:
        outcome.objects = generated
        outcome.generated = True
    else:
        outcome.objects = [converted]
    return outcome


def _has_problem_under(work: _Work, path: str) -> bool:
    return any(p.path == path or p.path.startswith((path + ".", path + "[")) for p in work.problems)


def _join(path: str, child: str) -> str:
    return f"{path}.{child}" if path else child


def _upgrade_list(obj: Tree, *, inventory: TaintInventory | None, indent: int, path: str) -> Outcome:
    api_version = str(obj["apiVersion"])
    items = obj.get("items")
    outcome = Outcome("kept", [obj], kind=str(obj["kind"]), from_version=api_version, to_version=api_version)
    if not isinstance(items, list):
        return outcome
    results = [
        upgrade_object(item, inventory=inventory, indent=indent, path=_join(path, f"items[{i}]"))
        for i, item in enumerate(items)
    ]
    for i, result in enumerate(results):
        outcome.problems.extend(result.problems)
        outcome.moves.extend(result.moves)
        outcome.notes.extend(f"items[{i}]: {note}" for note in result.notes)
    if outcome.problems:
        outcome.action = "refused"
        return outcome
    group, version = _split_api_version(api_version)
    relabel = group == GROUP and version in OLD_VERSIONS
    if not relabel and not any(r.changed for r in results):
        return outcome
    converted = copy.copy(obj)  # shallow: only `items` and `apiVersion` change
    new_items = type(items)()
    for result in results:
        new_items.extend(result.objects)
    converted["items"] = new_items
    if relabel:
        converted["apiVersion"] = TARGET_API_VERSION
        outcome.notes.insert(0, f"apiVersion {api_version} → {TARGET_API_VERSION}")
    outcome.action = "converted"
    outcome.to_version = str(converted["apiVersion"])
    outcome.objects = [converted]
    return outcome


# ----------------------------------------------------------------------------------- classes and claims


def _device_class(spec: Tree | None, work: _Work, path: str) -> None:
    if spec is not None and "suitableNodes" in spec:
        work.refuse(
            _join(path, "suitableNodes"),
            f"belongs to {CLASSIC_DRA}; v1 classes have no node selector (devices reach nodes through "
            "their ResourceSlices): remove it",
        )


def _claim_spec(spec: Tree | None, work: _Work, path: str) -> None:
    if spec is None:
        return
    if "controller" in spec:
        work.refuse(_join(path, "controller"), f"belongs to {CLASSIC_DRA}; v1 has no such field: remove it")
    devices = spec.get("devices")
    if work.version == "v1beta2" or not isinstance(devices, MutableMapping):
        return
    requests = devices.get("requests")
    if not isinstance(requests, list):
        return
    for index, request in enumerate(requests):
        if isinstance(request, MutableMapping):
            _request(request, work, _join(path, f"devices.requests[{index}]"))


def _request(request: Tree, work: _Work, path: str) -> None:
    label = f"request {request.get('name')!r}" if request.get("name") else path
    for key in request:
        if key not in REQUEST_FIELDS:
            work.unknown(_join(path, str(key)), "DeviceRequest")
    # what upstream's conversion counts as set (hasAnyMainRequestFieldsSet): a field at its zero value
    # (null, "", 0; a list only when null) is unset, and decoding drops it; so is an empty firstAvailable
    unset = [key for key in request if key in FLAT_REQUEST_FIELDS and not _is_set(request[key])]
    if "firstAvailable" in request and _empty_list(request["firstAvailable"]):
        unset.append("firstAvailable")
    for key in unset:
        remove_key(request, key)
    if unset:
        work.notes.append(f"{label}: {', '.join(unset)} left out (unset: null, empty or zero)")
    flat = [key for key in request if key in FLAT_REQUEST_FIELDS]
    if "firstAvailable" in request:
        if flat:
            work.refuse(
                path,
                f"firstAvailable and {', '.join(flat)} are both set: a request is either one class "
                "(v1 `exactly`) or a list of alternatives (`firstAvailable`), never both",
            )
            return
        subrequests = request.get("firstAvailable")
        count = len(subrequests) if isinstance(subrequests, list) else 0
        work.notes.append(f"{label}: firstAvailable kept ({count} subrequest{'s' if count != 1 else ''})")
        return
    if not flat:
        work.refuse(
            _join(path, "deviceClassName"),
            "Required value: a request needs deviceClassName or firstAvailable",
        )
        return
    if _has_problem_under(work, path):
        return
    position = list(request).index(flat[0])
    exactly = new_map_like(request)
    for key in flat:
        move_key(request, exactly, key, shift=work.indent)
    insert_at(request, position, "exactly", exactly)
    work.moved(_join(path, "exactly"), path)
    work.notes.append(f"{label}: {', '.join(flat)} moved under exactly")


def _is_set(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return value != ""
    if isinstance(value, int) and not isinstance(value, bool) and type(value).__name__ != "ScalarBoolean":
        return value != 0
    return True  # a list or map, even empty (decoded, it is not nil); a bool (a pointer in every version)


def _empty_list(value: Any) -> bool:
    return value is None or (isinstance(value, list) and not value)


def _claim_status(status: Any, work: _Work, path: str) -> None:
    if not isinstance(status, Mapping):
        return
    if "deallocationRequested" in status:
        work.refuse(_join(path, "deallocationRequested"), f"belongs to {CLASSIC_DRA}; v1 has no such field")
    allocation = status.get("allocation")
    if isinstance(allocation, Mapping) and "controller" in allocation:
        work.refuse(_join(path, "allocation.controller"), f"belongs to {CLASSIC_DRA}; v1 has no such field")


# ----------------------------------------------------------------------------------- slices


def _slice_spec(spec: Tree | None, work: _Work, path: str) -> None:
    if spec is None:
        return
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        work.refuse(
            _join(path, "sharedCounters"),
            "Invalid value: a v1.37 ResourceSlice has either sharedCounters or devices, never both (the API "
            'server answers "only one of `sharedCounters` or `devices` is allowed"): publish the counter '
            "sets in a ResourceSlice of their own in the same pool, and count it in resourceSliceCount",
        )
    if work.version == "v1beta2":
        return
    # v1beta1 and v1alpha3 have plain fields here, where "" and false mean unset; v1 has pointers and refuses
    # both values ("must be either unset or set to …"): the server's conversion leaves them unset
    dropped = []
    if isinstance(spec.get("nodeName"), str) and spec["nodeName"] == "":
        dropped.append("nodeName")
    if _is_false(spec.get("allNodes")):
        dropped.append("allNodes")
    for key in dropped:
        remove_key(spec, key)
    for key in dropped:
        shown = '""' if key == "nodeName" else "false"
        work.notes.append(
            f"{_join(path, key)}: {shown} meant unset in {work.version}; v1 leaves the field out"
        )
    devices = spec.get("devices")
    if not isinstance(devices, list):
        return
    flattened = wrapped = 0
    for index, device in enumerate(devices):
        if not isinstance(device, MutableMapping):
            continue
        device_path = _join(path, f"devices[{index}]")
        for key in device:
            if key not in ("name", "basic"):
                work.unknown(_join(device_path, str(key)), "Device (its fields are under `basic`)")
        basic = device.get("basic")
        if basic is None:
            continue
        if not isinstance(basic, MutableMapping):
            work.refuse(_join(device_path, "basic"), "must be an object")
            continue
        for key in basic:
            if key not in BASIC_DEVICE_FIELDS:
                work.unknown(_join(device_path, f"basic.{key}"), "BasicDevice")
        if _has_problem_under(work, device_path):
            continue
        wrapped += _wrap_capacity(basic, work, _join(device_path, "basic.capacity"))
        keys = list(device)
        position = keys.index("basic")
        # what follows `basic:` (its comment, the comment lines before its first field) now follows the
        # field before it, usually `name`
        basic_comment = comment_of(device, "basic")
        if basic_comment is not None and len(basic_comment) > 3:
            basic_comment[3] = None  # the same lines as the map's own leading comment, taken next
        basic_lines = leading_comment_lines(basic)
        del device["basic"]
        moved = list(basic)
        for offset, key in enumerate(moved):
            move_key(basic, device, key, shift=-work.indent, position=position + offset)
            work.moved(_join(device_path, str(key)), _join(device_path, f"basic.{key}"))
        if position > 0:
            attach_comment(device, keys[position - 1], basic_comment, shift=-work.indent)
            add_comment_lines(device, keys[position - 1], basic_lines, shift=-work.indent)
        elif moved:
            attach_comment(device, moved[0], basic_comment, shift=-work.indent)
        flattened += 1
    if flattened:
        work.notes.append(f"{flattened} device{'s' if flattened != 1 else ''}: fields moved out of basic")
    if wrapped:
        work.notes.append(
            f"{wrapped} capacit{'ies' if wrapped != 1 else 'y'}: plain quantity wrapped as {{value}}"
        )


def _is_false(value: Any) -> bool:
    """`false` as any YAML loader gives it (ruamel's ScalarBoolean is an int)."""
    return (isinstance(value, bool) or type(value).__name__ == "ScalarBoolean") and not value


def _wrap_capacity(basic: Tree, work: _Work, path: str) -> int:
    """v1alpha3 capacities are plain quantities; v1 (and v1beta1) wrap each in `{value: …}`."""
    capacity = basic.get("capacity")
    if not isinstance(capacity, MutableMapping):
        return 0
    wrapped = 0
    for name in list(capacity):
        value = capacity[name]
        if isinstance(value, Mapping) or value is None:
            continue
        holder = new_map_like(capacity)
        holder["value"] = value
        prefer_flow(holder)
        capacity[name] = holder
        work.moved(_join(path, f"{name}.value"), _join(path, str(name)))
        wrapped += 1
    return wrapped


# ----------------------------------------------------------------------------------- DeviceTaintRules


def _taint_rule(
    converted: Tree, spec: Tree | None, work: _Work, path: str, inventory: TaintInventory | None
) -> list[Tree] | None:
    """None when only apiVersion changes; the generated rules when the selector had to be compiled."""
    selector = spec.get("deviceSelector") if spec is not None else None
    if not isinstance(selector, Mapping):
        return None
    selector_path = _join(path, "spec.deviceSelector")
    legacy = [key for key in ("deviceClassName", "selectors") if key in selector]
    if not legacy:
        return None
    for key in selector:
        if key not in LEGACY_TAINT_SELECTOR_FIELDS:
            work.unknown(_join(selector_path, str(key)), "DeviceTaintSelector")
    parsed = _legacy_selector(selector, work, selector_path)
    if work.problems or parsed is None:
        return None
    what = " and ".join(f"`{key}`" for key in legacy)
    if inventory is None:
        work.refuse(
            _join(selector_path, legacy[0]),
            f"v1 DeviceTaintRules select devices only by driver, pool and device; this selector uses {what}, "
            "which can only be compiled into name-based rules against the mirrored inventory, and there is "
            "none (the database has no devices, or --no-inventory was given)",
        )
        return None
    try:
        selection = inventory.compile_selector(parsed)
    except InventoryError as error:
        work.refuse(_join(selector_path, legacy[0]), f"cannot compile against the inventory: {error}")
        return None
    original_name = str((converted.get("metadata") or {}).get("name") or "")
    if not selection.selectors:
        work.refuse(
            selector_path,
            f"selects no device of the mirrored inventory (as of {selection.as_of}); a v1 rule cannot "
            "select nothing (an empty selector selects every device): delete the rule, or select by "
            "driver/pool/device",
        )
        return None
    rules = [
        _compiled_rule(converted, original_name, selector, chosen, selection.as_of)
        for chosen in selection.selectors
    ]
    pools = sum(1 for s in selection.selectors if "device" not in s)
    work.notes.append(
        f"spec.deviceSelector used {what}, which v1 no longer has: compiled into {len(rules)} name-based "
        f"rule{'s' if len(rules) != 1 else ''} ({pools} whole pool{'s' if pools != 1 else ''}, "
        f"{len(rules) - pools} single device{'s' if len(rules) - pools != 1 else ''}; "
        f"{selection.device_count} device{'s' if selection.device_count != 1 else ''}) against the mirrored "
        f"inventory at {selection.as_of}. Regenerate them if devices change, and delete the old rule "
        f"{original_name!r} once they are applied."
    )
    return rules


def _legacy_selector(selector: Mapping[str, Any], work: _Work, path: str) -> LegacyTaintSelector | None:
    strings: dict[str, str | None] = {}
    for key in ("deviceClassName", "driver", "pool", "device"):
        value = selector.get(key)
        if value is not None and not isinstance(value, str):
            work.refuse(_join(path, key), "must be a string")
        strings[key] = value if isinstance(value, str) else None
    expressions: list[str] = []
    raw = selector.get("selectors") or []
    if not isinstance(raw, list):
        work.refuse(_join(path, "selectors"), "must be a list of {cel: {expression}}")
        return None
    for index, entry in enumerate(raw):
        cel = entry.get("cel") if isinstance(entry, Mapping) else None
        expression = cel.get("expression") if isinstance(cel, Mapping) else None
        if not isinstance(expression, str) or not expression.strip():
            work.refuse(_join(path, f"selectors[{index}].cel.expression"), "Required value: a CEL expression")
            continue
        expressions.append(expression)
    return LegacyTaintSelector(
        device_class=strings["deviceClassName"],
        driver=strings["driver"],
        pool=strings["pool"],
        device=strings["device"],
        cel=tuple(expressions),
    )


def _compiled_rule(
    converted: Tree, original_name: str, legacy: Mapping[str, Any], chosen: Mapping[str, str], as_of: str
) -> Tree:
    rule = copy.deepcopy(converted)
    rule.pop("status", None)
    metadata = rule.get("metadata")
    if not isinstance(metadata, MutableMapping):
        metadata = new_map_like(rule)
        rule["metadata"] = metadata
    for key in SERVER_METADATA:
        metadata.pop(key, None)
    metadata["name"] = compiled_rule_name(original_name, chosen)
    if _is_label_value(original_name):
        labels = metadata.get("labels")
        if not isinstance(labels, MutableMapping):
            labels = new_map_like(metadata)
            metadata["labels"] = labels
        labels[LABEL_COMPILED_FROM] = original_name
    annotations = metadata.get("annotations")
    if not isinstance(annotations, MutableMapping):
        annotations = new_map_like(metadata)
        metadata["annotations"] = annotations
    annotations[ANNOTATION_COMPILED_FROM] = original_name
    annotations[ANNOTATION_COMPILED_SELECTOR] = json.dumps(
        _plain(legacy), sort_keys=True, separators=(",", ":")
    )
    annotations[ANNOTATION_COMPILED_AT] = as_of
    annotations[ANNOTATION_NOTE] = COMPILED_NOTE
    spec = rule["spec"]
    selector = new_map_like(spec)
    for key in ("driver", "pool", "device"):
        if key in chosen:
            selector[key] = chosen[key]
    spec["deviceSelector"] = selector
    return rule


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bool | int | float) or value is None:
        return value
    return str(value)


_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def _is_label_value(text: str) -> bool:
    return len(text) <= 63 and bool(_LABEL_VALUE.match(text))


def _slug(text: str, limit: int) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:limit].strip("-") or "x"


def compiled_rule_name(original: str, selector: Mapping[str, str]) -> str:
    """`<original>-<pool>[-<device>]-<hash>`: predictable, unique per (driver, pool, device), a DNS subdomain."""
    key = "/".join(selector.get(k, "") for k in ("driver", "pool", "device"))
    digest = hashlib.sha256(key.encode()).hexdigest()[:6]
    parts = [_slug(selector.get("pool", ""), 60)]
    if selector.get("device"):
        parts.append(_slug(selector["device"], 63))
    suffix = "-" + "-".join([*parts, digest])
    base = original[: 253 - len(suffix)].rstrip("-.") or "rule"
    return base + suffix
