"""managedFields: the leaf fields an object's managers own, as sets of paths and as FieldsV1 trees.

A path is a tuple of FieldsV1 tokens: ``f:<field>`` for an object field, ``k:<json>`` for a list-map
element by its keys, ``v:<json>`` for a set member, and ``.`` for "the element itself". List semantics
(map keys, set, atomic) come from the schema, as structured-merge-diff reads them.
"""

from __future__ import annotations

import json
from typing import Any, Final

from simcluster import schema
from simcluster.patching.errors import Json

# Metadata fields the server owns; apply never records or removes them.
SERVER_METADATA: Final = {
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


def list_keys(node: dict[str, Any] | None) -> tuple[str, tuple[str, ...]]:
    """('map', keys) | ('set', ()) | ('atomic', ()) for a list field."""
    meta = schema.list_meta(node)
    if meta.list_type == "map" and meta.map_keys:
        return "map", meta.map_keys
    if meta.merge_key and "merge" in meta.strategies:
        return "map", (meta.merge_key,)
    if meta.list_type == "set" or ("merge" in meta.strategies and meta.merge_key is None):
        return "set", ()
    return "atomic", ()


def item_token(item: Any, keys: tuple[str, ...]) -> str:
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
    kind, keys = list_keys(node)
    if kind == "atomic" or not values:
        out.add(prefix)
        return
    if kind == "set":
        for value in values:
            out.add(prefix + ("v:" + json.dumps(value, sort_keys=True, separators=(",", ":")),))
        return
    item_node = schema.item_schema(node)
    for item in values:
        item_prefix = prefix + (item_token(item, keys),)
        out.add(item_prefix + (".",))
        _leaves(item, item_node, item_prefix, out)


def owned_paths(applied: dict[str, Any], root: dict[str, Any] | None) -> set[Path]:
    out: set[Path] = set()
    trimmed = {k: v for k, v in applied.items() if k not in ("apiVersion", "kind")}
    meta = trimmed.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k not in SERVER_METADATA}
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


def lookup(obj: Json, path: Path, node: dict[str, Any] | None = None) -> tuple[bool, Json]:
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


def remove_path(obj: Json, path: Path) -> None:
    if not path:
        return
    if path[-1] == ".":
        path = path[:-1]
    found, parent = lookup(obj, path[:-1])
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


def prune_empty(obj: Json, path: Path) -> None:
    """After removing a field, drop parents that became empty objects (kube does not keep ``{}`` husks)."""
    for depth in range(len(path) - 1, 0, -1):
        parent_path = path[:depth]
        if parent_path[-1] == "." or not parent_path[-1].startswith("f:"):
            return
        found, value = lookup(obj, parent_path)
        if found and value in ({}, []):
            remove_path(obj, parent_path)
        else:
            return


def path_text(path: Path) -> str:
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


def managed_entries(metadata: dict[str, Any]) -> list[dict[str, Any]]:
    entries = metadata.get("managedFields")
    return [dict(e) for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
