"""What-if input, validated at submit time.

Everything the worker or the allocator would otherwise trip over is checked here, so a bad question
answers 400 naming the field instead of a run that "succeeds" with the same error on every node:
structure and types, the API's limits (dra-api.md §2), every CEL selector compiled with the
allocator's own engine, DeviceClasses and referenced objects resolved against the inventory, and
finally the allocator's own claim conversion (`prepare_claim`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from allocation.snapshot import Obj
from allocation.whatif.base import Lookup, WhatIfInputError
from dra import names
from dra.allocator import AllocationError, prepare_claim
from dra.allocator.cel import COST_LIMIT, MAX_EXPRESSION_BYTES, CelError, default_engine
from dra.quantity import Quantity, QuantityError
from dra.taints import KNOWN_EFFECTS
from dra.yamlshape import YamlShapeError, check_yaml_shape

SUBJECT_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "Pod")
#: the version each subject is read as (an older resource.k8s.io object needs the upgrade page first)
API_VERSIONS = {
    "ResourceClaim": "resource.k8s.io/v1",
    "ResourceClaimTemplate": "resource.k8s.io/v1",
    "Pod": "v1",
}
UPGRADE_PAGE = "/migration/upgrade/"
EFFECTS = KNOWN_EFFECTS
MAX_YAML_BYTES = 256 * 1024
DEFAULT_MAX_PER_NODE = 256

# The API's limits (resource/v1 types.go, dra-api.md §2).
MAX_REQUESTS = 32
MAX_SUBREQUESTS = 8
MAX_SELECTORS = 32
MAX_TOLERATIONS = 16
MAX_CONSTRAINTS = 32
MAX_CONFIGS = 32
MAX_COUNT = 32  # results per claim
MODES = ("ExactCount", "All")
OPERATORS = ("Equal", "Exists")
TOLERATION_EFFECTS = ("", "NoSchedule", "NoExecute")

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")


# --------------------------------------------------------------------------- small typed readers


def text(data: Mapping[str, Any], key: str, field: str, *, required: bool = True, max_len: int = 253) -> str:
    """The string `data[key]`; "" when absent and not required."""
    value = data.get(key)
    if value is None or value == "":
        if required:
            raise WhatIfInputError(field, "is required")
        return ""
    if not isinstance(value, str):
        raise WhatIfInputError(field, f"must be a string, got {type(value).__name__}")
    if len(value) > max_len:
        raise WhatIfInputError(field, f"must be at most {max_len} characters, got {len(value)}")
    return value


def integer(data: Mapping[str, Any], key: str, field: str, *, default: int, low: int, high: int) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise WhatIfInputError(field, f"must be an integer from {low} to {high}, got {value!r}")
    return value


def _mapping(value: object, field: str, *, required: bool = False) -> Mapping[str, Any]:
    if value is None and not required:
        return {}
    if not isinstance(value, Mapping):
        raise WhatIfInputError(field, "must be a mapping" + ("" if value is not None else " (required)"))
    return value


def _list(value: object, field: str, *, limit: int) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise WhatIfInputError(field, "must be a list")
    if len(value) > limit:
        raise WhatIfInputError(field, f"must have at most {limit} entries, got {len(value)}")
    return value


def _name(value: object, field: str, pattern: re.Pattern[str], what: str, max_len: int) -> str:
    if not isinstance(value, str) or not value:
        raise WhatIfInputError(field, "is required")
    if len(value) > max_len or not pattern.match(value):
        raise WhatIfInputError(field, f"must be {what} (at most {max_len} characters), got {value!r}")
    return value


def _qualified_name(value: object, field: str) -> str:
    """A FullyQualifiedName (`domain/identifier`), as matchAttribute and distinctAttribute need."""
    if not isinstance(value, str) or "/" not in value:
        raise WhatIfInputError(
            field, f"must be a fully qualified attribute name (domain/name), got {value!r}"
        )
    domain, _, ident = value.partition("/")
    if len(domain) > 63 or not _DNS_SUBDOMAIN.match(domain) or not _C_IDENTIFIER.match(ident):
        raise WhatIfInputError(
            field, f"must be a fully qualified attribute name (domain/name), got {value!r}"
        )
    return value


def check_format(value: str, field: str, rule: Callable[[str], list[str]]) -> None:
    """`value` against one of `dra.names`' formats (the API server's), in its words."""
    problems = rule(value)
    if problems:
        raise WhatIfInputError(
            field, f"Invalid value: {json.dumps(value, ensure_ascii=False)}: {'; '.join(problems)}"
        )


def _quantity(value: object, field: str) -> Quantity:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise WhatIfInputError(field, f"must be a quantity such as 80Gi, got {value!r}")
    try:
        return Quantity.parse(str(value).strip())
    except QuantityError as exc:
        raise WhatIfInputError(field, f"must be a quantity such as 80Gi: {exc}") from None


# --------------------------------------------------------------------------- CEL and classes


def check_cel(expression: object, field: str) -> None:
    """Compile with the allocator's CEL engine (what the worker will run), cost estimate included."""
    if not isinstance(expression, str) or not expression.strip():
        raise WhatIfInputError(field, "is required — a CEL expression")
    if len(expression.encode()) > MAX_EXPRESSION_BYTES:
        raise WhatIfInputError(field, f"must be at most {MAX_EXPRESSION_BYTES} bytes")
    try:
        compiled = default_engine().compile(expression)
    except CelError as exc:
        raise WhatIfInputError(field, f"invalid CEL: {exc}") from None
    cost = getattr(compiled, "estimated_cost", 0)
    if isinstance(cost, int) and cost > COST_LIMIT:
        raise WhatIfInputError(field, f"CEL estimated cost {cost} exceeds the limit of {COST_LIMIT}")


