"""PATCH for the simulated API server: JSON merge, strategic merge, JSON patch and server-side apply.

Strategic merge and apply read the list semantics (merge key, list-map keys, set, atomic) from the same
v1.37 schema that validation uses, so Pod containers merge by ``name``, claim ``reservedFor`` by ``uid``,
condition lists by ``type``, and lists without a strategy are replaced.  Server-side apply keeps a
per-manager record of owned leaf fields in ``metadata.managedFields`` (FieldsV1) so that removing a field
from the applied configuration removes it from the object, and conflicts are reported as kube does.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any, Final

import yaml

from simcluster import schema
from simcluster.schema import ResourceDef


class PatchError(Exception):
    """A patch the server must refuse; ``status``/``reason`` become the ``Status`` object's code and reason."""

    def __init__(
        self, status: int, reason: str, message: str, causes: list[dict[str, str]] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.message = message
        self.causes: list[dict[str, str]] = causes or []


MERGE_PATCH: Final = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH: Final = "application/strategic-merge-patch+json"
JSON_PATCH: Final = "application/json-patch+json"
APPLY_PATCH: Final = "application/apply-patch+yaml"
APPLY_PATCH_CBOR: Final = "application/apply-patch+cbor"
SUPPORTED: Final = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)

Json = Any


def apply_patch(
    resource: ResourceDef,
    current: dict[str, Any] | None,
    patch_body: bytes,
    content_type: str,
    *,
    field_manager: str | None = None,
    force: bool = False,
    subresource: str | None = None,
) -> dict[str, Any]:
    """Return the patched object (a new dict; ``current`` is not modified)."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media == APPLY_PATCH:
        return server_side_apply(
            resource, current, patch_body, field_manager=field_manager, force=force, subresource=subresource
        )
    if media not in SUPPORTED:
        raise PatchError(
            415,
            "UnsupportedMediaType",
            f"the body of the request was in an unknown format - accepted media types include: {', '.join(SUPPORTED)}",
        )
    if current is None:
        raise PatchError(404, "NotFound", f"{resource.plural} not found")
    patch = _decode_json(patch_body)
    if media == JSON_PATCH:
        result = json_patch(current, patch)
    elif media == MERGE_PATCH:
        if not isinstance(patch, dict):
            raise PatchError(400, "BadRequest", "merge patch must be a JSON object")
        result = merge_patch(current, patch)
    else:
        if not isinstance(patch, dict):
            raise PatchError(400, "BadRequest", "strategic merge patch must be a JSON object")
        root = schema.kind_schema(resource.group, resource.version, resource.kind)
        result = strategic_merge(current, patch, root)
    if not isinstance(result, dict):
        raise PatchError(422, "Invalid", "the patched object is not a JSON object")
    return result


def _decode_json(body: bytes) -> Json:
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise PatchError(400, "BadRequest", f"error decoding patch: {error}") from None


# ---------------------------------------------------------------------------------------------------------
# RFC 7386 merge patch


def merge_patch(target: Json, patch: Json) -> Json:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# ---------------------------------------------------------------------------------------------------------
# RFC 6902 JSON patch


def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str) or (path and not path.startswith("/")):
        raise PatchError(400, "BadRequest", f"invalid JSON pointer {path!r}: must be empty or start with '/'")
    if path == "":
        return []
    return [token.replace("~1", "/").replace("~0", "~") for token in path[1:].split("/")]


def _index(container: list[Any], token: str, path: str, *, for_add: bool) -> int:
    if token == "-" and for_add:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise PatchError(422, "Invalid", f"invalid array index {token!r} in path {path!r}")
    index = int(token)
    limit = len(container) if for_add else len(container) - 1
    if index > limit:
        raise PatchError(422, "Invalid", f"array index {index} out of range in path {path!r}")
    return index


def _parent(doc: Json, tokens: list[str], path: str) -> Json:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict):
            if token not in node:
                raise PatchError(422, "Invalid", f"path {path!r} does not exist: missing {token!r}")
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, path, for_add=False)]
        else:
            raise PatchError(422, "Invalid", f"path {path!r} does not exist: {token!r} is not a container")
    return node


def _get(doc: Json, path: str) -> Json:
    tokens = _pointer(path)
    if not tokens:
        return doc
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(422, "Invalid", f"path {path!r} does not exist")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, path, for_add=False)]
    raise PatchError(422, "Invalid", f"path {path!r} does not exist")


def _remove(doc: Json, path: str) -> Json:
    tokens = _pointer(path)
    if not tokens:
        raise PatchError(422, "Invalid", "cannot remove the whole document")
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(422, "Invalid", f"unable to remove nonexistent key {last!r} at path {path!r}")
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, path, for_add=False))
    raise PatchError(422, "Invalid", f"path {path!r} does not exist")


def _add(doc: Json, path: str, value: Json, *, replace: bool) -> Json:
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if replace and last not in parent:
            raise PatchError(422, "Invalid", f"unable to replace nonexistent key {last!r} at path {path!r}")
        parent[last] = value
    elif isinstance(parent, list):
        if replace:
            parent[_index(parent, last, path, for_add=False)] = value
        else:
            parent.insert(_index(parent, last, path, for_add=True), value)
    else:
        raise PatchError(422, "Invalid", f"path {path!r} does not exist")
    return doc


def json_patch(target: Json, operations: Json) -> Json:
    if not isinstance(operations, list):
        raise PatchError(400, "BadRequest", "json patch must be a JSON array of operations")
    doc = copy.deepcopy(target)
    for number, operation in enumerate(operations):
        if not isinstance(operation, dict):
            raise PatchError(400, "BadRequest", f"json patch operation {number} is not an object")
        op = operation.get("op")
        path = operation.get("path")
        if not isinstance(path, str):
            raise PatchError(400, "BadRequest", f"json patch operation {number} ({op}) has no path")
        if op in ("add", "replace", "test") and "value" not in operation:
            raise PatchError(400, "BadRequest", f"json patch operation {number} ({op}) has no value")
        if op == "add":
            doc = _add(doc, path, copy.deepcopy(operation["value"]), replace=False)
        elif op == "replace":
            doc = _add(doc, path, copy.deepcopy(operation["value"]), replace=True)
        elif op == "remove":
            _remove(doc, path)
        elif op in ("move", "copy"):
            source = operation.get("from")
            if not isinstance(source, str):
                raise PatchError(400, "BadRequest", f"json patch operation {number} ({op}) has no from")
            if (
                op == "move"
                and isinstance(source, str)
                and isinstance(path, str)
                and path.startswith(source + "/")
            ):
                raise PatchError(422, "Invalid", f"cannot move {source!r} into its own child {path!r}")
            value = _remove(doc, source) if op == "move" else copy.deepcopy(_get(doc, source))
            doc = _add(doc, path, value, replace=False)
        elif op == "test":
            actual = _get(doc, path)
            if actual != operation["value"]:
                raise PatchError(
                    422,
                    "Invalid",
                    f"the test operation on path {path!r} failed: expected {json.dumps(operation['value'])}, "
                    f"found {json.dumps(actual)}",
                )
        else:
            raise PatchError(400, "BadRequest", f"json patch operation {number}: unknown op {op!r}")
    return doc


# ---------------------------------------------------------------------------------------------------------
# strategic merge patch

_DIRECTIVE: Final = "$patch"
_RETAIN_KEYS: Final = "$retainKeys"
_DELETE_PRIMITIVE: Final = "$deleteFromPrimitiveList/"
_ELEMENT_ORDER: Final = "$setElementOrder/"


def strategic_merge(current: Json, patch: Json, node: dict[str, Any] | None) -> Json:
    """Apply a strategic merge patch; ``node`` is the schema of ``current`` (``None`` = plain merge)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    directive = patch.get(_DIRECTIVE)
    if directive == "delete":
        return None
    body = {k: v for k, v in patch.items() if k != _DIRECTIVE}
    if directive == "replace":
        return _strip_directives(body)
    if directive not in (None, "merge"):
        raise PatchError(400, "BadRequest", f"unknown patch directive {directive!r}")
    result = copy.deepcopy(current) if isinstance(current, dict) else {}
    retain = body.pop(_RETAIN_KEYS, None)
    orders: dict[str, list[Any]] = {}
    for key in [k for k in body if k.startswith(_ELEMENT_ORDER)]:
        orders[key[len(_ELEMENT_ORDER) :]] = body.pop(key)
    for key in [k for k in body if k.startswith(_DELETE_PRIMITIVE)]:
        field = key[len(_DELETE_PRIMITIVE) :]
        doomed = body.pop(key)
        if isinstance(result.get(field), list) and isinstance(doomed, list):
            result[field] = [v for v in result[field] if v not in doomed]
    for key, value in body.items():
        sub = schema.field_schema(node, key)
        if value is None:
            result.pop(key, None)
        elif isinstance(value, list):
            merged = _merge_list(result.get(key), value, sub)
            result[key] = merged
        elif isinstance(value, dict):
            merged_map = strategic_merge(result.get(key), value, sub)
            if merged_map is None:
                result.pop(key, None)
            else:
                result[key] = merged_map
        else:
            result[key] = value
    for field, order in orders.items():
        if isinstance(result.get(field), list) and isinstance(order, list):
            result[field] = _reorder(result[field], order, schema.list_meta(schema.field_schema(node, field)))
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _strip_directives(value: Json) -> Json:
    if isinstance(value, dict):
        return {
            k: _strip_directives(v)
            for k, v in value.items()
            if k not in (_DIRECTIVE, _RETAIN_KEYS)
            and not k.startswith(("$setElementOrder/", _DELETE_PRIMITIVE))
        }
    if isinstance(value, list):
        return [_strip_directives(v) for v in value]
    return value


