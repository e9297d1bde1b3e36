"""REST API of the maintenance room (under /api/maintenance/). Viewers read and preview; operators and
admins author. Errors come back as {"errors": [{"field", "message"}], "cluster": {...}} with a 4xx."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.urls import path
from django.utils import timezone
from rest_framework import serializers
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dradash.context import user_can_author
from maintenance import selectors
from maintenance.models import AuditEntry, Maintenance
from maintenance.planning import DeviceRef
from maintenance.progress import maintenance_progress
from maintenance.services import (
    Draft,
    MaintenanceError,
    maintenance_apply,
    maintenance_create,
    maintenance_preview_start,
    maintenance_undo,
    maintenance_yaml,
)


class CanAuthor(BasePermission):
    message = "Only operators and admins may author DeviceTaintRules."

    def has_permission(self, request: Any, view: Any) -> bool:
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        return user_can_author(request.user)


class MaintenanceSerializer(serializers.ModelSerializer[Maintenance]):
    created_by = serializers.CharField(source="created_by.username", default="", read_only=True)

    class Meta:
        model = Maintenance
        fields = [
            "id", "title", "reason", "ticket", "created_by", "created_at", "state", "taint_key", "taint_value",
            "target_effect", "applied_effect", "every_device", "filters", "devices", "rules", "preview_run_id",
            "affected", "enforced_at", "last_error",
        ]  # fmt: skip


class DeviceRefSerializer(serializers.Serializer[Any]):
    driver = serializers.CharField()
    pool = serializers.CharField()
    device = serializers.CharField()


class MaintenanceCreateSerializer(serializers.Serializer[Any]):
    title = serializers.CharField()
    reason = serializers.CharField()
    ticket = serializers.CharField(required=False, allow_blank=True, default="")
    key = serializers.CharField()
    value = serializers.CharField(required=False, allow_blank=True, default="")
    effect = serializers.CharField()
    devices = DeviceRefSerializer(many=True, required=False, default=list)
    filters = serializers.DictField(child=serializers.CharField(), required=False, default=dict)
    every_device = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text='type "every device in the cluster" to allow it',
    )


class AuditEntrySerializer(serializers.ModelSerializer[AuditEntry]):
    class Meta:
        model = AuditEntry
        fields = ["id", "at", "actor", "source", "action", "rule_name", "rule_uid", "rule_generation",
                  "maintenance", "preview_run_id", "effect", "yaml", "outcome", "message"]  # fmt: skip


def _error(error: MaintenanceError) -> Response:
    return Response(error.as_dict(), status=error.status)


class MaintenanceListView(APIView):
    permission_classes = [IsAuthenticated, CanAuthor]

    def get(self, request: Request) -> Response:
        items = Maintenance.objects.select_related("created_by")[:500]
        return Response(MaintenanceSerializer(items, many=True).data)

    def post(self, request: Request) -> Response:
        data = MaintenanceCreateSerializer(data=request.data)
        if not data.is_valid():
            errors = [{"field": f, "message": " ".join(str(m) for m in ms)} for f, ms in data.errors.items()]
            return Response({"errors": errors}, status=400)
        v = data.validated_data
        refs = [DeviceRef(d["driver"], d["pool"], d["device"]) for d in v["devices"]]
        if not refs and v["filters"] and not v["every_device"]:
            refs = selectors.device_refs(filters=v["filters"])
        draft = Draft(
            title=v["title"], reason=v["reason"], ticket=v["ticket"], key=v["key"], value=v["value"],
            effect=v["effect"], devices=refs, filters=v["filters"],
            every_device=v["every_device"] == "every device in the cluster",
        )  # fmt: skip
        try:
            maintenance = maintenance_create(user=request.user, draft=draft)
        except MaintenanceError as error:
            return _error(error)
        body = dict(MaintenanceSerializer(maintenance).data)
        body["yaml"] = maintenance_yaml(maintenance=maintenance)
        return Response(body, status=201)


class MaintenanceDetailView(APIView):
    permission_classes = [IsAuthenticated]

    def get(self, request: Request, maintenance_id: str) -> Response:
        maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
        body = dict(MaintenanceSerializer(maintenance).data)
        body["yaml"] = maintenance_yaml(maintenance=maintenance)
        return Response(body)


class MaintenancePreviewView(APIView):
    permission_classes = [IsAuthenticated]  # viewers may run previews

    def post(self, request: Request, maintenance_id: str) -> Response:
        maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
        try:
            run = maintenance_preview_start(maintenance=maintenance, user=request.user)
        except MaintenanceError as error:
            return _error(error)
        return Response({"run": str(run.pk), "url": f"/api/whatif/runs/{run.pk}/"}, status=202)


class MaintenanceApplyView(APIView):
    permission_classes = [IsAuthenticated, CanAuthor]

    def post(self, request: Request, maintenance_id: str) -> Response:
        maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
        try:
            maintenance_apply(
                maintenance=maintenance,
                user=request.user,
                effect=str(request.data.get("effect", "")),
                confirmed=request.data.get("confirm") in (True, "true", "yes"),
            )
        except MaintenanceError as error:
            return _error(error)
        return Response(MaintenanceSerializer(maintenance).data)


class MaintenanceUndoView(APIView):
    permission_classes = [IsAuthenticated, CanAuthor]

    def post(self, request: Request, maintenance_id: str) -> Response:
        maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
        try:
            maintenance_undo(
                maintenance=maintenance, user=request.user, mode=str(request.data.get("mode", "delete"))
            )
        except MaintenanceError as error:
            return _error(error)
        return Response(MaintenanceSerializer(maintenance).data)


class MaintenanceProgressView(APIView):
    """The same document the live page receives over /ws/maintenance/<id>/."""

    permission_classes = [IsAuthenticated]

    def get(self, request: Request, maintenance_id: str) -> Response:
        maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
        return Response(maintenance_progress(maintenance=maintenance, now=timezone.now()))


class AuditListView(APIView):
    permission_classes = [IsAuthenticated]

    def get(self, request: Request) -> Response:
        entries, _ = selectors.audit_list(params=request.query_params)
        return Response(AuditEntrySerializer(entries[:1000], many=True).data)


urlpatterns = [
    path("", MaintenanceListView.as_view(), name="api-list"),
    path("audit/", AuditListView.as_view(), name="api-audit"),
    path("<str:maintenance_id>/", MaintenanceDetailView.as_view(), name="api-detail"),
    path("<str:maintenance_id>/preview/", MaintenancePreviewView.as_view(), name="api-preview"),
    path("<str:maintenance_id>/apply/", MaintenanceApplyView.as_view(), name="api-apply"),
    path("<str:maintenance_id>/undo/", MaintenanceUndoView.as_view(), name="api-undo"),
    path("<str:maintenance_id>/progress/", MaintenanceProgressView.as_view(), name="api-progress"),
]