def _check_selectors(raw: object, field: str) -> None:
    for i, selector in enumerate(_list(raw, field, limit=MAX_SELECTORS)):
        where = f"{field}[{i}]"
        selector = _mapping(selector, where, required=True)
        unknown = sorted(set(selector) - {"cel"})
        if unknown:
            raise WhatIfInputError(where, f"unsupported field(s) {', '.join(unknown)} (only cel)")
        cel = _mapping(selector.get("cel"), f"{where}.cel", required=True)
        check_cel(cel.get("expression"), f"{where}.cel.expression")


def check_class(name: str, field: str, lookup: Lookup) -> None:
    """The DeviceClass must exist, and its own selectors must compile with this engine."""
    obj = lookup.find("DeviceClass", "", name)
    if obj is None:
        raise WhatIfInputError(field, f"DeviceClass {name} is not in the inventory")
    try:
        spec = _mapping(obj.get("spec"), "spec")
        for i, selector in enumerate(_list(spec.get("selectors"), "spec.selectors", limit=MAX_SELECTORS)):
            cel = _mapping(_mapping(selector, f"spec.selectors[{i}]").get("cel"), f"spec.selectors[{i}].cel")
            check_cel(cel.get("expression"), f"spec.selectors[{i}].cel.expression")
    except WhatIfInputError as exc:
        raise WhatIfInputError(field, f"DeviceClass {name} cannot be used: {exc}") from None


# --------------------------------------------------------------------------- claims


def _check_request_spec(raw: Mapping[str, Any], field: str, lookup: Lookup, *, sub: bool) -> set[str]:
    """One `exactly` request or `firstAvailable` subrequest."""
    allowed = {"deviceClassName", "selectors", "allocationMode", "count", "tolerations", "capacity"}
    allowed |= {"name"} if sub else {"adminAccess"}
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise WhatIfInputError(field, f"unsupported field(s) {', '.join(unknown)}")
    class_name = _name(raw.get("deviceClassName"), f"{field}.deviceClassName", _DNS_SUBDOMAIN,
                       "a DNS subdomain", 253)  # fmt: skip
    check_class(class_name, f"{field}.deviceClassName", lookup)
    mode = raw.get("allocationMode", "ExactCount")
    if mode not in MODES:
        raise WhatIfInputError(f"{field}.allocationMode", f"must be one of {', '.join(MODES)}, got {mode!r}")
    if "count" in raw:
        count = raw["count"]
        if isinstance(count, bool) or not isinstance(count, int):
            raise WhatIfInputError(f"{field}.count", f"must be an integer, got {count!r}")
        if mode == "All":
            raise WhatIfInputError(f"{field}.count", "must not be set with allocationMode All")
        if not 1 <= count <= MAX_COUNT:
            raise WhatIfInputError(f"{field}.count", f"must be from 1 to {MAX_COUNT}, got {count}")
    if "adminAccess" in raw and not isinstance(raw["adminAccess"], bool):
        raise WhatIfInputError(f"{field}.adminAccess", "must be true or false")
    _check_selectors(raw.get("selectors"), f"{field}.selectors")
    for i, toleration in enumerate(
        _list(raw.get("tolerations"), f"{field}.tolerations", limit=MAX_TOLERATIONS)
    ):
        _check_toleration(toleration, f"{field}.tolerations[{i}]")
    capacity = _mapping(raw.get("capacity"), f"{field}.capacity")
    unknown = sorted(set(capacity) - {"requests"})
    if unknown:
        raise WhatIfInputError(f"{field}.capacity", f"unsupported field(s) {', '.join(unknown)}")
    for key, value in _mapping(capacity.get("requests"), f"{field}.capacity.requests").items():
        _quantity(value, f"{field}.capacity.requests[{key}]")
    return {class_name}


