"""The v1.37 OpenAPI schema (as shipped by ``kubernetes-validate``), compiled once into fast checkers.

``jsonschema`` re-walks the schema on every call and reports JSON-pointer paths; a busy driver writes
128-device ResourceSlices often, so each definition is compiled once into a closure that walks the object
and reports kube-style field paths (``spec.devices[3].attributes[model]``).  The same loaded definitions
answer the strategic-merge questions (patch strategy, merge key, list type) for ``patching``.

Also home of the small field-error vocabulary (``Causes``) shared by the validation modules.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final, Protocol

from dra.quantity import FORMAT_ERROR, Quantity, QuantityError
from simcluster.jsondata import dumps, same_json

SCHEMA_DIR: Final = "kubernetes-json-schema/v1.37.0-local-strict"

# ---------------------------------------------------------------------------------------------------------
# field errors, worded like apimachinery's field.Error.ErrorBody()


def _show(value: Any) -> str:
    """Render a bad value the way apiserver messages do: strings quoted, scalars bare, objects by kind."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, list):
        return '"array"'
    return '"object"'


class Causes:
    """Collects ``details.causes`` entries: ``{"reason", "message", "field"}``."""

    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def add(self, reason: str, field: str, message: str) -> None:
        self.items.append({"reason": reason, "message": message, "field": field})

    def required(self, field: str, detail: str = "") -> None:
        self.add("FieldValueRequired", field, "Required value" + (f": {detail}" if detail else ""))

    def invalid(self, field: str, value: Any, detail: str) -> None:
        self.add("FieldValueInvalid", field, f"Invalid value: {_show(value)}: {detail}")

    def type_invalid(self, field: str, value: Any, detail: str) -> None:
        self.add("FieldValueTypeInvalid", field, f"Invalid value: {_show(value)}: {detail}")

    def not_supported(self, field: str, value: Any, supported: list[str]) -> None:
        quoted = ", ".join(json.dumps(v) for v in supported)
        self.add(
            "FieldValueNotSupported", field, f"Unsupported value: {_show(value)}: supported values: {quoted}"
        )

    def forbidden(self, field: str, detail: str) -> None:
        self.add("FieldValueForbidden", field, f"Forbidden: {detail}")

    def duplicate(self, field: str, value: Any) -> None:
        self.add("FieldValueDuplicate", field, f"Duplicate value: {_show(value)}")

    def too_long(self, field: str, max_bytes: int) -> None:
        self.add("FieldValueTooLong", field, f"Too long: may not be more than {max_bytes} bytes")

    def too_many(self, field: str, actual: int, limit: int) -> None:
        self.add("FieldValueTooMany", field, f"Too many: {actual}: must have at most {limit} items")

    def immutable(self, field: str, value: Any) -> None:
        self.invalid(field, value, "field is immutable")


def key_path(path: str, key: str) -> str:
    """``attributes`` + ``model`` → ``attributes[model]`` (apimachinery's Path.Key)."""
    return f"{path}[{key}]"


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# ---------------------------------------------------------------------------------------------------------
# loading


@functools.cache
def definitions() -> dict[str, dict[str, Any]]:
    ref = resources.files("kubernetes_validate").joinpath(f"{SCHEMA_DIR}/_definitions.json")
    with ref.open("r", encoding="utf-8") as handle:
        loaded: dict[str, dict[str, Any]] = json.load(handle)["$defs"]
    return loaded


@functools.cache
def _kind_index() -> dict[tuple[str, str, str], str]:
    index: dict[tuple[str, str, str], str] = {}
    for name, definition in definitions().items():
        for gvk in definition.get("x-kubernetes-group-version-kind", []):
            index.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)
    return index


def definition_name(group: str, version: str, kind: str) -> str | None:
    return _kind_index().get((group, version, kind))


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    """Follow ``$ref`` (possibly chained) to the schema node that describes the value."""
    while "$ref" in node:
        node = definitions()[node["$ref"].rsplit("/", 1)[-1]]
    return node