def _merge_list(current: Json, patch: list[Any], node: dict[str, Any] | None) -> list[Any]:
    meta = schema.list_meta(node)
    if "merge" not in meta.strategies:
        return [_strip_directives(v) for v in patch if not (isinstance(v, dict) and v.get(_DIRECTIVE))]
    key = meta.merge_key

    def replace_marker(value: Any) -> bool:
        # ``{"$patch": "replace"}`` without a merge key replaces the whole list; with one, only that entry.
        return (
            isinstance(value, dict)
            and value.get(_DIRECTIVE) == "replace"
            and (key is None or key not in value)
        )

    if any(replace_marker(v) for v in patch):
        return [_strip_directives(v) for v in patch if not replace_marker(v)]
    existing = list(copy.deepcopy(current)) if isinstance(current, list) else []
    if key is None:
        # A merging list of primitives (finalizers): union, keeping the existing order.
        for value in patch:
            if value not in existing:
                existing.append(value)
        return existing
    item_node = schema.item_schema(node)
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise PatchError(
                400, "BadRequest", f"map in a list merged by {key!r} does not contain the merge key {key!r}"
            )
        position = next(
            (i for i, e in enumerate(existing) if isinstance(e, dict) and e.get(key) == item[key]), None
        )
        if item.get(_DIRECTIVE) == "delete":
            if position is not None:
                existing.pop(position)
            continue
        if position is None:
            existing.append(strategic_merge({}, item, item_node))
        else:
            existing[position] = strategic_merge(existing[position], item, item_node)
    return existing