def _check_toleration(raw: object, field: str) -> None:
    toleration = _mapping(raw, field, required=True)
    unknown = sorted(set(toleration) - {"key", "operator", "value", "effect", "tolerationSeconds"})
    if unknown:
        raise WhatIfInputError(field, f"unsupported field(s) {', '.join(unknown)}")
    operator = toleration.get("operator", "Equal")
    if operator not in OPERATORS:
        raise WhatIfInputError(
            f"{field}.operator", f"must be one of {', '.join(OPERATORS)}, got {operator!r}"
        )
    for key in ("key", "value"):
        if toleration.get(key) is not None and not isinstance(toleration[key], str):
            raise WhatIfInputError(f"{field}.{key}", "must be a string")
    if toleration.get("key"):
        check_format(toleration["key"], f"{field}.key", names.qualified_name_errors)
    if not toleration.get("key") and operator != "Exists":
        raise WhatIfInputError(f"{field}.operator", "must be Exists when the key is empty")
    if operator == "Exists" and toleration.get("value"):
        raise WhatIfInputError(f"{field}.value", "must be empty with operator Exists")
    if operator == "Equal":
        check_format(toleration.get("value") or "", f"{field}.value", names.label_value_errors)
    effect = toleration.get("effect", "")
    if effect not in TOLERATION_EFFECTS:
        raise WhatIfInputError(f"{field}.effect", f"must be empty, NoSchedule or NoExecute, got {effect!r}")
    seconds = toleration.get("tolerationSeconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int)):
        raise WhatIfInputError(f"{field}.tolerationSeconds", f"must be an integer, got {seconds!r}")


def check_claim_spec(spec: object, field: str, lookup: Lookup, *, label: str = "claim") -> None:
    """A ResourceClaimSpec (`field` is where it sits, e.g. `input.yaml.spec`)."""
    spec = _mapping(spec, field, required=True)
    devices = _mapping(spec.get("devices"), f"{field}.devices", required=True)
    unknown = sorted(set(devices) - {"requests", "constraints", "config"})
    if unknown:
        raise WhatIfInputError(f"{field}.devices", f"unsupported field(s) {', '.join(unknown)}")
    names: set[str] = set()
    requests = _list(devices.get("requests"), f"{field}.devices.requests", limit=MAX_REQUESTS)
    for i, request in enumerate(requests):
        where = f"{field}.devices.requests[{i}]"
        request = _mapping(request, where, required=True)
        name = _name(request.get("name"), f"{where}.name", _DNS_LABEL, "a DNS label", 63)
        if name in names:
            raise WhatIfInputError(f"{where}.name", f"duplicate request name {name!r}")
        names.add(name)
        unknown = sorted(set(request) - {"name", "exactly", "firstAvailable"})
        if unknown:
            raise WhatIfInputError(where, f"unsupported field(s) {', '.join(unknown)}")
        if ("exactly" in request) == ("firstAvailable" in request):
            raise WhatIfInputError(where, "exactly one of exactly or firstAvailable is required")
        if "exactly" in request:
            exact = _mapping(request["exactly"], f"{where}.exactly", required=True)
            _check_request_spec(exact, f"{where}.exactly", lookup, sub=False)
            continue
        subs = _list(request["firstAvailable"], f"{where}.firstAvailable", limit=MAX_SUBREQUESTS)
        if not subs:
            raise WhatIfInputError(f"{where}.firstAvailable", "must not be empty")
        sub_names: set[str] = set()
        for j, sub in enumerate(subs):
            sub_field = f"{where}.firstAvailable[{j}]"
            sub = _mapping(sub, sub_field, required=True)
            sub_name = _name(sub.get("name"), f"{sub_field}.name", _DNS_LABEL, "a DNS label", 63)
            if sub_name in sub_names:
                raise WhatIfInputError(f"{sub_field}.name", f"duplicate subrequest name {sub_name!r}")
            sub_names.add(sub_name)
            names.add(f"{name}/{sub_name}")
            _check_request_spec(sub, sub_field, lookup, sub=True)
    constraints = _list(devices.get("constraints"), f"{field}.devices.constraints", limit=MAX_CONSTRAINTS)
    for i, constraint in enumerate(constraints):
        where = f"{field}.devices.constraints[{i}]"
        constraint = _mapping(constraint, where, required=True)
        unknown = sorted(set(constraint) - {"requests", "matchAttribute", "distinctAttribute"})
        if unknown:
            raise WhatIfInputError(where, f"unsupported field(s) {', '.join(unknown)}")
        keys = [k for k in ("matchAttribute", "distinctAttribute") if constraint.get(k)]
        if len(keys) != 1:
            raise WhatIfInputError(where, "exactly one of matchAttribute or distinctAttribute is required")
        _qualified_name(constraint[keys[0]], f"{where}.{keys[0]}")
        _check_request_names(constraint.get("requests"), f"{where}.requests", names)
    for i, config in enumerate(_list(devices.get("config"), f"{field}.devices.config", limit=MAX_CONFIGS)):
        where = f"{field}.devices.config[{i}]"
        config = _mapping(config, where, required=True)
        _check_request_names(config.get("requests"), f"{where}.requests", names)
        opaque = _mapping(config.get("opaque"), f"{where}.opaque", required=True)
        _name(opaque.get("driver"), f"{where}.opaque.driver", _DNS_SUBDOMAIN, "a DNS subdomain", 63)
    # Whatever the checks above do not know, the allocator's own conversion refuses now, not in the worker.
    try:
        prepare_claim({"metadata": {"name": label}, "spec": spec})
    except AllocationError as exc:
        raise WhatIfInputError(f"{field}.devices", str(exc)) from None


def _check_request_names(raw: object, field: str, names: set[str]) -> None:
    """`requests` of a constraint or config: `req` or `req/sub`, each naming one of this claim's."""
    for i, name in enumerate(_list(raw, field, limit=MAX_REQUESTS)):
        if not isinstance(name, str) or name not in names:
            raise WhatIfInputError(f"{field}[{i}]", f"names no request of this claim: {name!r}")


# --------------------------------------------------------------------------- pods


def check_pod(pod: Obj, field: str, lookup: Lookup) -> None:
    """A pod's claims and containers: referenced claims and templates must be in the inventory."""
    spec = _mapping(pod.get("spec"), f"{field}.spec", required=True)
    namespace = str(_mapping(pod.get("metadata"), f"{field}.metadata").get("namespace") or "default")
    containers = _list(spec.get("containers"), f"{field}.spec.containers", limit=1000)
    if not containers:
        raise WhatIfInputError(f"{field}.spec.containers", "is required — at least one container")
    for group in ("initContainers", "containers"):
        for i, container in enumerate(_list(spec.get(group), f"{field}.spec.{group}", limit=1000)):
            where = f"{field}.spec.{group}[{i}]"
            container = _mapping(container, where, required=True)
            resources = _mapping(container.get("resources"), f"{where}.resources")
            for part in ("limits", "requests"):
                for resource, amount in _mapping(resources.get(part), f"{where}.resources.{part}").items():
                    _quantity(amount, f"{where}.resources.{part}[{resource}]")
    node_selector = _mapping(spec.get("nodeSelector"), f"{field}.spec.nodeSelector")
    for key, value in node_selector.items():
        if not isinstance(value, str):
            raise WhatIfInputError(f"{field}.spec.nodeSelector[{key}]", "must be a string")
    seen: set[str] = set()
    for i, pod_claim in enumerate(
        _list(spec.get("resourceClaims"), f"{field}.spec.resourceClaims", limit=128)
    ):
        where = f"{field}.spec.resourceClaims[{i}]"
        pod_claim = _mapping(pod_claim, where, required=True)
        name = _name(pod_claim.get("name"), f"{where}.name", _DNS_LABEL, "a DNS label", 63)
        if name in seen:
            raise WhatIfInputError(f"{where}.name", f"duplicate pod claim name {name!r}")
        seen.add(name)
        refs = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if pod_claim.get(k)]
        if len(refs) != 1:
            raise WhatIfInputError(
                where, "exactly one of resourceClaimName or resourceClaimTemplateName is required"
            )
        ref = text(pod_claim, refs[0], f"{where}.{refs[0]}")
        kind = "ResourceClaim" if refs[0] == "resourceClaimName" else "ResourceClaimTemplate"
        obj = lookup.find(kind, namespace, ref)
        if obj is None:
            raise WhatIfInputError(f"{where}.{refs[0]}", f"{kind} {namespace}/{ref} is not in the inventory")
        _check_stored(obj, f"{where}.{refs[0]}", lookup)