def _types(node: dict[str, Any]) -> tuple[set[str], bool]:
    raw = node.get("type")
    if raw is None:
        return set(), True
    names = {raw} if isinstance(raw, str) else set(raw)
    return names - {"null"}, "null" in names


# ---------------------------------------------------------------------------------------------------------
# compiled checkers

# A checker gets the value, its parent's path and its own path segment (".name", "[3]", "[key]"); the full
# path string is only built when something is wrong or when descending, which keeps big lists cheap. The
# last argument is the value at the same path in an object that already passed this check (the stored one,
# on update), or NO_OLD: an object or array skips its members that are the same JSON as there, as their
# verdict is a function of the value alone (the path picks the schema node).
Checker = Callable[[Any, str, str, Causes, Any], None]


class _NoOld:
    """There is no checked value at this path to compare with."""


NO_OLD: Final = _NoOld()


def _join(parent: str, segment: str) -> str:
    return segment[1:] if not parent and segment.startswith(".") else parent + segment


_INT_BOUNDS: Final = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_DATE_TIME: Final = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$",
)
QUANTITY_DEF: Final = "io.k8s.apimachinery.pkg.api.resource.Quantity"

_JSON_TYPE_NAMES: Final = {
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "object": "object",
    "array": "array",
}


def _is_quantity(text: str) -> bool:
    try:
        Quantity.parse(text)
    except QuantityError:
        return False
    return True


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _type_matches(value: Any, allowed: set[str]) -> bool:
    actual = _json_type(value)
    if actual in allowed:
        return True
    return actual == "integer" and "number" in allowed


# OpenAPI marks every Go field without ``omitempty`` as required, but kube-apiserver decodes an absent field
# as its zero value and only its validation code decides. Presence is enforced where that code requires a
# value (the DRA types and the Pod fields around them); numbers and booleans, whose zero value is valid, and
# condition messages are never required.
_REQUIRED_ENFORCED_PREFIXES: Final = ("io.k8s.api.resource.",)
_REQUIRED_ENFORCED: Final = {
    "io.k8s.api.core.v1.PodSpec",
    "io.k8s.api.core.v1.Container",
    "io.k8s.api.core.v1.EphemeralContainer",
    "io.k8s.api.core.v1.PodResourceClaim",
    "io.k8s.api.core.v1.ResourceClaim",
    "io.k8s.api.core.v1.NodeSelector",
    "io.k8s.api.core.v1.NodeSelectorRequirement",
    "io.k8s.api.core.v1.EnvVar",
    "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Condition",
}
_NEVER_REQUIRED: Final = {
    ("io.k8s.apimachinery.pkg.apis.meta.v1.Condition", "message"),
    # judged with its own words by the validation of node selectors ("must have at least one node selector term")
    ("io.k8s.api.core.v1.NodeSelector", "nodeSelectorTerms"),
    # an empty taint key is judged as a label name ("name part must be non-empty"), not as missing
    *(
        (f"io.k8s.api.resource.{version}.DeviceTaint", "key")
        for version in ("v1", "v1beta1", "v1beta2", "v1alpha3")
    ),
}


def _enforced_required(name: str, node: dict[str, Any]) -> list[str]:
    if name not in _REQUIRED_ENFORCED and not name.startswith(_REQUIRED_ENFORCED_PREFIXES):
        return []
    props = node.get("properties", {})
    enforced: list[str] = []
    for field in node["required"]:
        if (name, field) in _NEVER_REQUIRED:
            continue
        types, _ = _types(resolve(props.get(field, {})))
        if types & {"integer", "number", "boolean"}:
            continue
        enforced.append(field)
    return enforced


RAW_EXTENSION_DEF: Final = "io.k8s.apimachinery.pkg.runtime.RawExtension"


def _any_json(value: Any, parent: str, segment: str, causes: Causes, old: Any = NO_OLD) -> None:
    """A RawExtension: any JSON value."""