def _reorder(values: list[Any], order: list[Any], meta: schema.ListMeta) -> list[Any]:
    key = meta.merge_key

    def identity(value: Any) -> Any:
        return value.get(key) if key and isinstance(value, dict) else value

    wanted = [identity(v) for v in order]
    ranked = [v for w in wanted for v in values if identity(v) == w]
    rest = [v for v in values if identity(v) not in wanted]
    return ranked + rest


# ---------------------------------------------------------------------------------------------------------
# server-side apply

# Metadata fields the server owns; apply never records or removes them.
_SERVER_METADATA: Final = {
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "generateName",
}

Path = tuple[str, ...]


def _list_keys(node: dict[str, Any] | None) -> tuple[str, tuple[str, ...]]:
    """('map', keys) | ('set', ()) | ('atomic', ()) for a list field."""
    meta = schema.list_meta(node)
    if meta.list_type == "map" and meta.map_keys:
        return "map", meta.map_keys
    if meta.merge_key and "merge" in meta.strategies:
        return "map", (meta.merge_key,)
    if meta.list_type == "set" or ("merge" in meta.strategies and meta.merge_key is None):
        return "set", ()
    return "atomic", ()


def _item_token(item: Any, keys: tuple[str, ...]) -> str:
    ident = {k: item.get(k) for k in keys if isinstance(item, dict) and item.get(k) is not None}
    return "k:" + json.dumps(ident, sort_keys=True, separators=(",", ":"))


def _leaves(value: Json, node: dict[str, Any] | None, prefix: Path, out: set[Path]) -> None:
    if isinstance(value, dict) and value:
        map_like = schema.is_map_schema(node)
        for key, sub_value in value.items():
            sub = schema.field_schema(node, key)
            token = "f:" + key
            if isinstance(sub_value, list):
                _list_leaves(sub_value, sub, prefix + (token,), out)
            elif (
                isinstance(sub_value, dict)
                and sub_value
                and (
                    map_like
                    or sub is None
                    or "properties" in schema.resolve(sub)
                    or schema.is_map_schema(sub)
                )
            ):
                _leaves(sub_value, sub, prefix + (token,), out)
            else:
                out.add(prefix + (token,))
    else:
        out.add(prefix)


