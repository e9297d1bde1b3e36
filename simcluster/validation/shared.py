"""What several resource.k8s.io kinds embed: taints, tolerations, opaque driver config, conditions,
binding conditions and skipped node operations, plus the helpers for reading JSON of any shape.

Input here has passed the JSON schema only as far as it goes: every reader tolerates wrong types.
"""

from __future__ import annotations

import json
import re
from contextvars import ContextVar
from typing import Any, Final

from dra.allocator.features import DEFAULT_FEATURES
from dra.names import dns1123_subdomain_errors, qualified_name_errors
from dra.taints import KNOWN_EFFECTS
from simcluster.schema import Causes, child
from simcluster.validation.names import driver_name, invalid_name, label_value, qualified_name

Obj = dict[str, Any]

OPAQUE_PARAMETERS_MAX: Final = 10 * 1024
TAINT_EFFECTS: Final = sorted(KNOWN_EFFECTS)

_CONDITION_REASON_RE: Final = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")


#: The DRA feature gates on for the validation under way (upstream names without the DRA prefix, as
#: `dra.allocator.features` spells them); `validate` sets it from the server's ``--features``.
FEATURES: ContextVar[frozenset[str]] = ContextVar("features", default=DEFAULT_FEATURES)


def gate_on(name: str) -> bool:
    """Whether the feature gate ``name`` (e.g. ``ListTypeAttributes``) is on for this validation."""
    return name in FEATURES.get()


# ---------------------------------------------------------------------------------------------------------
# reading JSON of any shape


def hashable(value: Any) -> Any:
    """A set key for any JSON value (lists and objects of bad input are unhashable as they come)."""
    try:
        hash(value)
    except TypeError:
        return json.dumps(value, sort_keys=True, default=str)
    return value


def as_list(value: Any) -> list[Any]:
    """The list, or an empty one for any other value."""
    return value if isinstance(value, list) else []


def as_map(value: Any) -> dict[str, Any]:
    """The object, or an empty one for any other value."""
    return value if isinstance(value, dict) else {}


def max_items(causes: Causes, path: str, value: Any, limit: int) -> bool:
    """Report a too-long list; True when the list is within the limit (callers then check entries)."""
    if isinstance(value, list | dict) and len(value) > limit:
        causes.too_many(path, len(value), limit)
        return False
    return True


def entries(causes: Causes, path: str, value: Any, limit: int) -> list[tuple[str, Any]]:
    """A list's items with their paths (``path[i]``); none when it is longer than ``limit`` (reported)."""
    if not max_items(causes, path, value, limit):
        return []
    return [(f"{path}[{index}]", item) for index, item in enumerate(as_list(value))]


def unique(causes: Causes, path: str, value: Any, seen: set[Any]) -> None:
    """Report ``value`` as a duplicate if ``seen`` holds it already; then add it to ``seen``."""
    key = hashable(value)
    if key in seen:
        causes.duplicate(path, value)
    seen.add(key)


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
# parts that several kinds embed


def check_taint(causes: Causes, path: str, taint: Any, old_effect: str | None) -> None:
    if not isinstance(taint, dict):
        causes.required(path)
        return
    key = taint.get("key")
    if key == "" or key is None:
        # upstream validates the key as a label name, which an empty one is not (two messages)
        invalid_name(causes, child(path, "key"), "", qualified_name_errors(""))
    else:
        qualified_name(causes, child(path, "key"), key)
    label_value(causes, child(path, "value"), taint.get("value"))
    effect = taint.get("effect")
    if not effect:
        causes.required(child(path, "effect"))
    elif effect not in TAINT_EFFECTS and effect != old_effect:
        # Stored objects may carry effects added by a later release; only new values are checked.
        causes.not_supported(child(path, "effect"), effect, TAINT_EFFECTS)


