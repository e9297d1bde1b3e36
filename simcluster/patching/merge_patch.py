"""RFC 7386 JSON merge patch (``application/merge-patch+json``): objects merge, ``null`` deletes, anything
else replaces."""

from __future__ import annotations

import copy

from simcluster.jsondata import clone
from simcluster.patching.errors import Json


def merge_patch(target: Json, patch: Json) -> Json:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = clone(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result