class _Compiler:
    def __init__(self) -> None:
        self.by_ref: dict[str, Checker] = {}

    def ref(self, name: str) -> Checker:
        if name not in self.by_ref:
            # A placeholder first: schemas are recursive (JSONSchemaProps-like shapes, label selectors).
            cell: list[Checker] = []
            self.by_ref[name] = lambda value, parent, segment, causes, old: cell[0](
                value, parent, segment, causes, old
            )
            node = definitions()[name]
            if "required" in node:
                node = {**node, "required": _enforced_required(name, node)}
            cell.append(self.compile(node))
            self.by_ref[name] = cell[0]
        return self.by_ref[name]

    def compile(self, node: dict[str, Any]) -> Checker:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name == QUANTITY_DEF:
                return self._scalar({"string", "number"}, None, None, quantity=True)
            if name == RAW_EXTENSION_DEF:
                # Decoded as raw JSON of any kind; the kind's validation judges it (e.g. "must be a valid
                # JSON object" for opaque parameters), never a schema type error.
                return _any_json
            return self.ref(name)
        if "oneOf" in node:
            allowed: set[str] = set()
            for option in node["oneOf"]:
                allowed |= _types(option)[0]
            return self._scalar(allowed, None, None)
        allowed, _ = _types(node)
        fmt = node.get("format")
        enum = node.get("enum")
        if "object" in allowed:
            return self._object(node)
        if "array" in allowed:
            return self._array(node)
        return self._scalar(allowed, fmt, enum)

    def _scalar(
        self, allowed: set[str], fmt: str | None, enum: list[Any] | None, *, quantity: bool = False
    ) -> Checker:
        bounds = _INT_BOUNDS.get(fmt or "")
        expected = " or ".join(sorted(_JSON_TYPE_NAMES[t] for t in allowed))
        enum_values = [e for e in (enum or []) if e is not None]
        if allowed == {"string"} and fmt is None and not enum_values:

            def check_string(value: Any, parent: str, segment: str, causes: Causes, old: Any) -> None:
                if value is not None and not isinstance(value, str):
                    causes.type_invalid(_join(parent, segment), value, "must be of type string")

            return check_string

        def check(value: Any, parent: str, segment: str, causes: Causes, old: Any) -> None:
            if value is None:
                return
            if allowed and not _type_matches(value, allowed):
                causes.type_invalid(_join(parent, segment), value, f"must be of type {expected}")
                return
            if bounds is not None and isinstance(value, int | float) and not bounds[0] <= value <= bounds[1]:
                causes.invalid(_join(parent, segment), value, f"must fit in {fmt}")
            elif fmt == "byte" and isinstance(value, str):
                try:
                    base64.b64decode(value, validate=True)
                except (binascii.Error, ValueError):
                    causes.invalid(_join(parent, segment), value, "must be base64-encoded")
            elif fmt == "date-time" and isinstance(value, str) and not _DATE_TIME.fullmatch(value):
                causes.invalid(_join(parent, segment), value, "must be an RFC 3339 date-time")
            if quantity and isinstance(value, str) and not _is_quantity(value):
                causes.invalid(_join(parent, segment), value, FORMAT_ERROR)
            if enum_values and value not in enum_values:
                causes.not_supported(_join(parent, segment), value, [str(e) for e in enum_values])

        return check

    def _object(self, node: dict[str, Any]) -> Checker:
        props_src: dict[str, Any] = node.get("properties", {})
        required: list[str] = node.get("required", [])
        additional = node.get("additionalProperties")
        closed = additional is False
        # Children are compiled on first use: keeps start-up cheap and breaks recursion.
        props: dict[str, Checker] = {}
        value_checker: list[Checker] = []

        def check(value: Any, parent: str, segment: str, causes: Causes, old: Any) -> None:
            if value is None:
                return
            path = _join(parent, segment)
            if not isinstance(value, dict):
                causes.type_invalid(path, value, "must be of type object")
                return
            if not props and props_src:
                for name, sub_node in props_src.items():
                    props[name] = self.compile(sub_node)
            for name in required:
                if value.get(name) is None:
                    causes.required(child(path, name))
            if isinstance(additional, dict) and not value_checker:
                value_checker.append(self.compile(additional))
            old_members = old if isinstance(old, dict) else _NO_MEMBERS
            for key, item in value.items():
                before = old_members.get(key, NO_OLD)
                if before is not NO_OLD and same_json(item, before):
                    continue
                sub = props.get(key)
                if sub is not None:
                    sub(item, path, "." + key, causes, before)
                elif value_checker:
                    value_checker[0](item, path, f"[{key}]", causes, before)
                elif closed:
                    unknown = child(path, key)
                    causes.add("FieldValueInvalid", unknown, UNKNOWN_FIELD_MESSAGE.format(path=unknown))

        return check

    def _array(self, node: dict[str, Any]) -> Checker:
        items = node.get("items")
        item_checker: list[Checker] = []

        def check(value: Any, parent: str, segment: str, causes: Causes, old: Any) -> None:
            if value is None:
                return
            path = _join(parent, segment)
            if not isinstance(value, list):
                causes.type_invalid(path, value, "must be of type array")
                return
            if items is None:
                return
            if not item_checker:
                item_checker.append(self.compile(items))
            sub = item_checker[0]
            old_items = old if isinstance(old, list) else ()
            for index, item in enumerate(value):
                before = old_items[index] if index < len(old_items) else NO_OLD
                if before is not NO_OLD and same_json(item, before):
                    continue
                sub(item, path, f"[{index}]", causes, before)

        return check