_SELECTOR_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def check_node_selector(causes: Causes, path: str, selector: Any) -> None:
    """A core/v1 NodeSelector as kube-apiserver's core validation judges it (ValidateNodeSelector): at least
    one term; requirements with a supported operator, values as it wants them, label-name keys and
    label values; field requirements on metadata.name with exactly one node name."""
    terms_path = child(path, "nodeSelectorTerms")
    terms = as_list(as_map(selector).get("nodeSelectorTerms"))
    if not terms:
        causes.required(terms_path, "must have at least one node selector term")
        return
    for index, term in enumerate(terms):
        term_path = f"{terms_path}[{index}]"
        for number, requirement in enumerate(as_list(as_map(term).get("matchExpressions"))):
            _check_requirement(causes, f"{term_path}.matchExpressions[{number}]", as_map(requirement))
        for number, requirement in enumerate(as_list(as_map(term).get("matchFields"))):
            _check_field_requirement(causes, f"{term_path}.matchFields[{number}]", as_map(requirement))


def _check_requirement(causes: Causes, path: str, requirement: dict[str, Any]) -> None:
    operator, values = requirement.get("operator"), as_list(requirement.get("values"))
    values_path = child(path, "values")
    if operator in ("In", "NotIn") and not values:
        causes.required(values_path, "must be specified when `operator` is 'In' or 'NotIn'")
    elif operator in ("Exists", "DoesNotExist") and values:
        causes.forbidden(values_path, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    elif operator in ("Gt", "Lt") and len(values) != 1:
        causes.required(values_path, "must be specified single value when `operator` is 'Lt' or 'Gt'")
    elif isinstance(operator, str) and operator and operator not in _SELECTOR_OPERATORS:
        causes.invalid(child(path, "operator"), operator, "not a valid selector operator")
    key = requirement.get("key")
    if isinstance(key, str) and key:
        qualified_name(causes, child(path, "key"), key)
    for index, value in enumerate(values):
        label_value(causes, f"{values_path}[{index}]", value)


def _check_field_requirement(causes: Causes, path: str, requirement: dict[str, Any]) -> None:
    operator, values = requirement.get("operator"), as_list(requirement.get("values"))
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            causes.required(
                child(path, "values"),
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )
    elif isinstance(operator, str) and operator:
        causes.invalid(child(path, "operator"), operator, "not a valid selector operator")
    key = requirement.get("key")
    if key != "metadata.name":
        if isinstance(key, str) and key:
            causes.invalid(child(path, "key"), key, "not a valid field selector key")
        return
    for index, value in enumerate(values):
        if isinstance(value, str):
            invalid_name(causes, f"{path}.values[{index}]", value, dns1123_subdomain_errors(value))


def check_opaque_config(
    causes: Causes, path: str, configs: Any, limit: int = 32, *, stored: bool = False
) -> None:
    for entry, config in entries(causes, path, configs, limit):
        opaque = as_map(config).get("opaque")
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
    for entry, toleration in entries(causes, path, tolerations, 16):
        tol = as_map(toleration)
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
    seen: set[str] = set()
    for entry, condition in entries(causes, path, conditions, limit):
        cond = as_map(condition)
        ctype = cond.get("type")
        if not ctype:
            causes.required(child(entry, "type"))
        else:
            qualified_name(causes, child(entry, "type"), ctype)
            unique(causes, child(entry, "type"), ctype, seen)
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
            if not _CONDITION_REASON_RE.fullmatch(reason):
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


def check_skip_node_operations(causes: Causes, path: str, operations: Any) -> None:
    skipped = {hashable(op) for op in as_list(operations)}
    if "NodePrepareResources" in skipped and not skipped & {"NodeUnprepareResources", "*"}:
        causes.invalid(
            path,
            "array",
            "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped",
        )


def check_binding_conditions(causes: Causes, path: str, holder: dict[str, Any]) -> None:
    """Binding conditions of a device (or an allocation result): ≤ 4 each, unique, disjoint, both or none."""
    conditions = as_list(holder.get("bindingConditions"))
    failures = as_list(holder.get("bindingFailureConditions"))
    if not conditions and not failures:
        return
    for field, values in (("bindingConditions", conditions), ("bindingFailureConditions", failures)):
        seen: set[Any] = set()
        for entry, value in entries(causes, child(path, field), values, 4):
            qualified_name(causes, entry, value)
            unique(causes, entry, value, seen)
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
