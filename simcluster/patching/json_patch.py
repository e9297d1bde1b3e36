"""RFC 6902 JSON patch (``application/json-patch+json``): add, remove, replace, move, copy and test on
RFC 6901 pointers, all or nothing (the operations run on a copy)."""

from __future__ import annotations

import copy
import json
from typing import Any

from simcluster.patching.errors import Json, PatchError


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
            # json-patch (v4) finds this applying the patch: kube-apiserver answers 422, as for any failed op
            raise PatchError(422, "Invalid", f"{op} operation failed to decode path")
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
                raise PatchError(422, "Invalid", f"{op} operation failed to decode from")
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
            # json-patch's Apply: "Unexpected kind: <op>", which kube-apiserver answers with a bare 422
            raise PatchError(422, "Invalid", f"Unexpected kind: {op}")
    return doc