_COMPILER: Final = _Compiler()
_NO_MEMBERS: Final[dict[str, Any]] = {}


@functools.cache
def _kind_checker(group: str, version: str, kind: str) -> Checker | None:
    name = definition_name(group, version, kind)
    return None if name is None else _COMPILER.ref(name)


def schema_causes(
    group: str, version: str, kind: str, obj: dict[str, Any], checked: dict[str, Any] | None = None
) -> list[dict[str, str]]:
    """Check ``obj`` against the v1.37 schema of its kind: unknown fields, types, enums, required fields.

    ``checked``: an object of the same kind known to pass this check (the stored object, on update); the
    parts of ``obj`` that are the same JSON as its are not walked again. A status update or a binding
    copies all but a few fields from the stored object, so only what changed is checked, fully.
    """
    checker = _kind_checker(group, version, kind)
    causes = Causes()
    if checker is None:
        causes.add("FieldValueNotSupported", "kind", f"Unsupported value: {_show(kind)}: no v1.37 schema")
    else:
        checker(obj, "", "", causes, NO_OLD if checked is None else checked)
    return causes.items


# ---------------------------------------------------------------------------------------------------------
# patch metadata (strategic merge and server-side apply)


@dataclass(frozen=True)
class ListMeta:
    """How a list field merges: ``merge`` by ``merge_key`` (strategic), or atomically replaced."""

    strategies: frozenset[str]
    merge_key: str | None
    list_type: str | None
    map_keys: tuple[str, ...]


