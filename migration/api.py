"""REST API of the migration room (under /api/migration/). Upgrades and the device-plugin assistant: any
signed-in user, nothing is written. Pool availability snapshots: operators and admins create and delete
ResourcePoolStatusRequests (as themselves under impersonation).

POST upgrade/ with JSON {"yaml": "...", "inventory": true} or a multipart `file` (one; not beside a `yaml`) →
{changed, failed, documents: [{index, kind, name, from, to, action, changed, notes, errors}], yaml, diff}.
400/413 in the API's error envelope {"errors": [{"field", "message"}], "detail"} for bad input (a field
it does not take, YAML beyond `dra.yamlshape`, more than 1,000 documents among others); 422 (the
same report plus "errors" and "detail") when a document cannot be converted.
"""

from __future__ import annotations

from typing import Any

from django.http import QueryDict
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dradash.api import JSONParser, error_body, error_response, unknown_fields, unknown_params
from dradash.context import user_can_author
from migration.device_plugins import assistant_json, device_plugin_assistant
from migration.pool_status import (
    PoolStatusInputError,
    PoolStatusWriteError,
    pool_status_create,
    pool_status_delete,
    pool_status_refresh,
    pool_status_snapshots,
    snapshot_json,
)
from migration.upgrade import UploadError, form_file, manifest_upgrade, read_upload, upgrade_report


def _flag(value: Any, *, field: str) -> bool:
    if value is None or value in (True, False):
        return value is not False
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise UploadError(field, "must be true or false")


def _data(request: Request) -> Any:
    return request.data  # a JSON object (dradash.api.JSONParser refuses anything else) or a form


def _upload(request: Request) -> Any:
    data = _data(request)  # parses the body (and refuses a JSON array) before FILES is read
    if isinstance(data, QueryDict):  # a form's data holds its files too (DRF merges them)
        return form_file(data, request.FILES.getlist("file"))
    unknown_fields(data, ("inventory", "yaml"))  # a JSON object: `yaml` (and `inventory`)
    return None


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
            manifest = read_upload(
                content_length=request.META.get("CONTENT_LENGTH"),
                text=lambda: _data(request).get("yaml"),
                upload=lambda: _upload(request),
            )
            use_inventory = _flag(_data(request).get("inventory"), field="inventory")
            result = manifest_upgrade(manifest, use_inventory=use_inventory)
        except UploadError as error:
            return error_response(error.field, error.message, status_code=error.status)
        body = upgrade_report(result)
        if result.failed:
            problems = [
                {
                    "field": "yaml",
                    "document": doc.index,
                    "path": p.path,
                    "converted_path": p.converted_path or p.path,
                    "message": p.message,
                }
                for doc in result.documents
                for p in doc.problems
            ]
            return Response({**body, **error_body(problems)}, status=422)
        return Response(body)