def _list_leaves(values: list[Any], node: dict[str, Any] | None, prefix: Path, out: set[Path]) -> None:
    kind, keys = _list_keys(node)
    if kind == "atomic" or not values:
        out.add(prefix)
        return
    if kind == "set":
        for value in values:
            out.add(prefix + ("v:" + json.dumps(value, sort_keys=True, separators=(",", ":")),))
        return
    item_node = schema.item_schema(node)
    for item in values:
        item_prefix = prefix + (_item_token(item, keys),)
        out.add(item_prefix + (".",))
        _leaves(item, item_node, item_prefix, out)


def _owned_paths(applied: dict[str, Any], root: dict[str, Any] | None) -> set[Path]:
    out: set[Path] = set()
    trimmed = {k: v for k, v in applied.items() if k not in ("apiVersion", "kind")}
    meta = trimmed.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k not in _SERVER_METADATA}
        if meta:
            trimmed["metadata"] = meta
        else:
            trimmed.pop("metadata")
    if trimmed:
        _leaves(trimmed, root, (), out)
    return out


def fields_to_v1(paths: set[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in sorted(paths):
        node = tree
        for token in path:
            node = node.setdefault(token, {})
    return tree


def fields_from_v1(tree: Any, prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    if not isinstance(tree, dict):
        return out
    for token, sub in tree.items():
        path = prefix + (token,)
        if isinstance(sub, dict) and sub:
            out |= fields_from_v1(sub, path)
        else:
            out.add(path)
    return out


def _strip_nulls(value: Json) -> Json:
    if isinstance(value, dict):
        return {k: _strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_nulls(v) for v in value]
    return value


def _apply_merge(current: Json, applied: Json, node: dict[str, Any] | None) -> Json:
    if isinstance(applied, dict) and isinstance(current, dict):
        result = dict(current)
        for key, value in applied.items():
            result[key] = _apply_merge(current.get(key), value, schema.field_schema(node, key))
        return result
    if isinstance(applied, list) and isinstance(current, list):
        kind, keys = _list_keys(node)
        if kind == "set":
            return list(current) + [v for v in applied if v not in current]
        if kind == "map":
            item_node = schema.item_schema(node)
            merged = list(current)
            for item in applied:
                token = _item_token(item, keys)
                position = next((i for i, e in enumerate(merged) if _item_token(e, keys) == token), None)
                if position is None:
                    merged.append(copy.deepcopy(item))
                else:
                    merged[position] = _apply_merge(merged[position], item, item_node)
            return merged
    return copy.deepcopy(applied)


def _lookup(obj: Json, path: Path, node: dict[str, Any] | None = None) -> tuple[bool, Json]:
    """Follow a field path; returns (found, value)."""
    value = obj
    for token in path:
        if token == ".":
            return True, value
        if token.startswith("f:"):
            if not isinstance(value, dict) or token[2:] not in value:
                return False, None
            value = value[token[2:]]
        elif token.startswith("k:"):
            ident = json.loads(token[2:])
            if not isinstance(value, list):
                return False, None
            match = [e for e in value if isinstance(e, dict) and all(e.get(k) == v for k, v in ident.items())]
            if not match:
                return False, None
            value = match[0]
        elif token.startswith("v:"):
            wanted = json.loads(token[2:])
            if not isinstance(value, list) or wanted not in value:
                return False, None
            return True, wanted
        else:
            return False, None
    return True, value


def _remove_path(obj: Json, path: Path) -> None:
    if not path:
        return
    if path[-1] == ".":
        path = path[:-1]
    found, parent = _lookup(obj, path[:-1])
    if not found:
        return
    token = path[-1]
    if token.startswith("f:") and isinstance(parent, dict):
        parent.pop(token[2:], None)
    elif token.startswith("k:") and isinstance(parent, list):
        ident = json.loads(token[2:])
        parent[:] = [
            e for e in parent if not (isinstance(e, dict) and all(e.get(k) == v for k, v in ident.items()))
        ]
    elif token.startswith("v:") and isinstance(parent, list):
        wanted = json.loads(token[2:])
        parent[:] = [e for e in parent if e != wanted]


def _prune_empty(obj: Json, path: Path) -> None:
    """After removing a field, drop parents that became empty objects (kube does not keep ``{}`` husks)."""
    for depth in range(len(path) - 1, 0, -1):
        parent_path = path[:depth]
        if parent_path[-1] == "." or not parent_path[-1].startswith("f:"):
            return
        found, value = _lookup(obj, parent_path)
        if found and value in ({}, []):
            _remove_path(obj, parent_path)
        else:
            return


def _path_text(path: Path) -> str:
    """``.spec.containers[name="c"].image`` like structured-merge-diff prints paths."""
    text = ""
    for token in path:
        if token.startswith("f:"):
            text += "." + token[2:]
        elif token.startswith("k:"):
            ident = json.loads(token[2:])
            text += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in ident.items()) + "]"
        elif token.startswith("v:"):
            text += "[=" + token[2:] + "]"
    return text


def _manager_label(entry: dict[str, Any]) -> str:
    name = json.dumps(entry.get("manager", ""))
    if entry.get("operation") == "Update":
        return f"{name} using {entry.get('apiVersion', '')}"
    return name


def _conflict_error(conflicts: list[tuple[dict[str, Any], Path]]) -> PatchError:
    count = len(conflicts)
    noun = "conflict" if count == 1 else "conflicts"
    if count == 1:
        entry, path = conflicts[0]
        detail = f"conflict with {_manager_label(entry)}: {_path_text(path)}"
    else:
        lines: list[str] = []
        by_manager: dict[str, list[Path]] = {}
        for entry, path in conflicts:
            by_manager.setdefault(_manager_label(entry), []).append(path)
        for label, paths in by_manager.items():
            lines.append(f"conflicts with {label}:")
            lines.extend(f"- {_path_text(p)}" for p in sorted(paths))
        detail = "\n".join(lines)
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {_manager_label(e)}",
            "field": _path_text(p),
        }
        for e, p in conflicts
    ]
    return PatchError(409, "Conflict", f"Apply failed with {count} {noun}: {detail}", causes)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _under(path: Path, owned: Path) -> bool:
    return path[: len(owned)] == owned


