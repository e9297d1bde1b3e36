"""Name formats and the resource.k8s.io rules of dra-api.md §2–§4 (beyond what the JSON schema checks).

Each ``check_<kind>`` takes the new object, the stored one (``None`` on create) and a ``Causes``; it
returns warnings.  Messages follow apimachinery's wording so that kubectl users see familiar text.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import re
from decimal import Decimal
from typing import Any, Final

from simcluster.schema import Causes, child, key_path

Obj = dict[str, Any]

# ---------------------------------------------------------------------------------------------------------
# name formats (apimachinery's IsDNS1123Subdomain & co, re-expressed)

_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT: Final = _LABEL_FMT + r"(\." + _LABEL_FMT + ")*"
_QUALIFIED_NAME_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT: Final = "(" + _QUALIFIED_NAME_FMT + ")?"
_C_IDENTIFIER_FMT: Final = "[A-Za-z_][A-Za-z0-9_]*"

_LABEL_RE: Final = re.compile(f"^{_LABEL_FMT}$")
_SUBDOMAIN_RE: Final = re.compile(f"^{_SUBDOMAIN_FMT}$")
_QUALIFIED_NAME_RE: Final = re.compile(f"^{_QUALIFIED_NAME_FMT}$")
_LABEL_VALUE_RE: Final = re.compile(f"^{_LABEL_VALUE_FMT}$")
_C_IDENTIFIER_RE: Final = re.compile(f"^{_C_IDENTIFIER_FMT}$")
_SEMVER_RE: Final = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
_UUID_RE: Final = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_CONDITION_REASON_RE: Final = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")

DNS1123_LABEL_MSG: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    f"and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '{_LABEL_FMT}')"
)
DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    f"'{_SUBDOMAIN_FMT}')"
)
QUALIFIED_NAME_MSG: Final = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    f"'{_QUALIFIED_NAME_FMT}')"
)
LABEL_VALUE_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    f"for validation is '{_LABEL_VALUE_FMT}')"
)
C_IDENTIFIER_MSG: Final = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is "
    f"'{_C_IDENTIFIER_FMT}')"
)


def dns_label(causes: Causes, path: str, value: Any, *, required: bool = True) -> None:
    if not value:
        if required:
            causes.required(path)
        return
    if not isinstance(value, str):
        return  # the schema already reported the type
    if len(value) > 63:
        causes.invalid(path, value, "must be no more than 63 characters")
    if not _LABEL_RE.match(value):
        causes.invalid(path, value, DNS1123_LABEL_MSG)


def dns_subdomain(
    causes: Causes, path: str, value: Any, *, required: bool = True, max_len: int = 253
) -> None:
    if not value:
        if required:
            causes.required(path)
        return
    if not isinstance(value, str):
        return
    if len(value) > max_len:
        if max_len == 253:
            causes.invalid(path, value, "must be no more than 253 characters")
        else:
            causes.too_long(path, max_len)
    if not _SUBDOMAIN_RE.match(value):
        causes.invalid(path, value, DNS1123_SUBDOMAIN_MSG)


def qualified_name(causes: Causes, path: str, value: Any, *, required: bool = True) -> None:
    """Label keys, annotation keys, taint keys, finalizers: ``[prefix/]name``."""
    if not value:
        if required:
            causes.required(path)
        return
    if not isinstance(value, str):
        return
    parts = value.split("/")
    if len(parts) > 2:
        causes.invalid(
            path,
            value,
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
            "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
            f"validation is '{_QUALIFIED_NAME_FMT}') with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')",
        )
        return
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            causes.invalid(path, value, "prefix part must be non-empty")
        elif len(prefix) > 253:
            causes.invalid(path, value, "prefix part must be no more than 253 characters")
        elif not _SUBDOMAIN_RE.match(prefix):
            causes.invalid(path, value, "prefix part " + DNS1123_SUBDOMAIN_MSG)
    if not name:
        causes.invalid(path, value, "name part must be non-empty")
    elif len(name) > 63:
        causes.invalid(path, value, "name part must be no more than 63 characters")
    elif not _QUALIFIED_NAME_RE.match(name):
        causes.invalid(path, value, QUALIFIED_NAME_MSG)


def label_value(causes: Causes, path: str, value: Any) -> None:
    if not isinstance(value, str) or not value:
        return
    if len(value) > 63:
        causes.invalid(path, value, "must be no more than 63 characters")
    if not _LABEL_VALUE_RE.match(value):
        causes.invalid(path, value, LABEL_VALUE_MSG)


# ---------------------------------------------------------------------------------------------------------
# DRA-specific names

DRIVER_NAME_MAX: Final = 63
POOL_NAME_MAX: Final = 253
DEVICE_ID_MAX: Final = 32
DEVICE_DOMAIN_MAX: Final = 63
CEL_MAX_LEN: Final = 10 * 1024
OPAQUE_PARAMETERS_MAX: Final = 10 * 1024
TAINT_EFFECTS: Final = ["NoExecute", "NoSchedule", "None"]
TOLERATION_EFFECTS: Final = ["NoExecute", "NoSchedule"]


def driver_name(causes: Causes, path: str, value: Any) -> None:
    if not value:
        causes.required(path)
        return
    if not isinstance(value, str):
        return
    if len(value) > DRIVER_NAME_MAX:
        causes.too_long(path, DRIVER_NAME_MAX)
    if not _SUBDOMAIN_RE.match(value):
        causes.invalid(path, value, DNS1123_SUBDOMAIN_MSG)


def pool_name(causes: Causes, path: str, value: Any, *, required: bool = True) -> None:
    if not value:
        if required:
            causes.required(path)
        return
    if not isinstance(value, str):
        return
    if len(value) > POOL_NAME_MAX:
        causes.too_long(path, POOL_NAME_MAX)
    for segment in value.split("/"):
        if not segment or len(segment) > 253 or not _SUBDOMAIN_RE.match(segment):
            causes.invalid(
                path, value, "each part of the pool name separated by '/' must be " + DNS1123_SUBDOMAIN_MSG
            )
            break


# Names that passed before: drivers repeat the same attribute names on every device of every slice.
_KNOWN_GOOD: Final[set[tuple[str, str]]] = set()
_KNOWN_GOOD_MAX: Final = 4096


def _remember(kind: str, value: str) -> None:
    if len(_KNOWN_GOOD) < _KNOWN_GOOD_MAX:
        _KNOWN_GOOD.add((kind, value))


def device_qualified_name(causes: Causes, path: str, value: str, *, fully: bool = False) -> None:
    """Attribute and capacity names: ``[<domain>/]<C identifier>``; ``fully`` demands the domain."""
    kind = "fqn" if fully else "qn"
    if (kind, value) in _KNOWN_GOOD:
        return
    before = len(causes)
    _device_qualified_name(causes, path, value, fully=fully)
    if len(causes) == before:
        _remember(kind, value)


def _device_qualified_name(causes: Causes, path: str, value: str, *, fully: bool) -> None:
    parts = value.split("/")
    if len(parts) > 2:
        causes.invalid(path, value, "must not contain more than one slash")
        return
    if len(parts) == 2:
        domain, ident = parts
        if not domain:
            causes.invalid(path, "", "the domain must not be empty")
        else:
            driver_name(causes, path, domain)
    else:
        ident = value
    if not ident:
        causes.invalid(path, "", "the name must not be empty")
    else:
        if len(ident) > DEVICE_ID_MAX:
            causes.too_long(path, DEVICE_ID_MAX)
        if not _C_IDENTIFIER_RE.match(ident):
            causes.invalid(path, ident, C_IDENTIFIER_MSG)
    if fully and len(parts) == 1:
        causes.invalid(path, value, "a fully qualified name must be a domain and a name separated by a slash")


def hashable(value: Any) -> Any:
    """A set key for any JSON value (lists and objects of bad input are unhashable as they come)."""
    try:
        hash(value)
    except TypeError:
        return json.dumps(value, sort_keys=True, default=str)
    return value


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def max_items(causes: Causes, path: str, value: Any, limit: int) -> bool:
    """Report a too-long list; True when the list is within the limit (callers then check entries)."""
    if isinstance(value, list | dict) and len(value) > limit:
        causes.too_many(path, len(value), limit)
        return False
    return True


def exactly_one(
    causes: Causes, path: str, obj: dict[str, Any], fields: list[str], *, detail: str | None = None
) -> list[str]:
    """A union: report none or several of ``fields`` set (``False`` and ``""`` count as unset)."""
    present = [f for f in fields if obj.get(f) not in (None, False, "")]
    quoted = [f"`{f}`" for f in fields]
    names = " or ".join(quoted) if len(fields) == 2 else ", ".join(quoted)
    rule = detail or f"exactly one of {names} is required"
    if not present:
        causes.required(path, rule)
    elif len(present) > 1:
        shown = "{" + ", ".join(f"`{f}`" for f in present) + "}"
        causes.invalid(path, shown, rule if detail else f"{rule}, but multiple fields are set")
    return present


# ---------------------------------------------------------------------------------------------------------
# shared building blocks


def check_taint(causes: Causes, path: str, taint: Any, old_effect: str | None) -> None:
    if not isinstance(taint, dict):
        causes.required(path)
        return
    qualified_name(causes, child(path, "key"), taint.get("key"))
    label_value(causes, child(path, "value"), taint.get("value"))
    effect = taint.get("effect")
    if not effect:
        causes.required(child(path, "effect"))
    elif effect not in TAINT_EFFECTS and effect != old_effect:
        # Stored objects may carry effects added by a later release; only new values are checked.
        causes.not_supported(child(path, "effect"), effect, TAINT_EFFECTS)


def check_selectors(causes: Causes, path: str, selectors: Any, stored: frozenset[str] = frozenset()) -> None:
    """CEL selectors: present, ≤ 10 KiB, and compiling; expressions already ``stored`` are not recompiled."""
    if not max_items(causes, path, selectors, 32):
        return
    for index, selector in enumerate(_items(selectors)):
        entry = f"{path}[{index}]"
        cel = _map(selector).get("cel")
        if not isinstance(cel, dict):
            causes.required(child(entry, "cel"))
            continue
        expression = cel.get("expression")
        expr_path = child(child(entry, "cel"), "expression")
        if not expression:
            causes.required(expr_path)
        elif isinstance(expression, str):
            if len(expression.encode()) > CEL_MAX_LEN:
                causes.too_long(expr_path, CEL_MAX_LEN)
            elif expression not in stored:
                problem = cel_problem(expression)
                if problem == COST_EXCEEDED:
                    causes.forbidden(expr_path, problem)
                elif problem:
                    causes.invalid(expr_path, expression, problem)


def selector_expressions(spec: Any, *paths: tuple[str, ...]) -> frozenset[str]:
    """The CEL expressions found under ``spec`` at the given key paths (lists are walked)."""
    found: set[str] = set()

    def walk(node: Any, rest: tuple[str, ...]) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, rest)
        elif isinstance(node, dict):
            if not rest:
                expression = _map(node.get("cel")).get("expression")
                if isinstance(expression, str):
                    found.add(expression)
            else:
                walk(node.get(rest[0]), rest[1:])

    for path in paths:
        walk(spec, path)
    return frozenset(found)


@functools.cache
def _cel_engine() -> Any:
    """The allocator's CEL engine (cel-cpp), so the pretend cluster refuses what the scheduler cannot run."""
    try:
        from allocation.allocator.cel import default_engine
    except Exception:  # noqa: BLE001 - without a working allocator the simulator still runs: syntax check only
        return None
    return default_engine()