class DevicePluginsView(APIView):
    """Device plugin → DRA assistant: per extended resource name in use, its pods (and which backend serves
    each), the nodes advertising it through a device plugin, the nodes where DRA serves it, class conflicts
    (the newest class wins, on a tie the name that sorts first), nodes where both backends would serve it."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="migration_device_plugins",
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="{quota_note, notes, resources: [...]}")
        },
    )
    def get(self, request: Request) -> Response:
        unknown_params(request, [], paged=False)
        return Response(assistant_json(device_plugin_assistant()))


urlpatterns = [
    path("upgrade/", UpgradeView.as_view(), name="api-upgrade"),
    path("device-plugins/", DevicePluginsView.as_view(), name="api-device-plugins"),
]


class CanAuthorSnapshots(BasePermission):
    message = "Only operators and admins may create or delete ResourcePoolStatusRequests."

    def has_permission(self, request: Any, view: Any) -> bool:
        return request.method in ("GET", "HEAD", "OPTIONS") or user_can_author(request.user)


class PoolStatusCreate(serializers.Serializer[Any]):
    driver = serializers.CharField(help_text="the driver whose pools to summarize (DNS subdomain)")
    poolName = serializers.CharField(required=False, help_text="one pool; default: every pool of the driver")
    limit = serializers.IntegerField(required=False, help_text="pools listed, 1..1000 (default 100)")
    defaultPartitionTypeAttribute = serializers.CharField(
        required=False,
        help_text="fully qualified attribute that groups partitions in partitionSummary when a slice names none",
    )


def _input_error(error: PoolStatusInputError) -> Response:
    return Response(error_body([{"field": f, "message": m} for f, m in error.errors]), status=400)


def _write_error(error: PoolStatusWriteError) -> Response:
    return error_response("", error.message, status_code=error.status if 400 <= error.status < 600 else 502)


class PoolStatusListView(APIView):
    """ResourcePoolStatusRequests (resource.k8s.io/v1alpha3, gate DRAResourcePoolStatus) as mirrored, each
    pool beside dradash's own figures; POST creates one (as the user under impersonation)."""

    permission_classes = [IsAuthenticated, CanAuthorSnapshots]

    @extend_schema(
        operation_id="migration_pool_status_list",
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="{items: [snapshot, ...]}")},
    )
    def get(self, request: Request) -> Response:
        unknown_params(request, [], paged=False)
        return Response({"items": [snapshot_json(s) for s in pool_status_snapshots()]})

    @extend_schema(
        operation_id="migration_pool_status_create",
        request=PoolStatusCreate,
        responses={201: OpenApiResponse(OpenApiTypes.OBJECT, description="the created request")},
    )
    def post(self, request: Request) -> Response:
        data = request.data
        unknown_fields(data, ("driver", "poolName", "limit", "defaultPartitionTypeAttribute"))
        try:
            created = pool_status_create(
                driver=data.get("driver"),
                pool=data.get("poolName", ""),
                limit=data.get("limit"),
                partition_attribute=data.get("defaultPartitionTypeAttribute", ""),
                user=request.user,
            )
        except PoolStatusInputError as error:
            return _input_error(error)
        except PoolStatusWriteError as error:
            return _write_error(error)
        return Response(created, status=201)


class PoolStatusDetailView(APIView):
    permission_classes = [IsAuthenticated, CanAuthorSnapshots]

    @extend_schema(
        operation_id="migration_pool_status_get",
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="one snapshot and the comparison")},
    )
    def get(self, request: Request, name: str) -> Response:
        for snapshot in pool_status_snapshots():
            if snapshot.name == name:
                return Response(snapshot_json(snapshot))
        return error_response(
            "name", f"no ResourcePoolStatusRequest {name} in the inventory", status_code=404
        )

    @extend_schema(operation_id="migration_pool_status_delete", responses={204: None})
    def delete(self, request: Request, name: str) -> Response:
        try:
            pool_status_delete(name=name, user=request.user)
        except PoolStatusWriteError as error:
            return _write_error(error)
        return Response(status=204)


class PoolStatusRefreshView(APIView):
    """Create a request with the same spec, then delete this one (a request's status is computed once)."""

    permission_classes = [IsAuthenticated, CanAuthorSnapshots]

    @extend_schema(
        operation_id="migration_pool_status_refresh",
        request=None,
        responses={201: OpenApiResponse(OpenApiTypes.OBJECT, description="the new request")},
    )
    def post(self, request: Request, name: str) -> Response:
        try:
            created = pool_status_refresh(name=name, user=request.user)
        except PoolStatusInputError as error:
            return _input_error(error)
        except PoolStatusWriteError as error:
            return _write_error(error)
        return Response(created, status=201)


urlpatterns += [
    path("pool-status/", PoolStatusListView.as_view(), name="api-pool-status"),
    path("pool-status/<str:name>/", PoolStatusDetailView.as_view(), name="api-pool-status-detail"),
    path("pool-status/<str:name>/refresh/", PoolStatusRefreshView.as_view(), name="api-pool-status-refresh"),
]
