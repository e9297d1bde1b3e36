"""Server-side apply (``application/apply-patch+yaml``) and the managedFields record of other writes.

Each manager's owned leaf fields are kept in ``metadata.managedFields`` (FieldsV1), so removing a field
from the applied configuration removes it from the object (unless another manager owns it), and changing
a field another manager owns is a conflict reported as kube reports it (409, one cause per field) unless
the apply is forced, which takes the fields over.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import yaml

from simcluster import schema
from simcluster.jsondata import clone
from simcluster.patching.errors import Json, PatchError
from simcluster.patching.managed_fields import (
    SERVER_METADATA,
    Path,
    compare,
    empty_object_nodes,
    fields_from_v1,
    fields_to_v1,
    item_token,
    list_keys,
    lookup,
    managed_entries,
    node_map,
    node_path,
    owned_paths,
    path_text,
    prune_empty,
    remove_path,
)
from simcluster.resources import lookup as served_resource
from simcluster.schema import ResourceDef


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
        kind, keys = list_keys(node)
        if kind == "set":
            return list(current) + [v for v in applied if v not in current]
        if kind == "map":
            item_node = schema.item_schema(node)
            merged = list(current)
            for item in applied:
                token = item_token(item, keys)
                position = next((i for i, e in enumerate(merged) if item_token(e, keys) == token), None)
                if position is None:
                    merged.append(copy.deepcopy(item))
                else:
                    merged[position] = _apply_merge(merged[position], item, item_node)
            return merged
    return copy.deepcopy(applied)


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
        detail = f"conflict with {_manager_label(entry)}: {path_text(path)}"
    else:
        lines: list[str] = []
        by_manager: dict[str, list[Path]] = {}
        for entry, path in conflicts:
            by_manager.setdefault(_manager_label(entry), []).append(path)
        for label, paths in by_manager.items():
            lines.append(f"conflicts with {label}:")
            lines.extend(f"- {path_text(p)}" for p in sorted(paths))
        detail = "\n".join(lines)
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {_manager_label(e)}",
            "field": path_text(p),
        }
        for e, p in conflicts
    ]
    return PatchError(409, "Conflict", f"Apply failed with {count} {noun}: {detail}", causes)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _under(path: Path, owned: Path) -> bool:
    return path[: len(owned)] == owned


#: the manager upstream's skipNonAppliedManager gives the fields of an object without managedFields
BEFORE_FIRST_APPLY = "before-first-apply"


def _before_first_apply(
    resource: ResourceDef,
    live: dict[str, Any],
    root: dict[str, Any] | None,
    api_version: str,
    subresource: str | None,
) -> list[dict[str, Any]]:
    """An apply to an object that has no managedFields first records it as written by `before-first-apply`
    (an Update from the kind's empty object, as upstream's skipNonAppliedManager does), so an apply that
    changes its fields conflicts with that manager instead of silently taking them. The status is the status
    subresource's (the main resource's field manager resets it), and the rest the main resource's."""
    new_nodes = node_map(_tracked(resource, live, subresource), root)
    empty = empty_object_nodes(new_nodes, root, _root_name(resource))
    paths, _ = compare(empty, new_nodes)
    if not paths:
        return []
    return [_entry(BEFORE_FIRST_APPLY, "Update", api_version, paths, subresource)]


def _entry(
    manager: str, operation: str, api_version: str, paths: set[Path], subresource: str | None
) -> dict[str, Any]:
    """One managedFields entry: `manager` owns `paths` through `operation`, now."""
    entry: dict[str, Any] = {
        "manager": manager,
        "operation": operation,
        "apiVersion": api_version,
        "time": _now(),
        "fieldsType": "FieldsV1",
        "fieldsV1": fields_to_v1(paths),
    }
    if subresource:
        entry["subresource"] = subresource
    return entry


def _root_name(resource: ResourceDef) -> str | None:
    return schema.definition_name(resource.group, resource.version, resource.kind)