CEL_COST_LIMIT: Final = 1_000_000
COST_EXCEEDED: Final = "too complex, exceeds cost limit"


def cel_problem(expression: str) -> str | None:
    engine = _cel_engine()
    if engine is None:
        problem = cel_syntax_problem(expression)
        return None if problem is None else f"compilation failed: {problem}"
    try:
        compiled = engine.compile(expression)
    except Exception as error:  # CelError; the engine module may not be importable for typing
        return str(error)
    cost = getattr(compiled, "estimated_cost", 0)
    if isinstance(cost, int) and cost > CEL_COST_LIMIT:
        return COST_EXCEEDED
    return None


def cel_syntax_problem(expression: str) -> str | None:
    """A light syntax check (balanced brackets, closed strings) for when the CEL engine is unavailable."""
    stack: list[str] = []
    pairs = {")": "(", "]": "[", "}": "{"}
    quote: str | None = None
    escaped = False
    for char in expression:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
            continue
        if char in "\"'":
            quote = char
        elif char in "([{":
            stack.append(char)
        elif char in ")]}" and (not stack or stack.pop() != pairs[char]):
            return f"unexpected {char!r}"
    if quote:
        return "unterminated string literal"
    if stack:
        return f"unclosed {stack[-1]!r}"
    if not expression.strip():
        return "empty expression"
    return None


def check_opaque_config(
    causes: Causes, path: str, configs: Any, limit: int = 32, *, stored: bool = False
) -> None:
    if not max_items(causes, path, configs, limit):
        return
    for index, config in enumerate(_items(configs)):
        entry = f"{path}[{index}]"
        opaque = _map(config).get("opaque")
        if not isinstance(opaque, dict):
            causes.required(child(entry, "opaque"))
            continue
        opaque_path = child(entry, "opaque")
        driver_name(causes, child(opaque_path, "driver"), opaque.get("driver"))
        check_raw_object(causes, child(opaque_path, "parameters"), opaque.get("parameters"), stored=stored)