def _check_stored(obj: Obj, field: str, lookup: Lookup) -> None:
    """An object from the inventory the question uses: the API server accepted it, but its classes
    may be gone and its CEL must compile with this engine too."""
    kind = obj.get("kind")
    m = obj.get("metadata")
    m = m if isinstance(m, Mapping) else {}
    label = f"{kind} {m.get('namespace', '')}/{m.get('name', '')}"
    try:
        if kind == "ResourceClaim":
            if not _mapping(obj.get("status"), "status").get("allocation"):
                check_claim_spec(obj.get("spec"), "spec", lookup)
        elif kind == "ResourceClaimTemplate":
            spec = _mapping(obj.get("spec"), "spec", required=True)
            check_claim_spec(spec.get("spec"), "spec.spec", lookup)
    except WhatIfInputError as exc:
        raise WhatIfInputError(field, f"{label}: {exc}") from None


# --------------------------------------------------------------------------- subjects


def parse_yaml_subject(source: str, *, allowed: tuple[str, ...] = SUBJECT_KINDS) -> Obj:
    """One YAML (or JSON) document holding a ResourceClaim, ResourceClaimTemplate or Pod (structure only)."""
    size = len(source.encode())
    if size > MAX_YAML_BYTES:
        raise WhatIfInputError(
            "input.yaml",
            f"must be at most {MAX_YAML_BYTES // 1024} KiB ({MAX_YAML_BYTES} bytes), got {size} bytes",
        )
    try:
        check_yaml_shape(source)  # PyYAML composes and constructs recursively
        docs = [d for d in yaml.safe_load_all(source) if d is not None]
    except YamlShapeError as exc:
        raise WhatIfInputError("input.yaml", f"line {exc.line + 1}: {exc.message}") from None
    except yaml.YAMLError as exc:
        raise WhatIfInputError("input.yaml", f"is not valid YAML: {exc}") from None
    if len(docs) != 1:
        raise WhatIfInputError("input.yaml", f"must hold exactly one object, found {len(docs)}")
    obj = docs[0]
    if not isinstance(obj, dict):
        raise WhatIfInputError("input.yaml", "must be a mapping (a Kubernetes object)")
    kind = obj.get("kind")
    if kind not in allowed:
        raise WhatIfInputError("input.yaml.kind", f"must be one of {', '.join(allowed)}, got {kind!r}")
    version = obj.get("apiVersion")
    if version is not None and version != API_VERSIONS[kind]:
        older = isinstance(version, str) and version.startswith("resource.k8s.io/") and kind != "Pod"
        raise WhatIfInputError(
            "input.yaml.apiVersion",
            f"must be {API_VERSIONS[kind]} for a {kind}, got {version!r}"
            + (f" (convert an older version on the upgrade page, {UPGRADE_PAGE})" if older else ""),
        )
    if not isinstance(obj.get("metadata") or {}, dict):
        raise WhatIfInputError("input.yaml.metadata", "must be a mapping")
    if not isinstance(obj.get("spec"), dict):
        raise WhatIfInputError("input.yaml.spec", "is required and must be a mapping")
    if kind == "ResourceClaim" and not isinstance(obj["spec"].get("devices"), dict):
        raise WhatIfInputError("input.yaml.spec.devices", "is required for a ResourceClaim")
    if kind == "ResourceClaimTemplate":
        _mapping(obj["spec"].get("spec"), "input.yaml.spec.spec", required=True)
    if kind == "ResourceClaimTemplate" and not isinstance(obj["spec"]["spec"].get("devices"), dict):
        raise WhatIfInputError("input.yaml.spec.spec.devices", "is required for a ResourceClaimTemplate")
    if kind == "Pod" and not isinstance(obj["spec"].get("containers"), list):
        raise WhatIfInputError("input.yaml.spec.containers", "is required for a Pod")
    return obj