def field_schema(node: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    """Schema of property ``name`` of an object schema (or of a map value), ``None`` if unknown."""
    if node is None:
        return None
    node = resolve(node)
    props = node.get("properties")
    if props and name in props:
        sub: dict[str, Any] = props[name]
        return sub
    additional = node.get("additionalProperties")
    if isinstance(additional, dict):
        return additional
    return None


def item_schema(node: dict[str, Any] | None) -> dict[str, Any] | None:
    if node is None:
        return None
    items = resolve(node).get("items")
    return items if isinstance(items, dict) else None


def list_meta(node: dict[str, Any] | None) -> ListMeta:
    if node is None:
        return ListMeta(frozenset(), None, None, ())
    strategies = frozenset(s for s in str(node.get("x-kubernetes-patch-strategy", "")).split(",") if s)
    return ListMeta(
        strategies=strategies,
        merge_key=node.get("x-kubernetes-patch-merge-key"),
        list_type=node.get("x-kubernetes-list-type"),
        map_keys=tuple(node.get("x-kubernetes-list-map-keys", ())),
    )


def is_map_schema(node: dict[str, Any] | None) -> bool:
    """True for ``map[string]X`` fields (labels, attributes): keys are data, not field names."""
    if node is None:
        return False
    node = resolve(node)
    return "properties" not in node and isinstance(node.get("additionalProperties"), dict)


def kind_schema(group: str, version: str, kind: str) -> dict[str, Any] | None:
    name = definition_name(group, version, kind)
    return None if name is None else definitions()[name]


def iter_list_fields(node: dict[str, Any]) -> Iterator[tuple[str, ListMeta]]:
    """(property name, ListMeta) for the list-valued properties of an object schema (for tests/docs)."""
    for name, sub in resolve(node).get("properties", {}).items():
        if "array" in _types(sub)[0]:
            yield name, list_meta(sub)


# ---------------------------------------------------------------------------------------------------------
# unknown fields (fieldValidation=Warn/Ignore drop them; Strict refuses the request)

UNKNOWN_FIELD_MESSAGE: Final = 'unknown field "{path}"'


def is_unknown_field_cause(cause: dict[str, str]) -> bool:
    """True for the causes ``schema_causes`` reports for fields the v1.37 schema does not declare."""
    return cause.get("message", "").startswith('unknown field "')


def drop_unknown_fields(group: str, version: str, kind: str, obj: dict[str, Any]) -> list[str]:
    """Remove undeclared fields from ``obj`` in place (kube's non-strict decoding); returns their paths.

    A server answering ``fieldValidation=Warn`` (the default) sends each path back as a
    ``Warning: unknown field "<path>"`` header; ``Strict`` refuses the write with 400 instead.
    """
    root = kind_schema(group, version, kind)
    dropped: list[str] = []
    if root is not None:
        _drop(obj, root, "", dropped)
    return dropped


def _drop(value: Any, node: dict[str, Any], path: str, dropped: list[str]) -> None:
    node = resolve(node)
    if isinstance(value, dict):
        props = node.get("properties")
        additional = node.get("additionalProperties")
        for key in list(value):
            sub_path = child(path, key) if props or additional is False else key_path(path, key)
            if props and key in props:
                _drop(value[key], props[key], sub_path, dropped)
            elif isinstance(additional, dict):
                _drop(value[key], additional, key_path(path, key), dropped)
            elif additional is False:
                del value[key]
                dropped.append(sub_path)
    elif isinstance(value, list):
        items = node.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                _drop(item, items, f"{path}[{index}]", dropped)


# ---------------------------------------------------------------------------------------------------------
# empty lists and maps (Go's omitempty)


def drop_empty_collections(
    group: str, version: str, kind: str, obj: dict[str, Any], stored: dict[str, Any] | None = None
) -> None:
    """Remove, in place, the empty lists and maps of optional fields, as kube's encoding does.

    Validation sees the empty ``[]`` a request decodes to, but what kube-apiserver stores and returns went
    through encoding, where optional slices and maps are ``omitempty``: ``labels: {}``, ``selectors: []``
    or ``values: []`` are gone from ``kubectl get -o yaml``. A field the schema marks required (no
    ``omitempty``) keeps its ``[]``; an empty object of a struct type is a value, kept; raw extensions are
    data, untouched. ``stored``: the object as stored (an update); what equals it there is left as is.
    """
    root = kind_schema(group, version, kind)
    # Most writes (a driver's slices, a controller's status) hold no empty collection: a scan of the
    # encoded object spares them the walk (an empty one inside a string only costs the walk).
    if root is not None and (b"[]" in (raw := dumps(obj)) or b"{}" in raw):
        _walk(obj, root, drop=True, stored=NO_OLD if stored is None else stored)


def canonical_quantities(
    group: str, version: str, kind: str, obj: dict[str, Any], stored: dict[str, Any] | None = None
) -> None:
    """Write every quantity in place in its canonical form, as kube's decoding reads it: ``1024Mi`` is
    ``1Gi``, ``0.5`` is ``500m``, a JSON number a string; what does not parse is left for validation.
    ``stored``: the object as stored (an update); what equals it there is left as is."""
    root = kind_schema(group, version, kind)
    if root is not None and _may_hold_quantity(root):
        _walk(obj, root, drop=False, stored=NO_OLD if stored is None else stored)


def _is_quantity_ref(node: dict[str, Any]) -> bool:
    return str(node.get("$ref", "")).endswith("/" + QUANTITY_DEF)


_HOLDS_QUANTITY: dict[int, bool] = {}


def _may_hold_quantity(node: dict[str, Any], visiting: frozenset[int] = frozenset()) -> bool:
    """Whether a value of this schema can hold a quantity anywhere below it (cached per schema node), so the
    quantity walk skips attributes, metadata and the like."""
    if _is_quantity_ref(node):
        return True
    node = resolve(node)
    key = id(node)
    cached = _HOLDS_QUANTITY.get(key)
    if cached is not None:
        return cached
    if key in visiting:
        return False  # a recursive schema: its other branches decide
    inner = visiting | {key}
    children = list((node.get("properties") or {}).values())
    for extra in (node.get("additionalProperties"), node.get("items")):
        if isinstance(extra, dict):
            children.append(extra)
    holds = any(_may_hold_quantity(child, inner) for child in children)
    if not visiting:
        _HOLDS_QUANTITY[key] = holds
    return holds


def _canonical_quantity(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return value
    return _canonical_text(value if isinstance(value, str) else json.dumps(value))


@functools.lru_cache(maxsize=4096)
def _canonical_text(text: str) -> str:
    try:
        return str(Quantity.parse(text))
    except QuantityError:
        return text


def _walk(value: Any, node: dict[str, Any], *, drop: bool, stored: Any = NO_OLD) -> None:
    """Drop empty optional collections (`drop`), else canonicalize quantities, below `value`. `stored`: the
    value at the same path in the stored object, which went through both when it was written: a member or
    item equal to it there is left as is (an update walks only what it changes)."""
    node = resolve(node)
    if isinstance(value, dict):
        before = stored if isinstance(stored, dict) else _NO_MEMBERS
        props = node.get("properties")
        if props:
            required = node.get("required") or ()
            for key in list(value):
                sub = props.get(key)
                if sub is None:
                    continue
                item = value[key]
                if before.get(key, NO_OLD) == item:
                    continue
                if isinstance(item, dict | list):
                    if drop and (item == [] or (item == {} and is_map_schema(sub))):
                        if key not in required:
                            del value[key]
                    elif drop or _may_hold_quantity(sub):
                        _walk(item, sub, drop=drop, stored=before.get(key, NO_OLD))
                elif not drop and _is_quantity_ref(sub):
                    value[key] = _canonical_quantity(item)
            return
        additional = node.get("additionalProperties")
        if isinstance(additional, dict):
            if not drop and not _may_hold_quantity(additional):
                return
            quantities = not drop and _is_quantity_ref(additional)
            for key, item in value.items():
                prior = before.get(key, NO_OLD)
                if prior == item:
                    continue
                if isinstance(item, dict | list):
                    _walk(item, additional, drop=drop, stored=prior)
                elif quantities:
                    value[key] = _canonical_quantity(item)
    elif isinstance(value, list):
        items = node.get("items")
        if isinstance(items, dict):
            if not drop and not _may_hold_quantity(items):
                return
            quantities = not drop and _is_quantity_ref(items)
            olds = stored if isinstance(stored, list) else []
            for index, item in enumerate(value):
                prior = olds[index] if index < len(olds) else NO_OLD
                if prior == item:
                    continue
                if isinstance(item, dict | list):
                    _walk(item, items, drop=drop, stored=prior)
                elif quantities:
                    value[index] = _canonical_quantity(item)


class ResourceDef(Protocol):
    """The attributes of ``simcluster.resources.ResourceDef`` that validation and patching read."""

    @property
    def group(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def plural(self) -> str: ...
    @property
    def namespaced(self) -> bool: ...
