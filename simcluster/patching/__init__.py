"""PATCH for the simulated API server: JSON merge, strategic merge, JSON patch and server-side apply.

One module per algorithm (`merge_patch`, `json_patch`, `strategic`, `apply` with `managed_fields`);
`apply_patch` picks one by the request's content type, as kube-apiserver does.
"""

from __future__ import annotations

import json
from typing import Any, Final

from simcluster import schema
from simcluster.patching import gojson
from simcluster.patching.apply import record_update, server_side_apply
from simcluster.patching.errors import Json, PatchError
from simcluster.patching.json_patch import json_patch
from simcluster.patching.merge_patch import merge_patch
from simcluster.patching.strategic import strategic_merge
from simcluster.schema import ResourceDef

__all__ = [
    "APPLY_PATCH",
    "APPLY_PATCH_CBOR",
    "JSON_PATCH",
    "MERGE_PATCH",
    "STRATEGIC_MERGE_PATCH",
    "SUPPORTED",
    "PatchError",
    "apply_patch",
    "record_update",
]

MERGE_PATCH: Final = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH: Final = "application/strategic-merge-patch+json"
JSON_PATCH: Final = "application/json-patch+json"
APPLY_PATCH: Final = "application/apply-patch+yaml"
APPLY_PATCH_CBOR: Final = "application/apply-patch+cbor"
SUPPORTED: Final = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)


def apply_patch(
    resource: ResourceDef,
    current: dict[str, Any] | None,
    patch_body: bytes,
    content_type: str,
    *,
    field_manager: str | None = None,
    force: bool = False,
    subresource: str | None = None,
    private: bool = False,
) -> dict[str, Any]:
    """Return the patched object (a new dict; ``current`` is not modified, unless ``private`` says it is the
    caller's own copy, which a merge patch then patches in place)."""
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
    patch = _decode_json(patch_body, media)
    if media == JSON_PATCH:
        try:
            result = json_patch(current, patch)
        except PatchError as error:
            if error.status != 422:
                raise
            # kube-apiserver drops the json-patch library's reason (NewGenericServerResponse without causes):
            # kubectl shows only this sentence. The reason stays on the exception for the server's log.
            raise PatchError(422, "Invalid", JSON_PATCH_REFUSED, detail=error.message) from error
    elif media == MERGE_PATCH:
        if not isinstance(patch, dict):  # null: json-patch's MergePatch refuses it as ErrBadJSONPatch
            raise PatchError(400, "BadRequest", "Invalid JSON Patch")
        result = merge_patch(current, patch, private=private)  # `patch` was decoded just above
    else:
        if not isinstance(patch, dict):
            raise PatchError(400, "BadRequest", "strategic merge patch must be a JSON object")
        root = schema.kind_schema(resource.group, resource.version, resource.kind)
        result = strategic_merge(current, patch, root)
    if not isinstance(result, dict):
        raise PatchError(422, "Invalid", "the patched object is not a JSON object")
    return result


JSON_PATCH_REFUSED = "the server rejected our request due to an error in our request"


# What kube-apiserver decodes a patch into first (handlers/patch.go, with the default fieldValidation Warn, as
# kubectl patch sends none, or Strict): a JSON or merge patch through sigs.k8s.io/json's UnmarshalStrict, whose
# error it prefixes with "error decoding patch: "; a strategic merge patch into a map, its error as it is.
_DECODED_INTO = {
    JSON_PATCH: ("error decoding patch: ", "[]handlers.jsonPatchOp"),
    MERGE_PATCH: ("error decoding patch: ", "map[string]interface {}"),
    STRATEGIC_MERGE_PATCH: ("", "map[string]interface {}"),
}


def _not_json(word: str) -> Any:
    """NaN and Infinity, which Python's json reads and Go's refuses."""
    raise ValueError(f"{word} is not JSON")


def _decode_json(body: bytes, media: str) -> Json:
    """The patch, or kube-apiserver's BadRequest in Go's encoding/json words for one that does not decode:
    `error decoding patch: unexpected end of JSON input`, `invalid character 'b' looking for beginning of
    object key string`, `json: cannot unmarshal array into Go value of type map[string]interface {}`."""
    prefix, go_type = _DECODED_INTO.get(media, ("error decoding patch: ", "map[string]interface {}"))
    try:
        # Go's decoder is only asked for the words of a refusal: scanning every patch twice cost the
        # scheduler's burst writes about a twentieth of their time.
        patch = json.loads(body, parse_constant=_not_json)
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        syntax = gojson.syntax_error(body)
        if syntax is not None:
            raise PatchError(400, "BadRequest", prefix + syntax) from None
        raise PatchError(400, "BadRequest", f"error decoding patch: {error}") from None
    wrong = None
    if media == JSON_PATCH:
        if not isinstance(patch, list) and patch is not None:
            wrong = (patch, go_type)
        else:
            bad = next((op for op in patch or [] if not isinstance(op, dict) and op is not None), None)
            if bad is not None:
                wrong = (bad, "handlers.jsonPatchOp")
    elif not isinstance(patch, dict) and patch is not None:
        wrong = (patch, go_type)
    if wrong is not None:
        value, into = wrong
        raise PatchError(
            400,
            "BadRequest",
            f"{prefix}json: cannot unmarshal {gojson.type_name(value)} into Go value of type {into}",
        )
    return patch