def check_raw_object(causes: Causes, path: str, value: Any, *, stored: bool = False) -> None:
    """Opaque JSON (driver parameters, device status data): a JSON object of at most 10 KiB."""
    if value is None:
        causes.required(path)
    elif not stored and len(json.dumps(value, separators=(",", ":")).encode()) > OPAQUE_PARAMETERS_MAX:
        # Only new data is size-checked: parameters stored before the limit existed are grandfathered.
        causes.too_long(path, OPAQUE_PARAMETERS_MAX)
    elif not isinstance(value, dict):
        causes.invalid(path, "<value omitted>", "must be a valid JSON object")


def check_tolerations(causes: Causes, path: str, tolerations: Any) -> None:
    if not max_items(causes, path, tolerations, 16):
        return
    for index, toleration in enumerate(_items(tolerations)):
        entry = f"{path}[{index}]"
        tol = _map(toleration)
        key = tol.get("key") or ""
        operator = tol.get("operator") or "Equal"
        if key:
            qualified_name(causes, child(entry, "key"), key)
        if operator not in ("Equal", "Exists"):
            causes.not_supported(child(entry, "operator"), operator, ["Equal", "Exists"])
        elif operator == "Exists" and tol.get("value"):
            causes.invalid(child(entry, "value"), tol["value"], "must be empty for operator `Exists`")
        elif operator == "Equal":
            if not key:
                # The API documents this (an empty key matches all keys only with Exists).
                causes.invalid(
                    child(entry, "operator"),
                    operator,
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                )
            label_value(causes, child(entry, "value"), tol.get("value"))
        effect = tol.get("effect") or ""
        if effect and effect not in TAINT_EFFECTS:
            causes.not_supported(child(entry, "effect"), effect, TAINT_EFFECTS)


def check_conditions(causes: Causes, path: str, conditions: Any, limit: int) -> None:
    """metav1.Condition lists: unique types, known statuses, reason format, lastTransitionTime."""
    if not max_items(causes, path, conditions, limit):
        return
    seen: set[str] = set()
    for index, condition in enumerate(_items(conditions)):
        entry = f"{path}[{index}]"
        cond = _map(condition)
        ctype = cond.get("type")
        if not ctype:
            causes.required(child(entry, "type"))
        else:
            qualified_name(causes, child(entry, "type"), ctype)
            if hashable(ctype) in seen:
                causes.duplicate(child(entry, "type"), ctype)
            seen.add(hashable(ctype))
        status = cond.get("status")
        if not status:
            causes.required(child(entry, "status"))
        elif status not in ("True", "False", "Unknown"):
            causes.not_supported(child(entry, "status"), status, ["False", "True", "Unknown"])
        if not cond.get("lastTransitionTime"):
            causes.required(child(entry, "lastTransitionTime"))
        reason = cond.get("reason")
        if not reason:
            causes.required(child(entry, "reason"))
        elif isinstance(reason, str):
            if len(reason) > 1024:
                causes.too_long(child(entry, "reason"), 1024)
            if not _CONDITION_REASON_RE.match(reason):
                causes.invalid(
                    child(entry, "reason"),
                    reason,
                    "a condition reason must start with alphabetic character, optionally followed by a string "
                    "of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' "
                    "(e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or "
                    "'ReasonA:ReasonB', regex used for validation is "
                    "'[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')",
                )
        message = cond.get("message")
        if isinstance(message, str) and len(message) > 32768:
            causes.too_long(child(entry, "message"), 32768)
        generation = cond.get("observedGeneration")
        if isinstance(generation, int) and generation < 0:
            causes.invalid(
                child(entry, "observedGeneration"), generation, "must be greater than or equal to zero"
            )


def _immutable(causes: Causes, path: str, new: Any, old: Any) -> None:
    if new != old:
        causes.immutable(path, new)


# ---------------------------------------------------------------------------------------------------------
# ResourceSlice

_NODE_SELECTION: Final = ["nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection"]
_DEVICE_NODE_SELECTION: Final = ["nodeName", "nodeSelector", "allNodes"]
_SCALAR_ATTRIBUTE_FIELDS: Final = ["bool", "int", "string", "version"]
_LIST_ATTRIBUTE_FIELDS: Final = ["bools", "ints", "strings", "versions"]
_ATTRIBUTE_FIELDS: Final = frozenset(_SCALAR_ATTRIBUTE_FIELDS + _LIST_ATTRIBUTE_FIELDS)
_LIST_FIELDS: Final = frozenset(_LIST_ATTRIBUTE_FIELDS)


def _old_devices(old: dict[str, Any] | None) -> dict[str, Obj]:
    """The stored devices by name: unchanged taints and capacities are not validated again."""
    devices: dict[str, Obj] = {}
    for device in _items(_map(_map(old).get("spec")).get("devices")):
        name = _map(device).get("name")
        if isinstance(name, str):
            devices[name] = _map(device)
    return devices


def _node_selector(causes: Causes, path: str, selector: Any) -> None:
    terms = _items(_map(selector).get("nodeSelectorTerms"))
    if len(terms) != 1:
        causes.invalid(
            child(path, "nodeSelectorTerms"), len(terms), "must have exactly one node selector term"
        )


def check_resource_slice(causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None) -> list[str]:
    spec = _map(obj.get("spec"))
    driver_name(causes, "spec.driver", spec.get("driver"))
    pool = spec.get("pool")
    if not isinstance(pool, dict):
        causes.required("spec.pool")
        pool = {}
    pool_name(causes, "spec.pool.name", pool.get("name"))
    count = pool.get("resourceSliceCount")
    if not isinstance(count, int) or count <= 0:
        causes.invalid("spec.pool.resourceSliceCount", count or 0, "must be greater than zero")
    generation = pool.get("generation")
    if isinstance(generation, int) and generation < 0:
        causes.invalid("spec.pool.generation", generation, "must be greater than or equal to zero")
    if old is not None:
        old_spec = _map(old.get("spec"))
        _immutable(causes, "spec.pool.name", pool.get("name"), _map(old_spec.get("pool")).get("name"))
        _immutable(causes, "spec.driver", spec.get("driver"), old_spec.get("driver"))
        _immutable(causes, "spec.nodeName", spec.get("nodeName"), old_spec.get("nodeName"))

    if spec.get("nodeName") == "":
        causes.invalid("spec.nodeName", "", "must be either unset or set to a non-empty string")
    elif spec.get("nodeName") is not None:
        dns_subdomain(causes, "spec.nodeName", spec["nodeName"])
    for flag in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(flag) is False:
            causes.invalid(f"spec.{flag}", False, "must be either unset or set to true")
    chosen = exactly_one(causes, "spec", spec, _NODE_SELECTION)
    if "nodeSelector" in chosen:
        _node_selector(causes, "spec.nodeSelector", spec["nodeSelector"])
    per_device = spec.get("perDeviceNodeSelection") is True

    devices = _items(spec.get("devices"))
    if spec.get("devices") is not None and spec.get("sharedCounters") is not None:
        causes.invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed")
    advanced = any(_uses_advanced_features(_map(d)) for d in devices)
    limit = 64 if advanced else 128
    if len(devices) > limit:
        causes.too_many("spec.devices", len(devices), limit)
    else:
        names: set[str] = set()
        old_devices = _old_devices(old)
        for index, device in enumerate(devices):
            path = f"spec.devices[{index}]"
            name = _map(device).get("name")
            _check_device(causes, path, _map(device), per_device, old_devices.get(str(name)))
            if isinstance(name, str):
                if name in names:
                    causes.duplicate(path, name)
                names.add(name)
    _check_shared_counters(causes, spec.get("sharedCounters"))
    if spec.get("partitionTypeAttribute") is not None:
        _check_partition_type_attribute(causes, spec, devices)
    check_skip_node_operations(causes, "spec.skipNodeOperations", spec.get("skipNodeOperations"))
    return []


