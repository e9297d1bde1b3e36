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


def _atomic_map(node: dict[str, Any] | None) -> bool:
    """A struct kept whole (``x-kubernetes-map-type: atomic``: LabelSelector, OwnerReference): one leaf."""
    return node is not None and schema.resolve(node).get("x-kubernetes-map-type") == "atomic"


def _descends(value: Json, sub: dict[str, Any] | None, map_like: bool) -> bool:
    """Whether a non-empty object value is walked field by field rather than owned as one leaf."""
    return (
        isinstance(value, dict)
        and bool(value)
        and not _atomic_map(sub)
        and (map_like or sub is None or "properties" in schema.resolve(sub) or schema.is_map_schema(sub))
    )


def _leaves(value: Json, node: dict[str, Any] | None, prefix: Path, out: set[Path]) -> None:
    if isinstance(value, dict) and value:
        map_like = schema.is_map_schema(node)
        for key, sub_value in value.items():
            sub = schema.field_schema(node, key)
            token = "f:" + key
            if isinstance(sub_value, list):
                _list_leaves(sub_value, sub, prefix + (token,), out)
            elif _descends(sub_value, sub, map_like):
                if map_like:  # a map's entry is owned itself too, as any key that is data, not a field
                    out.add(prefix + (token, "."))
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
        if _atomic_map(item_node):
            out.add(item_prefix)
            continue
        out.add(item_prefix + (".",))
        _leaves(item, item_node, item_prefix, out)


#: a node that holds others (an object walked field by field, a list walked item by item)
_INNER: Final = object()


def _nodes(value: Json, node: dict[str, Any] | None, prefix: Path, out: dict[Path, Any]) -> None:
    """Every node of `value` under `prefix`, as structured-merge-diff's comparison sees them: a leaf maps
    to its value, a node with fields or items to `_INNER`. Paths carry no ``.``: a node is its path."""
    if isinstance(value, dict) and value:
        map_like = schema.is_map_schema(node)
        for key, sub_value in value.items():
            sub = schema.field_schema(node, key)
            path = prefix + ("f:" + key,)
            if isinstance(sub_value, list):
                _list_nodes(sub_value, sub, path, out)
            elif _descends(sub_value, sub, map_like):
                out[path] = _INNER
                _nodes(sub_value, sub, path, out)
            else:
                out[path] = sub_value


def _list_nodes(values: list[Any], node: dict[str, Any] | None, path: Path, out: dict[Path, Any]) -> None:
    kind, keys = list_keys(node)
    if kind == "atomic" or not values:
        out[path] = values
        return
    out[path] = _INNER
    if kind == "set":
        for value in values:
            out[path + ("v:" + json.dumps(value, sort_keys=True, separators=(",", ":")),)] = value
        return
    item_node = schema.item_schema(node)
    for item in values:
        item_path = path + (item_token(item, keys),)
        if _atomic_map(item_node) or not isinstance(item, dict):
            out[item_path] = item
        else:
            out[item_path] = _INNER
            _nodes(item, item_node, item_path, out)


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
    """The FieldsV1 tree of a set of paths. A path that is owned itself and has owned paths under it (a list
    item, a map's entry, an object an Update added) gets ``.`` among its children, as upstream serializes a
    set member that is also a parent; a path ending in ``.`` says the same.

    The paths are inserted in sorted order, so each level's keys come out sorted with no second pass (the
    tree is built on every write a controller makes: a burst's hot path)."""
    parents = {path[:i] for path in paths for i in range(1, len(path))}
    marked = {path + (".",) for path in paths if path and path[-1] != "." and path in parents}
    tree: dict[str, Any] = {}
    for path in sorted(paths | marked):
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


# ---------------------------------------------------------------------- an Update's record
#
# A non-apply write (create, PUT, merge/JSON/strategic PATCH) is recorded as structured-merge-diff compares
# the object before the write with the object the request decoded to (defaults of the scheme included,
# before admission and the registry's strategy add theirs): the writer owns every node it added (an object
# or list item as well as its leaves: ``.``) and every leaf it changed; everyone loses what it removed.

#: metadata an Update never records (upstream's stripMeta, besides `metadata` itself)
UPDATE_STRIPPED: Final = frozenset(
    {"name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation",
     "managedFields", "resourceVersion"}
)  # fmt: skip

#: optional fields that hold a struct by value, so present (``{}``) in a kind's empty object; besides these,
#: a required field and any struct named metadata, spec or status are
_VALUE_STRUCTS: Final = frozenset(
    {
        ("io.k8s.api.apps.v1.DeploymentSpec", "strategy"),
        ("io.k8s.api.apps.v1.DaemonSetSpec", "updateStrategy"),
        ("io.k8s.api.apps.v1.StatefulSetSpec", "updateStrategy"),
        ("io.k8s.api.core.v1.Container", "resources"),
        ("io.k8s.api.core.v1.PersistentVolumeClaimSpec", "resources"),
        ("io.k8s.api.resource.v1.ResourceClaimSpec", "devices"),
    }
)


def node_map(obj: dict[str, Any], root: dict[str, Any] | None) -> dict[Path, Any]:
    """The nodes of `obj` an Update compares (identity and server-owned metadata left out)."""
    trimmed = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    meta = trimmed.get("metadata")
    if isinstance(meta, dict):
        trimmed["metadata"] = {k: v for k, v in meta.items() if k not in UPDATE_STRIPPED}
    out: dict[Path, Any] = {}
    _nodes(trimmed, root, (), out)
    out.pop(("f:metadata",), None)  # never owned itself
    return out


def _definition(node: dict[str, Any], name: str | None) -> str | None:
    ref = node.get("$ref")
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else name


def _in_empty_object(path: Path, root: dict[str, Any] | None, root_name: str | None) -> bool:
    """Whether the node at `path` is there in the kind's empty object (the Go zero value, encoded): the
    object a create is compared with. Data (map entries, list items) never is."""
    node, name = root, root_name
    for token in path:
        if node is None or not token.startswith("f:"):
            return False
        parent = schema.resolve(node)
        sub = (parent.get("properties") or {}).get(token[2:])
        if sub is None:
            return False
        field = token[2:]
        struct = "properties" in schema.resolve(sub)
        if not (
            (struct and field in ("metadata", "spec", "status"))
            or field in (parent.get("required") or ())
            or (name, field) in _VALUE_STRUCTS
        ):
            return False
        node, name = sub, _definition(sub, None)
    return True


def empty_object_nodes(new_nodes: dict[Path, Any], root: dict[str, Any] | None, root_name: str | None
                       ) -> dict[Path, Any]:  # fmt: skip
    """The nodes of the kind's empty object that `new_nodes` shares: its objects and lists with something
    in them, and its empty objects (which a create leaving them empty does not change)."""
    return {
        path: value
        for path, value in new_nodes.items()
        if (value is _INNER or value == {}) and _in_empty_object(path, root, root_name)
    }


def compare(old: dict[Path, Any], new: dict[Path, Any]) -> tuple[set[Path], set[Path]]:
    """(added or changed, removed) nodes between two node maps."""
    changed = {
        path
        for path, value in new.items()
        if path not in old
        or (
            value is not _INNER
            and old[path] is not _INNER
            and (value != old[path] or type(value) is not type(old[path]))
        )
    }
    return changed, old.keys() - new.keys()


def node_path(path: Path) -> Path:
    """A FieldsV1 path as a node: ``.`` (the node itself) dropped."""
    return path[:-1] if path and path[-1] == "." else path