def check_subject(obj: Obj, field: str, lookup: Lookup) -> None:
    """Deep checks of a pasted claim, template or pod."""
    if obj["kind"] == "ResourceClaim":
        check_claim_spec(obj["spec"], f"{field}.spec", lookup)
    elif obj["kind"] == "ResourceClaimTemplate":
        check_claim_spec(obj["spec"].get("spec"), f"{field}.spec.spec", lookup)
    else:
        check_pod(obj, field, lookup)


_WORDS = {"ResourceClaim": "claim", "ResourceClaimTemplate": "claim template", "Pod": "pod"}


def subject_input(
    data: Mapping[str, Any], lookup: Lookup, *, allowed: tuple[str, ...], allow_class: bool = False
) -> dict[str, Any]:
    """The subject of a question: a pasted object (`source: yaml`), one picked from the inventory
    (`source: pick`), or N devices of a class (`source: class`, where `allow_class`)."""
    source = data.get("source")
    if source == "yaml":
        yaml_text = data.get("yaml")
        if not isinstance(yaml_text, str) or not yaml_text.strip():
            raise WhatIfInputError("input.yaml", "is required — a claim, template or pod as YAML")
        obj = parse_yaml_subject(yaml_text, allowed=allowed)
        check_subject(obj, "input.yaml", lookup)
        return {"source": "yaml", "yaml": yaml_text}
    if source == "pick":
        if not data.get("kind") and not data.get("name"):
            raise WhatIfInputError(
                "input.name",
                f"is required — choose the {' or '.join(_WORDS.get(k, k) for k in allowed)} to ask about",
            )
        picked = text(data, "kind", "input.kind", max_len=64)
        if picked not in allowed:
            raise WhatIfInputError("input.kind", f"must be one of {', '.join(allowed)}, got {picked!r}")
        out = {
            "source": "pick",
            "kind": picked,
            "namespace": text(data, "namespace", "input.namespace", max_len=63),
            "name": text(data, "name", "input.name"),
        }
        obj = lookup.find(picked, out["namespace"], out["name"])
        if obj is None:
            raise WhatIfInputError(
                "input.name", f"{picked} {out['namespace']}/{out['name']} is not in the inventory"
            )
        if picked == "Pod":
            check_pod(obj, "input.name", lookup)
        else:
            _check_stored(obj, "input.name", lookup)
        return out
    if source == "class" and allow_class:
        name = text(data, "deviceClassName", "input.deviceClassName")
        check_class(name, "input.deviceClassName", lookup)
        count = integer(data, "count", "input.count", default=1, low=1, high=MAX_COUNT)
        return {"source": "class", "deviceClassName": name, "count": count}
    choices = "yaml, pick" + (", class" if allow_class else "")
    raise WhatIfInputError("input.source", f"must be one of {choices}, got {source!r}")