def _uses_advanced_features(device: dict[str, Any]) -> bool:
    """Taints, counter consumption or list attributes lower the slice's device limit to 64."""
    if device.get("taints") or device.get("consumesCounters"):
        return True
    attributes = device.get("attributes")
    if not isinstance(attributes, dict):
        return False
    return any(isinstance(a, dict) and not _LIST_FIELDS.isdisjoint(a) for a in attributes.values())


def _check_partition_type_attribute(causes: Causes, spec: dict[str, Any], devices: list[Any]) -> None:
    name = str(spec["partitionTypeAttribute"])
    consuming = [(i, _map(d)) for i, d in enumerate(devices) if _map(d).get("consumesCounters")]
    if not consuming:
        causes.invalid(
            "spec.partitionTypeAttribute",
            name,
            "may only be set on a slice which declares devices that consume counters",
        )
        return
    probe = Causes()
    device_qualified_name(probe, "spec.partitionTypeAttribute", name, fully=True)
    if probe:
        causes.items.extend(probe.items)
        return
    # An attribute in the driver's own domain may also be declared without the domain.
    bare = name.removeprefix(f"{spec.get('driver')}/") if name.startswith(f"{spec.get('driver')}/") else ""
    for index, device in consuming:
        attributes = _map(device.get("attributes"))
        attribute = attributes.get(name, attributes.get(bare) if bare else None)
        path = f"spec.devices[{index}].attributes[{name}]"
        if attribute is None:
            causes.required(
                path,
                "device consumes counters and `partitionTypeAttribute` names this attribute, so it must be set",
            )
        elif _map(attribute).get("string") is None:
            causes.invalid(
                path,
                attribute,
                "must be a string value because `partitionTypeAttribute` names this attribute",
            )


def check_skip_node_operations(causes: Causes, path: str, operations: Any) -> None:
    skipped = {hashable(op) for op in _items(operations)}
    if "NodePrepareResources" in skipped and not skipped & {"NodeUnprepareResources", "*"}:
        causes.invalid(
            path,
            "array",
            "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped",
        )


def _check_shared_counters(causes: Causes, counter_sets: Any) -> None:
    if not max_items(causes, "spec.sharedCounters", counter_sets, 8):
        return
    seen: set[str] = set()
    for index, counter_set in enumerate(_items(counter_sets)):
        path = f"spec.sharedCounters[{index}]"
        name = _map(counter_set).get("name")
        dns_label(causes, child(path, "name"), name)
        counters = _map(counter_set).get("counters")
        if not counters:
            causes.required(child(path, "counters"))
        elif max_items(causes, child(path, "counters"), counters, 32):
            for counter in _map(counters):
                dns_label(causes, child(path, "counters"), counter)
        if isinstance(name, str):
            if name in seen:
                causes.duplicate(path, name)
            seen.add(name)


def _check_device(
    causes: Causes, path: str, device: dict[str, Any], per_device: bool, old_device: Obj | None
) -> None:
    name = device.get("name")
    if not (isinstance(name, str) and ("lbl", name) in _KNOWN_GOOD):
        before = len(causes)
        dns_label(causes, path + ".name", name)
        if len(causes) == before and isinstance(name, str):
            _remember("lbl", name)
    attributes = _map(device.get("attributes"))
    capacity = _map(device.get("capacity"))
    combined = len(attributes) + len(capacity)
    if combined > 32:
        causes.invalid(path, combined, "the total number of attributes and capacities must not exceed 32")
    values = 0
    attrs_path = path + ".attributes"
    for attr_name, attribute in attributes.items():
        device_qualified_name(causes, attrs_path, attr_name)
        values += _check_attribute(causes, attrs_path, attr_name, attribute)
    if values > 48:
        causes.invalid(path, values, "the total number of attribute values must not exceed 48")

    if old_device is None or old_device.get("capacity") != device.get("capacity"):
        for cap_name, cap in capacity.items():
            cap_path = key_path(child(path, "capacity"), cap_name)
            device_qualified_name(causes, child(path, "capacity"), cap_name)
            policy = _map(cap).get("requestPolicy")
            if policy is None:
                continue
            if not device.get("allowMultipleAllocations"):
                causes.forbidden(child(cap_path, "requestPolicy"), "allowMultipleAllocations must be true")
            else:
                _check_request_policy(
                    causes, child(cap_path, "requestPolicy"), _map(policy), _map(cap).get("value")
                )

    taints = device.get("taints")
    # Unchanged taints are not validated again: a stored effect from a later release stays valid.
    changed = old_device is None or old_device.get("taints") != taints
    if taints and changed and max_items(causes, child(path, "taints"), taints, 16):
        for index, taint in enumerate(_items(taints)):
            check_taint(causes, f"{path}.taints[{index}]", taint, None)

    if device.get("consumesCounters"):
        _check_consumes_counters(causes, child(path, "consumesCounters"), device["consumesCounters"])
    check_binding_conditions(causes, path, device)

    present = [f for f in _DEVICE_NODE_SELECTION if device.get(f) is not None]
    if per_device:
        if device.get("nodeName") == "":
            causes.invalid(child(path, "nodeName"), "", "must not be empty")
        elif device.get("nodeName") is not None:
            dns_subdomain(causes, child(path, "nodeName"), device["nodeName"])
        if device.get("allNodes") is False:
            causes.invalid(child(path, "allNodes"), False, "must be either unset or set to true")
        exactly_one(
            causes,
            path,
            device,
            _DEVICE_NODE_SELECTION,
            detail="exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
            "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        )
        if device.get("nodeSelector") is not None:
            _node_selector(causes, child(path, "nodeSelector"), device["nodeSelector"])
    elif present:
        causes.invalid(
            path,
            None,
            "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set "
            "to true in the ResourceSlice spec",
        )


def check_binding_conditions(causes: Causes, path: str, holder: dict[str, Any]) -> None:
    """Binding conditions of a device (or an allocation result): ≤ 4 each, unique, disjoint, both or none."""
    conditions = _items(holder.get("bindingConditions"))
    failures = _items(holder.get("bindingFailureConditions"))
    if not conditions and not failures:
        return
    for field, values in (("bindingConditions", conditions), ("bindingFailureConditions", failures)):
        field_path = child(path, field)
        if not max_items(causes, field_path, values, 4):
            continue
        seen: set[Any] = set()
        for index, value in enumerate(values):
            qualified_name(causes, f"{field_path}[{index}]", value)
            if hashable(value) in seen:
                causes.duplicate(f"{field_path}[{index}]", value)
            seen.add(hashable(value))
    for index, value in enumerate(failures):
        if value in conditions:
            causes.invalid(
                f"{path}.bindingFailureConditions[{index}]",
                value,
                "bindingFailureConditions must not overlap with bindingConditions",
            )
    if failures and not conditions:
        causes.invalid(
            child(path, "bindingConditions"),
            "array",
            "bindingConditions are required to use bindingFailureConditions",
        )
    if conditions and not failures:
        causes.invalid(
            child(path, "bindingFailureConditions"),
            "array",
            "bindingFailureConditions are required to use bindingConditions",
        )


_QUANTITY_SUFFIXES: Final = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}
_QUANTITY_PARTS: Final = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))([eE][+-]?\d+|[a-zA-Z]*)$")