def server_side_apply(
    resource: ResourceDef,
    current: dict[str, Any] | None,
    body: bytes,
    *,
    field_manager: str | None,
    force: bool,
    subresource: str | None,
) -> dict[str, Any]:
    if not field_manager:
        raise PatchError(
            422,
            "Invalid",
            'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
            [
                {
                    "reason": "FieldValueRequired",
                    "message": "Required value: is required for apply patch",
                    "field": "fieldManager",
                }
            ],
        )
    try:
        applied = yaml.safe_load(body.decode("utf-8")) if body.strip() else None
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise PatchError(400, "BadRequest", f"error decoding YAML: {error}") from None
    if not isinstance(applied, dict):
        raise PatchError(400, "BadRequest", "the apply patch must be a YAML or JSON object")
    api_version = resource.version if not resource.group else f"{resource.group}/{resource.version}"
    if applied.get("apiVersion") != api_version or applied.get("kind") != resource.kind:
        raise PatchError(
            400,
            "BadRequest",
            f"apply patch must set apiVersion {api_version!r} and kind {resource.kind!r} "
            f"(got {applied.get('apiVersion')!r}, {applied.get('kind')!r})",
        )
    applied_meta = applied.get("metadata")
    if isinstance(applied_meta, dict) and applied_meta.get("managedFields"):
        raise PatchError(400, "BadRequest", "metadata.managedFields must be nil")
    applied = _strip_nulls(applied)
    if subresource == "status":
        applied = {k: v for k, v in applied.items() if k in ("apiVersion", "kind", "metadata", "status")}
        meta = applied.get("metadata")
        if isinstance(meta, dict):
            applied["metadata"] = {k: v for k, v in meta.items() if k in _SERVER_METADATA}
    else:
        applied.pop("status", None)
    root = schema.kind_schema(resource.group, resource.version, resource.kind)
    owned = _owned_paths(applied, root)
    base: dict[str, Any] = copy.deepcopy(current) if current is not None else {}
    base_meta = base.get("metadata")
    entries = _managed_entries(base_meta) if isinstance(base_meta, dict) else []
    entry_sub = subresource or ""

    def is_mine(entry: dict[str, Any]) -> bool:
        return (
            entry.get("manager") == field_manager
            and entry.get("operation") == "Apply"
            and (entry.get("subresource") or "") == entry_sub
        )

    previous: set[Path] = set()
    others: list[tuple[dict[str, Any], set[Path]]] = []
    for entry in entries:
        paths = fields_from_v1(entry.get("fieldsV1"))
        if is_mine(entry):
            previous = paths
        else:
            others.append((entry, paths))

    conflicts: list[tuple[dict[str, Any], Path]] = []
    if current is not None:
        applied_view = _apply_merge({}, applied, root)
        for path in sorted(owned):
            found, existing = _lookup(base, path)
            if not found:
                continue
            _, wanted = _lookup(applied_view, path)
            if existing == wanted or path[-1] == ".":
                continue
            for entry, paths in others:
                if path in paths:
                    conflicts.append((entry, path))
    if conflicts and not force:
        raise _conflict_error(conflicts)

    result = _apply_merge(base, applied, root)
    others_owned: set[Path] = set()
    for _, paths in others:
        others_owned |= paths
    # Whole list elements first: removing a key field before its element would orphan the element.
    for path in sorted(previous - owned, key=lambda p: (p[-1] != ".", len(p), p)):
        if path in others_owned or any(_under(path, o) for o in owned if len(o) < len(path)):
            continue
        element = path[:-1] if path[-1] == "." else None
        if element is not None and any(_under(o, element) for o in others_owned):
            continue  # another manager still owns fields inside this list element
        _remove_path(result, path)
        _prune_empty(result, path)

    conflicted = {p for _, p in conflicts}
    new_entries: list[dict[str, Any]] = []
    for entry, paths in others:
        kept = paths - conflicted if force else paths
        if kept:
            entry["fieldsV1"] = fields_to_v1(kept)
            new_entries.append(entry)
    mine: dict[str, Any] = {
        "manager": field_manager,
        "operation": "Apply",
        "apiVersion": api_version,
        "time": _now(),
        "fieldsType": "FieldsV1",
        "fieldsV1": fields_to_v1(owned),
    }
    if subresource:
        mine["subresource"] = subresource
    if owned:
        new_entries.append(mine)
    metadata = result.setdefault("metadata", {})
    if not isinstance(metadata, dict):
        raise PatchError(400, "BadRequest", "metadata must be an object")
    metadata["managedFields"] = new_entries
    if current is None:
        result.setdefault("apiVersion", api_version)
        result.setdefault("kind", resource.kind)
    return dict(result)


