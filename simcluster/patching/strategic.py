"""Strategic merge patch (``application/strategic-merge-patch+json``).

The list semantics (merge key, patch strategy) come from the same v1.37 schema that validation uses, so
Pod containers merge by ``name``, condition lists by ``type``, and lists without a strategy are replaced.
The directives ``$patch`` (replace, delete, merge), ``$retainKeys``, ``$deleteFromPrimitiveList/<field>``
and ``$setElementOrder/<field>`` are honoured as kube-apiserver honours them.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from simcluster import schema
from simcluster.patching.errors import Json, PatchError

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
