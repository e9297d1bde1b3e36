"""RFC 7386 JSON merge patch (``application/merge-patch+json``): objects merge, ``null`` deletes, anything
else replaces."""

from __future__ import annotations

from simcluster.jsondata import clone
from simcluster.patching.errors import Json


def merge_patch(target: Json, patch: Json, *, private: bool = False) -> Json:
    """The patched value, new: neither ``target`` nor ``patch`` is changed or shared with it. ``private``:
    both are the caller's own copies (freshly decoded), which the result may take over instead."""
    if private:
        return _merge_into(target, patch)
    return _merge_into(clone(target), clone(patch))


def _merge_into(target: Json, patch: Json) -> Json:
    """Merge ``patch`` into ``target`` in place (both already private copies)."""
    if not isinstance(patch, dict):
        return patch
    result = target if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_into(result.get(key), value)
    return result