def _tracked(resource: ResourceDef, obj: dict[str, Any], subresource: str | None) -> dict[str, Any]:
    """The part of `obj` a write's field manager records: the status subresource's writes only the status;
    the main resource's all but the status, when the kind has a status subresource (its reset fields)."""
    if subresource == "status":
        return {"status": obj["status"]} if "status" in obj else {}
    if getattr(served_resource(resource.group, resource.version, resource.plural), "status", False):
        return {k: v for k, v in obj.items() if k != "status"}
    return obj


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
            applied["metadata"] = {k: v for k, v in meta.items() if k in SERVER_METADATA}
    else:
        applied.pop("status", None)
    root = schema.kind_schema(resource.group, resource.version, resource.kind)
    owned = owned_paths(applied, root)
    base: dict[str, Any] = copy.deepcopy(current) if current is not None else {}
    base_meta = base.get("metadata")
    entries = managed_entries(base_meta) if isinstance(base_meta, dict) else []
    entry_sub = subresource or ""
    if current is not None and not entries:
        entries = _before_first_apply(resource, base, root, api_version, subresource)

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
            found, existing = lookup(base, path)
            if not found:
                continue
            _, wanted = lookup(applied_view, path)
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
        remove_path(result, path)
        prune_empty(result, path)

    conflicted = {p for _, p in conflicts}
    new_entries: list[dict[str, Any]] = []
    for entry, paths in others:
        kept = paths - conflicted if force else paths
        if kept:
            entry["fieldsV1"] = fields_to_v1(kept)
            new_entries.append(entry)
    mine = _entry(field_manager, "Apply", api_version, owned, subresource)
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


def record_update(
    resource: ResourceDef,
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    field_manager: str,
    subresource: str | None = None,
    decoded: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Record a non-apply write (create, PUT, merge/JSON/strategic PATCH) in ``new``'s managedFields.

    As upstream's field manager: the write is compared with the object before it (on create, the kind's
    empty object) and the manager takes what it added or changed (operation ``Update``), with ``.`` for an
    object or list item it added; other managers lose those fields, and everyone what it removed, so a later
    apply by someone else that changes them conflicts as kube's does. `decoded`: the object as the request
    decoded to, defaults of the scheme included, before admission and the registry's strategy changed it
    (upstream records it then: what they add is nobody's); ``new`` when not given.
    """
    root = schema.kind_schema(resource.group, resource.version, resource.kind)
    new_nodes = node_map(_tracked(resource, new if decoded is None else decoded, subresource), root)
    if old is None:
        old_nodes = empty_object_nodes(new_nodes, root, _root_name(resource))
    else:
        old_nodes = node_map(_tracked(resource, old, subresource), root)
    changed, removed = compare(old_nodes, new_nodes)
    if decoded is not None:  # what the object no longer has after admission is not recorded
        changed = {p for p in changed if lookup(new, p)[0]}
    result: dict[str, Any] = clone(new)
    metadata = result.setdefault("metadata", {})
    if not isinstance(metadata, dict):
        return result  # validation refuses such an object; nothing to record
    # A subresource's write keeps the stored object's record (the request's is ignored); the main resource's
    # takes the request's when it brings one, an empty list resetting it, else the stored object's.
    given = metadata.get("managedFields")
    if subresource is not None and old is not None:
        given = (old.get("metadata") or {}).get("managedFields")
    entries = managed_entries({"managedFields": given})
    if old is not None and not entries:
        # upstream's skipNonAppliedManager: an update of an object nobody is recorded for (or whose record
        # the request reset) is not tracked; only a create or an apply starts the record
        metadata.pop("managedFields", None)
        return dict(result)
    api_version = resource.version if not resource.group else f"{resource.group}/{resource.version}"
    kept: list[dict[str, Any]] = []
    mine_paths: set[Path] = set()
    for entry in entries:
        paths = {node_path(p) for p in fields_from_v1(entry.get("fieldsV1"))} - removed
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
        kept.append(_entry(field_manager, "Update", api_version, mine_paths, subresource))
    if kept:
        metadata["managedFields"] = kept
    else:
        metadata.pop("managedFields", None)
    return dict(result)
