"""REST API of the migration room (under /api/migration/). Any signed-in user: nothing is written anywhere.

POST upgrade/ with JSON {"yaml": "...", "inventory": true} or a multipart `file` →
{changed, failed, documents: [{index, kind, name, from, to, action, changed, notes, errors}], yaml, diff}.
400/413 in the API's error envelope {"errors": [{"field", "message"}], "detail"} for bad input; 422 (the
same report plus "errors" and "detail") when a document cannot be converted.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dradash.api import JSONParser, error_body, error_response
from migration.upgrade import UploadError, manifests_upgrade, read_upload, upgrade_report


def _flag(value: Any, *, field: str) -> bool:
    if value is None or value in (True, False):
        return value is not False
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise UploadError(field, "must be true or false")


def _data(request: Request) -> Any:
    return request.data  # a JSON object (dradash.api.JSONParser refuses anything else) or a form


def _upload(request: Request) -> Any:
    _data(request)  # parses the body (and refuses a JSON array) before FILES is read
    return request.FILES.get("file")


class UpgradeRequest(serializers.Serializer[Any]):
    """For the schema: the JSON form of the body (multipart sends `file` instead of `yaml`)."""

    yaml = serializers.CharField(help_text="multi-document YAML, at most 1 MiB")
    inventory = serializers.BooleanField(
        required=False, default=True, help_text="compile legacy selectors against the mirrored inventory"
    )


class UpgradeView(APIView):
    permission_classes = [IsAuthenticated]  # viewers too: converting text writes nothing to the cluster
    parser_classes = [JSONParser, MultiPartParser, FormParser]

    @extend_schema(
        operation_id="migration_upgrade",
        request={"application/json": UpgradeRequest, "multipart/form-data": OpenApiTypes.OBJECT},
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="the report, the converted YAML and diff"),
            422: OpenApiResponse(OpenApiTypes.OBJECT, description="the report; a document cannot convert"),
        },
    )
    def post(self, request: Request) -> Response:
        try:
            text, source = read_upload(
                content_length=request.META.get("CONTENT_LENGTH"),
                text=lambda: _data(request).get("yaml"),
                upload=lambda: _upload(request),
            )
            use_inventory = _flag(_data(request).get("inventory"), field="inventory")
        except UploadError as error:
            return error_response(error.field, error.message, status_code=error.status)
        result = manifests_upgrade(text=text, source=source, use_inventory=use_inventory)
        body = upgrade_report(result)
        if result.failed:
            problems = [
                {"field": "yaml", "document": doc.index, "path": p.path, "message": p.message}
                for doc in result.documents
                for p in doc.problems
            ]
            return Response({**body, **error_body(problems)}, status=422)
        return Response(body)


urlpatterns = [path("upgrade/", UpgradeView.as_view(), name="api-upgrade")]
