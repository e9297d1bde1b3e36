"""The OpenAPI schema: its view, and the error envelope (`dradash.api.error_body`) documented in it."""

from __future__ import annotations

from typing import Any

from drf_spectacular.views import SpectacularAPIView
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": (
        "Every 4xx answer. `field` names the input (dotted for nested fields, `body` for the body itself, "
        '`""` when the error is not about one field); `detail` repeats the messages in one line. A room may '
        "add context beside them (maintenance: `headline`, `current`, `changed`, `cluster`)."
    ),
    "properties": {
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
                "required": ["field", "message"],
            },
        },
        "detail": {"type": "string"},
    },
    "required": ["errors", "detail"],
}


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Document the envelope once (components.schemas.Error) and as every operation's 4XX answer."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    reference = {
        "description": "refused: bad input (400), no credential (401), not allowed (403), not found (404), "
        "method not allowed (405), conflict (409), body too large (413), too many runs (429)",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict) and "responses" in operation:
                operation["responses"].setdefault("4XX", reference)
    return result


class SchemaView(SpectacularAPIView):
    """The schema (YAML, or JSON with `?format=json`); its refusals (401, a bad `format`) in JSON."""

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        if response.status_code >= 400:  # the envelope is JSON, whatever format the schema was asked in
            request.accepted_renderer = JSONRenderer()
            request.accepted_media_type = JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)