def node_input(data: Mapping[str, Any], lookup: Lookup) -> str:
    """An optional node to answer for; it must be in the inventory."""
    node = text(data, "node", "input.node", required=False)
    if node and lookup.find("Node", "", node) is None:
        raise WhatIfInputError("input.node", f"no node named {node} in the inventory")
    return node


def refuse_unknown(data: Mapping[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise WhatIfInputError(
            f"input.{unknown[0]}", f"is not a field of this question (known: {', '.join(sorted(allowed))})"
        )


# --------------------------------------------------------------------------- the forms


def form_int(raw: Any, default: int) -> Any:
    """A number field of a form; a non-number is passed on for validation to name the field."""
    if raw in (None, ""):
        return default
    try:
        return int(raw)
    except (TypeError, ValueError):
        return raw


def subject_form_input(post: Mapping[str, Any]) -> dict[str, Any]:
    """The subject fields of the feasibility and headroom forms (names mirror the API's input)."""
    source = post.get("source", "")
    picked = post.get("pick", "")
    if source in ("claim", "pod"):  # the form's subject picker: one list per tab
        picked, source = post.get(f"pick_{source}", ""), "pick"
    data: dict[str, Any] = {"source": source}
    if source == "yaml":
        data["yaml"] = post.get("yaml", "")
    elif source == "pick":
        picked_kind, _, ref = str(picked).partition("|")
        namespace, _, name = ref.partition("/")
        data.update(kind=picked_kind, namespace=namespace, name=name)
    elif source == "class":
        data["deviceClassName"] = post.get("deviceClassName", "")
        data["count"] = form_int(post.get("count"), 1)
    return data