def quantity_value(value: Any) -> Decimal | None:
    """The numeric value of a Quantity (``"80Gi"``, ``"1.5"``, ``"100m"``, ``2``); None if malformed."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    match = _QUANTITY_PARTS.match(value)
    if not match:
        return None
    number, suffix = match.groups()
    if suffix[:1] in ("e", "E") and suffix[1:].lstrip("+-").isdigit():
        return Decimal(number) * (Decimal(10) ** int(suffix[1:]))
    factor = _QUANTITY_SUFFIXES.get(suffix)
    return None if factor is None else Decimal(number) * factor


def _check_request_policy(causes: Causes, path: str, policy: dict[str, Any], capacity: Any) -> None:
    total = quantity_value(capacity)
    default = quantity_value(policy.get("default"))
    valid_values = _items(policy.get("validValues"))
    valid_range = policy.get("validRange")
    if valid_values and valid_range is not None:
        causes.forbidden(
            path,
            'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time',
        )
        return
    if valid_values:
        if policy.get("default") is None:
            causes.required(child(path, "default"), "required when validValues is defined")
            return
        values_path = child(path, "validValues")
        numbers = [quantity_value(v) for v in valid_values]
        for index in range(len(numbers) - 1):
            low, high = numbers[index], numbers[index + 1]
            if low is not None and high is not None and low > high:
                causes.invalid(
                    f"{values_path}[{index + 1}]",
                    valid_values[index + 1],
                    "values must be sorted in ascending order",
                )
        if not max_items(causes, values_path, valid_values, 10):
            return
        seen: set[Decimal] = set()
        for index, (raw, number) in enumerate(zip(valid_values, numbers, strict=True)):
            if number is None:
                continue
            if total is not None and number > total:
                causes.invalid(
                    f"{values_path}[{index}]", raw, f"option is larger than capacity value: {capacity}"
                )
            if number in seen:
                causes.duplicate(f"{values_path}[{index}]", raw)
            seen.add(number)
        if default not in seen:
            causes.invalid(
                values_path,
                policy.get("default"),
                "default value is not valid according to the requestPolicy",
            )
    elif isinstance(valid_range, dict):
        if policy.get("default") is None:
            causes.required(child(path, "default"), "required when validRange is defined")
            return
        range_path = child(path, "validRange")
        raw_min, raw_max, raw_step = valid_range.get("min"), valid_range.get("max"), valid_range.get("step")
        low, high, step = quantity_value(raw_min), quantity_value(raw_max), quantity_value(raw_step)
        if low is None:
            causes.required(child(range_path, "min"), "required when validRange is defined")
            return
        if total is not None and low > total:
            causes.invalid(
                child(range_path, "min"), raw_min, f"min is larger than capacity value: {capacity}"
            )
        if default is not None and default < low:
            causes.invalid(
                child(range_path, "default"), policy.get("default"), f"default is less than min: {raw_min}"
            )
        if high is not None:
            if low > high:
                causes.invalid(child(range_path, "max"), raw_min, f"min is larger than max: {raw_max}")
            if total is not None and high > total:
                causes.invalid(
                    child(range_path, "max"), raw_max, f"max is larger than capacity value: {capacity}"
                )
            if default is not None and default > high:
                causes.invalid(
                    child(range_path, "default"),
                    policy.get("default"),
                    f"default is more than max: {raw_max}",
                )
        if step is not None:
            step_path = child(range_path, "step")
            if step <= 0:
                causes.invalid(step_path, raw_step, "must be greater than zero")
                return
            if total is not None and low + step > total:
                causes.invalid(
                    step_path, raw_step, f"one step {low + step} is larger than capacity value: {capacity}"
                )
            for raw, value in ((policy.get("default"), default), (raw_max, high)):
                if value is not None and (value - low) % step != 0:
                    causes.invalid(
                        step_path,
                        raw,
                        f"value is not a multiple of a given step ({raw_step}) from ({raw_min})",
                    )


def _check_attribute(causes: Causes, attrs_path: str, name: str, attribute: Any) -> int:
    """Check one DeviceAttribute; returns how many values it holds (towards the 48 per device)."""
    if not isinstance(attribute, dict):
        attribute = {}
    set_fields = [f for f, v in attribute.items() if v is not None and f in _ATTRIBUTE_FIELDS]
    if len(set_fields) == 1 and set_fields[0] in ("int", "bool"):
        return 1  # the common case; the schema already checked the type
    path = f"{attrs_path}[{name}]"
    values = 0
    for field in set_fields:
        value = attribute[field]
        if field in _LIST_ATTRIBUTE_FIELDS:
            elements = _items(value)
            if not elements:
                causes.invalid(child(path, field), "array", "must not be empty if specified")
            for index, element in enumerate(elements):
                _check_attribute_scalar(causes, f"{child(path, field)}[{index}]", field[:-1], element)
            values += len(elements)
        else:
            if field in ("string", "version"):
                _check_attribute_scalar(causes, child(path, field), field, value)
            values += 1
    if not set_fields:
        causes.invalid(path, "", "exactly one value must be specified")
    elif len(set_fields) > 1:
        causes.invalid(path, attribute, "exactly one value must be specified")
    return max(values, 1)


def _check_attribute_scalar(causes: Causes, path: str, kind: str, value: Any) -> None:
    if kind in ("string", "version") and isinstance(value, str):
        if kind == "version" and not _SEMVER_RE.match(value):
            causes.invalid(path, value, "must be a string compatible with semver.org spec 2.0.0")
        if len(value) > 64:
            causes.too_long(path, 64)


def _check_consumes_counters(causes: Causes, path: str, consumes: Any) -> None:
    if not consumes or not max_items(causes, path, consumes, 2):
        return
    seen: set[str] = set()
    for index, entry in enumerate(_items(consumes)):
        entry_path = f"{path}[{index}]"
        counter_set = _map(entry).get("counterSet")
        dns_label(causes, child(entry_path, "counterSet"), counter_set)
        counters = _map(entry).get("counters")
        if not counters:
            causes.required(child(entry_path, "counters"))
        elif max_items(causes, child(entry_path, "counters"), counters, 32):
            for counter in _map(counters):
                dns_label(causes, child(entry_path, "counters"), counter)
        groups = _map(entry).get("compatibilityGroups")
        groups_path = child(entry_path, "compatibilityGroups")
        if max_items(causes, groups_path, groups, 2):
            group_seen: set[Any] = set()
            for group_index, group in enumerate(_items(groups)):
                if hashable(group) in group_seen:
                    causes.duplicate(f"{groups_path}[{group_index}]", group)
                group_seen.add(hashable(group))
        if isinstance(counter_set, str):
            if counter_set in seen:
                causes.duplicate(entry_path, counter_set)
            seen.add(counter_set)


# ---------------------------------------------------------------------------------------------------------
# DeviceClass


def check_device_class(causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None) -> list[str]:
    spec = _map(obj.get("spec"))
    old_spec = _map(_map(old).get("spec")) if old is not None else None
    # Selectors (and configs) exactly as stored are not compiled (checked) again; any change checks all.
    selectors_stored = old_spec is not None and old_spec.get("selectors") == spec.get("selectors")
    stored = selector_expressions(spec, ("selectors",)) if selectors_stored else frozenset()
    check_selectors(causes, "spec.selectors", spec.get("selectors"), stored)
    config_stored = old_spec is not None and old_spec.get("config") == spec.get("config")
    check_opaque_config(causes, "spec.config", spec.get("config"), stored=config_stored)
    name = spec.get("extendedResourceName")
    if name is not None and not is_extended_resource_name(name):
        causes.invalid("spec.extendedResourceName", name, "must be a valid extended resource name")
    return []


def extended_resource_name(causes: Causes, path: str, value: Any, class_name: str) -> None:
    """Kept for callers outside this module; the rule is ``is_extended_resource_name``."""
    if not is_extended_resource_name(value):
        causes.invalid(path, value, "must be a valid extended resource name")


# ---------------------------------------------------------------------------------------------------------
# ResourceClaim and ResourceClaimTemplate


def is_extended_resource_name(value: Any) -> bool:
    """Domain-prefixed, outside ``kubernetes.io/``, and a qualified name after ``requests.``."""
    if not isinstance(value, str) or "/" not in value or "kubernetes.io/" in value:
        return False
    if value.startswith("requests."):
        return False
    probe = Causes()
    qualified_name(probe, "", "requests." + value)
    return not probe


def check_claim_spec(causes: Causes, path: str, spec: dict[str, Any]) -> None:
    devices = _map(spec.get("devices"))
    devices_path = child(path, "devices")
    requests = devices.get("requests")
    constraints = devices.get("constraints")
    known = request_references(requests)
    constrained = _constraint_attributes(constraints)
    request_path = child(devices_path, "requests")
    if max_items(causes, request_path, requests, 32):
        names: set[str] = set()
        for index, request in enumerate(_items(requests)):
            entry = f"{request_path}[{index}]"
            _check_request(causes, entry, _map(request), constrained)
            name = _map(request).get("name")
            if isinstance(name, str) and name:
                if name in names:
                    causes.duplicate(entry, name)
                names.add(name)

    constraint_path = child(devices_path, "constraints")
    if max_items(causes, constraint_path, constraints, 32):
        for index, constraint in enumerate(_items(constraints)):
            entry = f"{constraint_path}[{index}]"
            con = _map(constraint)
            _check_request_refs(causes, child(entry, "requests"), con.get("requests"), known)
            chosen = [f for f in ("matchAttribute", "distinctAttribute") if con.get(f) is not None]
            if not chosen:
                causes.required(
                    entry,
                    'exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set',
                )
            elif len(chosen) > 1:
                causes.invalid(
                    entry,
                    None,
                    'exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set',
                )
            for field in chosen:
                if isinstance(con[field], str):
                    device_qualified_name(causes, child(entry, field), con[field], fully=True)

    configs = devices.get("config")
    config_path = child(devices_path, "config")
    check_opaque_config(causes, config_path, configs)
    if max_items(causes, config_path, configs, 32):
        for index, config in enumerate(_items(configs)):
            _check_request_refs(
                causes, f"{config_path}[{index}].requests", _map(config).get("requests"), known
            )


def request_references(requests: Any) -> set[str]:
    """What constraints, configs and results may name: ``req`` and, for prioritized lists, ``req/sub``."""
    known: set[str] = set()
    for request in _items(requests):
        name = _map(request).get("name")
        if not isinstance(name, str):
            continue
        known.add(name)
        for sub in _items(_map(request).get("firstAvailable")):
            known.add(f"{name}/{_map(sub).get('name')}")
    return known


def _constraint_attributes(constraints: Any) -> dict[str, set[str]]:
    """Attribute names used by constraints, per targeted request ("" = every request)."""
    used: dict[str, set[str]] = {}
    for constraint in _items(constraints):
        con = _map(constraint)
        attribute = con.get("matchAttribute") or con.get("distinctAttribute")
        if not isinstance(attribute, str):
            continue
        for target in _items(con.get("requests")) or [""]:
            used.setdefault(str(target), set()).add(attribute)
    return used


def _check_request_refs(causes: Causes, path: str, refs: Any, known: set[str]) -> None:
    if not max_items(causes, path, refs, 32):
        return
    seen: set[Any] = set()
    for index, ref in enumerate(_items(refs)):
        ref_path = f"{path}[{index}]"
        _check_request_ref(causes, ref_path, ref, known)
        if hashable(ref) in seen:
            causes.duplicate(ref_path, ref)
        seen.add(hashable(ref))


def _check_request_ref(causes: Causes, path: str, ref: Any, known: set[str]) -> None:
    if not isinstance(ref, str) or ref.count("/") > 1 or ref not in known:
        causes.invalid(
            path,
            ref,
            "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
        )


def _check_request(
    causes: Causes, path: str, request: dict[str, Any], constrained: dict[str, set[str]]
) -> None:
    name = request.get("name")
    dns_label(causes, child(path, "name"), name)
    has_exactly = request.get("exactly") is not None
    has_first = bool(request.get("firstAvailable"))
    if not has_exactly and not has_first:
        causes.required(path, "exactly one of `exactly` or `firstAvailable` is required")
    elif has_exactly and has_first:
        causes.invalid(
            path,
            None,
            "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
        )
    elif has_exactly:
        _check_exact(causes, child(path, "exactly"), _map(request["exactly"]), str(name), constrained)
    else:
        subs = request["firstAvailable"]
        sub_path = child(path, "firstAvailable")
        if max_items(causes, sub_path, subs, 8):
            sub_names: set[str] = set()
            for index, sub in enumerate(_items(subs)):
                entry = f"{sub_path}[{index}]"
                sub_name = _map(sub).get("name")
                dns_label(causes, child(entry, "name"), sub_name)
                _check_exact(causes, entry, _map(sub), f"{name}/{sub_name}", constrained)
                if isinstance(sub_name, str) and sub_name:
                    if sub_name in sub_names:
                        causes.duplicate(entry, sub_name)
                    sub_names.add(sub_name)


def _check_exact(
    causes: Causes, path: str, request: dict[str, Any], reference: str, constrained: dict[str, set[str]]
) -> None:
    """An ExactDeviceRequest or a DeviceSubRequest (``reference`` is ``req`` or ``req/sub``)."""
    dns_subdomain(causes, child(path, "deviceClassName"), request.get("deviceClassName"))
    check_selectors(causes, child(path, "selectors"), request.get("selectors"))
    mode = request.get("allocationMode") or "ExactCount"
    count = request.get("count")
    if mode not in ("ExactCount", "All"):
        causes.not_supported(child(path, "allocationMode"), mode, ["All", "ExactCount"])
    elif mode == "All" and count not in (None, 0):
        causes.invalid(child(path, "count"), count, "must not be specified when allocationMode is 'All'")
    elif mode == "ExactCount" and isinstance(count, int) and count <= 0:
        causes.invalid(child(path, "count"), count, "must be greater than zero")
    check_tolerations(causes, child(path, "tolerations"), request.get("tolerations"))
    capacity = _map(_map(request.get("capacity")).get("requests"))
    for cap_name in capacity:
        device_qualified_name(causes, child(child(path, "capacity"), "requests"), cap_name)
    derived = request.get("derivedAttributes")
    derived_path = child(path, "derivedAttributes")
    parent = reference.split("/", 1)[0]
    usable = constrained.get("", set()) | constrained.get(reference, set()) | constrained.get(parent, set())
    if max_items(causes, derived_path, derived, 32):
        seen: set[Any] = set()
        for index, attribute in enumerate(_items(derived)):
            entry = f"{derived_path}[{index}]"
            attr_name = _map(attribute).get("name")
            if not attr_name:
                causes.required(child(entry, "name"))
            elif isinstance(attr_name, str):
                device_qualified_name(causes, child(entry, "name"), attr_name, fully=True)
                if attr_name not in usable:
                    causes.invalid(
                        child(entry, "name"),
                        attr_name,
                        "must be referenced by at least one matchAttribute or distinctAttribute constraint "
                        "targeting this request",
                    )
            expression = _map(attribute).get("expression")
            if not expression:
                causes.required(child(entry, "expression"))
            elif isinstance(expression, str) and len(expression.encode()) > CEL_MAX_LEN:
                causes.too_long(child(entry, "expression"), CEL_MAX_LEN)
            if hashable(attr_name) in seen:
                causes.duplicate(entry, attr_name)
            seen.add(hashable(attr_name))


def check_resource_claim(
    causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None, subresource: str | None
) -> list[str]:
    spec = _map(obj.get("spec"))
    if old is None:
        check_claim_spec(causes, "spec", spec)
    elif subresource != "status" and spec != _map(old.get("spec")):
        # The spec is immutable: on update only that is reported, the old content is not re-judged.
        causes.immutable("spec", spec)
    if old is not None or obj.get("status"):
        _check_claim_status(causes, obj, old)
    return []


def _allocated_devices(allocation: dict[str, Any]) -> set[Any]:
    results = _items(_map(allocation.get("devices")).get("results"))
    return {
        hashable((_map(r).get("driver"), _map(r).get("pool"), _map(r).get("device"), _map(r).get("shareID")))
        for r in results
    }


def _check_claim_status(causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    status = _map(obj.get("status"))
    old_status = _map(_map(old).get("status"))
    allocation = status.get("allocation")
    old_allocation = old_status.get("allocation")

    reserved = status.get("reservedFor")
    if max_items(causes, "status.reservedFor", reserved, 256):
        uids: set[Any] = set()
        for index, consumer in enumerate(_items(reserved)):
            entry = f"status.reservedFor[{index}]"
            ref = _map(consumer)
            for field in ("resource", "name", "uid"):
                if not ref.get(field):
                    causes.required(child(entry, field))
            uid = ref.get("uid")
            if hashable(uid) in uids:
                causes.duplicate(entry, uid)
            uids.add(hashable(uid))

    allocated = _allocated_devices(_map(allocation))
    seen: set[tuple[Any, ...]] = set()
    for index, device_status in enumerate(_items(status.get("devices"))):
        entry = f"status.devices[{index}]"
        ds = _map(device_status)
        key = (ds.get("driver"), ds.get("pool"), ds.get("device"), ds.get("shareID"))
        driver_name(causes, child(entry, "driver"), ds.get("driver"))
        pool_name(causes, child(entry, "pool"), ds.get("pool"))
        dns_label(causes, child(entry, "device"), ds.get("device"))
        shown = "/".join(str(k) for k in key[:3]) + (f"/{key[3]}" if key[3] else "")
        if hashable(key) not in allocated:
            causes.invalid(entry, shown, "must be an allocated device in the claim")
        if hashable(key) in seen:
            causes.duplicate(entry, shown)
        seen.add(hashable(key))
        check_conditions(causes, child(entry, "conditions"), ds.get("conditions"), 8)
        if ds.get("data") is not None:
            check_raw_object(causes, child(entry, "data"), ds.get("data"))
        _check_network_data(causes, child(entry, "networkData"), ds.get("networkData"))

    if reserved:
        if allocation is None:
            causes.forbidden("status.reservedFor", "may not be specified when `allocated` is not set")
        elif _map(obj.get("metadata")).get("deletionTimestamp"):
            before = {json.dumps(r, sort_keys=True) for r in _items(old_status.get("reservedFor"))}
            if any(json.dumps(r, sort_keys=True) not in before for r in _items(reserved)):
                causes.forbidden(
                    "status.reservedFor",
                    "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set",
                )

    if old_allocation is not None and allocation is not None:
        if allocation != old_allocation:
            causes.immutable("status.allocation", allocation)
    elif isinstance(allocation, dict):
        _check_allocation(causes, allocation, _map(obj.get("spec")))


def _check_network_data(causes: Causes, path: str, network: Any) -> None:
    data = _map(network)
    interface = data.get("interfaceName")
    if isinstance(interface, str) and len(interface.encode()) > 256:
        causes.too_long(child(path, "interfaceName"), 256)
    address = data.get("hardwareAddress")
    if isinstance(address, str) and len(address.encode()) > 128:
        causes.too_long(child(path, "hardwareAddress"), 128)
    ips = data.get("ips")
    if not max_items(causes, child(path, "ips"), ips, 16):
        return
    seen: set[str] = set()
    for index, ip in enumerate(_items(ips)):
        ip_path = f"{child(path, 'ips')}[{index}]"
        if hashable(ip) in seen:
            causes.duplicate(ip_path, ip)
        seen.add(hashable(ip))
        try:
            ipaddress.ip_interface(str(ip))
            if "/" not in str(ip):
                raise ValueError(ip)
        except ValueError:
            causes.invalid(
                ip_path, ip, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)"
            )


def _check_allocation(causes: Causes, allocation: dict[str, Any], spec: dict[str, Any]) -> None:
    known = request_references(_map(spec.get("devices")).get("requests"))
    devices = _map(allocation.get("devices"))
    results = devices.get("results")
    results_path = "status.allocation.devices.results"
    if max_items(causes, results_path, results, 32):
        for index, result in enumerate(_items(results)):
            entry = f"{results_path}[{index}]"
            res = _map(result)
            _check_request_ref(causes, child(entry, "request"), res.get("request"), known)
            driver_name(causes, child(entry, "driver"), res.get("driver"))
            pool_name(causes, child(entry, "pool"), res.get("pool"))
            dns_label(causes, child(entry, "device"), res.get("device"))
            check_binding_conditions(causes, entry, res)
            check_tolerations(causes, child(entry, "tolerations"), res.get("tolerations"))
            share_id = res.get("shareID")
            if share_id is not None and not _UUID_RE.match(str(share_id)):
                causes.invalid(
                    child(entry, "shareID"),
                    share_id,
                    "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase "
                    "hexadecimal characters",
                )
            check_skip_node_operations(
                causes, child(entry, "skipNodeOperations"), res.get("skipNodeOperations")
            )
    configs = devices.get("config")
    config_path = "status.allocation.devices.config"
    if max_items(causes, config_path, configs, 64):
        for index, config in enumerate(_items(configs)):
            entry = f"{config_path}[{index}]"
            source = _map(config).get("source")
            if not source:
                causes.required(child(entry, "source"))
            elif source not in ("FromClass", "FromClaim"):
                causes.not_supported(child(entry, "source"), source, ["FromClaim", "FromClass"])
            _check_request_refs(causes, child(entry, "requests"), _map(config).get("requests"), known)
        check_opaque_config(causes, config_path, configs, 64)
    node_selector = allocation.get("nodeSelector")
    if isinstance(node_selector, dict) and not _items(node_selector.get("nodeSelectorTerms")):
        causes.required(
            "status.allocation.nodeSelector.nodeSelectorTerms", "must have at least one node selector term"
        )


def check_resource_claim_template(
    causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None
) -> list[str]:
    spec = _map(obj.get("spec"))
    if old is not None:
        # The spec is immutable: on update only that is reported.
        if spec != _map(old.get("spec")):
            causes.immutable("spec", spec)
        return []
    meta = _map(spec.get("metadata"))
    for field in meta:
        if field not in ("labels", "annotations"):
            causes.forbidden(f"spec.metadata.{field}", "cannot be set")
    for key, value in _map(meta.get("labels")).items():
        qualified_name(causes, "spec.metadata.labels", key)
        label_value(causes, "spec.metadata.labels", value)
    for key in _map(meta.get("annotations")):
        qualified_name(causes, "spec.metadata.annotations", key.lower())
    check_claim_spec(causes, "spec.spec", _map(spec.get("spec")))
    return []


# ---------------------------------------------------------------------------------------------------------
# DeviceTaintRule

EMPTY_SELECTOR_WARNING: Final = (
    "spec.deviceSelector: the empty deviceSelector matches all devices of all drivers in the cluster; "
    "set driver, pool or device to limit which devices get the taint"
)


def check_device_taint_rule(
    causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None, subresource: str | None
) -> list[str]:
    warnings: list[str] = []
    spec = _map(obj.get("spec"))
    selector = spec.get("deviceSelector")
    if isinstance(selector, dict):
        if selector.get("driver") is not None:
            driver_name(causes, "spec.deviceSelector.driver", selector["driver"])
        if selector.get("pool") is not None:
            pool_name(causes, "spec.deviceSelector.pool", selector["pool"])
        if selector.get("device") is not None:
            dns_label(causes, "spec.deviceSelector.device", selector["device"])
        if not any(selector.get(f) for f in ("driver", "pool", "device")) and subresource != "status":
            warnings.append(EMPTY_SELECTOR_WARNING)
    old_effect = _map(_map(_map(old).get("spec")).get("taint")).get("effect") if old is not None else None
    check_taint(causes, "spec.taint", spec.get("taint"), old_effect)
    check_conditions(causes, "status.conditions", _map(obj.get("status")).get("conditions"), 8)
    return warnings


# ---------------------------------------------------------------------------------------------------------
# ResourcePoolStatusRequest (v1alpha3)


def check_pool_status_request(
    causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None, subresource: str | None
) -> list[str]:
    spec = _map(obj.get("spec"))
    if old is not None:
        if subresource != "status" and spec != _map(old.get("spec")):
            causes.immutable("spec", spec)
        old_status = old.get("status")
        if subresource == "status" and old_status is not None:
            # A filled status is the complete answer: delete and recreate the request to refresh it.
            if obj.get("status") != old_status:
                causes.immutable("status", obj.get("status"))
            return []
    if old is None or subresource != "status":
        driver = spec.get("driver")
        if not driver:
            causes.required("spec.driver", "driver name is required")
        else:
            driver_name(causes, "spec.driver", driver)
        if spec.get("poolName") == "":
            causes.invalid("spec.poolName", "", "must not be empty when specified")
        elif spec.get("poolName") is not None:
            pool_name(causes, "spec.poolName", spec["poolName"])
        limit = spec.get("limit")
        if isinstance(limit, int) and limit < 1:
            causes.invalid("spec.limit", limit, "must be at least 1")
        if isinstance(limit, int) and limit > 1000:
            causes.invalid("spec.limit", limit, "must not exceed 1000")
        attribute = spec.get("defaultPartitionTypeAttribute")
        if isinstance(attribute, str) and attribute:
            device_qualified_name(causes, "spec.defaultPartitionTypeAttribute", attribute, fully=True)
    status = obj.get("status")
    if isinstance(status, dict):
        count = status.get("poolCount")
        if isinstance(count, int) and count < 0:
            causes.invalid("status.poolCount", count, "must be non-negative")
        pools = status.get("pools")
        if max_items(causes, "status.pools", pools, 1000):
            for index, pool in enumerate(_items(pools)):
                entry = f"status.pools[{index}]"
                driver_name(causes, child(entry, "driver"), _map(pool).get("driver"))
                pool_name(causes, child(entry, "poolName"), _map(pool).get("poolName"))
                for field in ("totalDevices", "allocatedDevices", "availableDevices", "unavailableDevices"):
                    value = _map(pool).get(field)
                    if isinstance(value, int) and value < 0:
                        causes.invalid(child(entry, field), value, "must be non-negative")
                error = _map(pool).get("validationError")
                if isinstance(error, str) and len(error.encode()) > 256:
                    causes.too_long(child(entry, "validationError"), 256)
        check_conditions(causes, "status.conditions", status.get("conditions"), 10)
    return []