def _managed_entries(metadata: dict[str, Any]) -> list[dict[str, Any]]:
    entries = metadata.get("managedFields")
    return [dict(e) for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def record_update(
    resource: ResourceDef,
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    field_manager: str,
    subresource: str | None = None,
) -> dict[str, Any]:
    """Record a non-apply write (create, PUT, merge/JSON/strategic PATCH) in ``new``'s managedFields.

    The manager takes ownership of the leaf fields that the write set or changed (operation ``Update``), and
    other managers lose them, so a later apply by someone else that changes those fields conflicts as kube's
    does.  Optional for the server: without it apply still works, just without Update-vs-Apply conflicts.
    """
    root = schema.kind_schema(resource.group, resource.version, resource.kind)
    new_paths = _owned_paths(new, root)
    old_paths = _owned_paths(old, root) if old is not None else set()
    changed = {p for p in new_paths if p not in old_paths or _lookup(new, p) != _lookup(old or {}, p)}
    result = copy.deepcopy(new)
    metadata = result.setdefault("metadata", {})
    if not isinstance(metadata, dict):
        return result  # validation refuses such an object; nothing to record
    entries = _managed_entries(metadata)
    api_version = resource.version if not resource.group else f"{resource.group}/{resource.version}"
    kept: list[dict[str, Any]] = []
    mine_paths: set[Path] = set()
    for entry in entries:
        paths = fields_from_v1(entry.get("fieldsV1"))
        paths = {p for p in paths if p in new_paths or p[-1] == "." and _lookup(new, p)[0]}
        if (
            entry.get("manager") == field_manager
            and entry.get("operation") == "Update"
            and (entry.get("subresource") or "") == (subresource or "")
        ):
            mine_paths |= paths
            continue
        paths -= changed
        if paths:
            entry["fieldsV1"] = fields_to_v1(paths)
            kept.append(entry)
    mine_paths |= changed
    if mine_paths:
        entry = {
            "manager": field_manager,
            "operation": "Update",
            "apiVersion": api_version,
            "time": _now(),
            "fieldsType": "FieldsV1",
            "fieldsV1": fields_to_v1(mine_paths),
        }
        if subresource:
            entry["subresource"] = subresource
        kept.append(entry)
    metadata["managedFields"] = kept
    return dict(result)
