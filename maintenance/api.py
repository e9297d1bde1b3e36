"""REST API of the maintenance room (under /api/maintenance/). Viewers read and preview; operators and
admins author. Bodies are read strictly (maintenance.validation): unknown fields, wrong types and a
`confirm` that is not `true` are refused. Lists are the API's envelope {count, next, previous, results}
(`dradash.api.Pagination`); errors the API's envelope {"errors": [{"field", "message"}], "detail"} with
this room's context beside it: "headline", "current": {state, effect, version, actions} (on 409),
"changed", "cluster": {...} (docs/API.md)."""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dradash.api import JSONParser, Pagination, error_body, paginated, unknown_params
from dradash.context import user_can_author
from maintenance import api_schema as schema
from maintenance import selectors
from maintenance.drain import (
    drain_document,
    drain_forecast_document,
    maintenance_drain_abort,
    maintenance_drain_pause,
    maintenance_drain_resume,
    maintenance_drain_start,
)
from maintenance.errors import MaintenanceError
from maintenance.leftovers import maintenance_leftovers_remove
from maintenance.live import maintenance_live
from maintenance.models import AuditEntry, Maintenance
from maintenance.progress import rule_drift
from maintenance.services import (
    Draft,
    maintenance_apply,
    maintenance_create,
    maintenance_preview_start,
    maintenance_undo,
    maintenance_yaml,
)
from maintenance.taints import FieldError
from maintenance.validation import (
    parse_apply,
    parse_create,
    parse_drain_action,
    parse_drain_forecast,
    parse_preview,
    parse_remove_leftovers,
    parse_undo,
)

YAML_RULES_IN_DETAIL = 50
#: every write takes a JSON object: a form cannot say `"confirm": true`, a version number or a list of
#: devices, so a form body is refused whole (415, naming the type) rather than field by field
JSON_ONLY = [JSONParser]


class CanAuthor(BasePermission):
    message = (
        "Only operators and admins may change a maintenance (create, preview, apply, drain, undo); "
        "viewers can read everything."
    )

    def has_permission(self, request: Any, view: Any) -> bool:
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        return user_can_author(request.user)


DRIFT_HELP = (
    "rules the cluster no longer has as dradash applied them (changed or deleted outside dradash, per the "
    "mirror): applied_effect is what dradash applied, cluster_effect what the cluster has (null: deleted)"
)

LEFTOVER_HELP = (
    "rules a failed enforce wrote and could not roll back (the cluster stopped answering): they are in the "
    "cluster with `effect` until dradash removes them (retried automatically once the cluster answers; "
    "POST remove-leftovers/ at once) or an enforce writes every rule again: [{name, uid, effect, previous "
    "(the taint it is set back to; null: deleted), at, by, error}]"
)


class MaintenanceSerializer(serializers.ModelSerializer[Maintenance]):
    created_by = serializers.CharField(source="created_by.username", default="", read_only=True)
    drain = serializers.SerializerMethodField(
        help_text="the drain (null without one): state, concurrency, per-pod states, budgets, ETA"
    )
    drift = serializers.SerializerMethodField(help_text=DRIFT_HELP)

    class Meta:
        model = Maintenance
        fields = [
            "id", "title", "reason", "ticket", "created_by", "created_at", "state", "version", "taint_key",
            "taint_value", "target_effect", "applied_effect", "every_device", "filters", "device_count",
            "rule_count", "scope", "devices", "rules", "preview_run_id", "affected", "enforced_at", "last_error",
            "leftover_rules", "drain", "drift",
        ]  # fmt: skip
        extra_kwargs = {"leftover_rules": {"help_text": LEFTOVER_HELP}}

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_drain(self, maintenance: Maintenance) -> dict[str, Any] | None:
        return drain_document(maintenance=maintenance, now=timezone.now())

    @extend_schema_field(schema.RuleDrift(many=True))
    def get_drift(self, maintenance: Maintenance) -> list[dict[str, Any]]:
        return rule_drift(maintenances=[maintenance]).get(maintenance.pk, [])


class MaintenanceSummarySerializer(serializers.ModelSerializer[Maintenance]):
    created_by = serializers.CharField(source="created_by.username", default="", read_only=True)
    drift = serializers.SerializerMethodField(help_text=DRIFT_HELP)

    @extend_schema_field(schema.RuleDrift(many=True))
    def get_drift(self, maintenance: Maintenance) -> list[dict[str, Any]]:
        known = self.context.get("drift")  # the list's, for the whole page at once
        if known is not None:
            return list(known.get(maintenance.pk, []))
        return rule_drift(maintenances=[maintenance]).get(maintenance.pk, [])

    class Meta:
        model = Maintenance
        fields = ["id", "title", "created_by", "created_at", "state", "version", "taint_key", "taint_value",
                  "target_effect", "applied_effect", "every_device", "device_count", "rule_count", "scope",
                  "leftover_rules", "drift"]  # fmt: skip
        extra_kwargs = {"leftover_rules": {"help_text": LEFTOVER_HELP}}


class AuditEntrySerializer(serializers.ModelSerializer[AuditEntry]):
    class Meta:
        model = AuditEntry
        fields = ["id", "at", "actor", "source", "action", "rule_name", "rule_uid", "rule_generation", "subject",
                  "object_uid", "maintenance", "preview_run_id", "effect", "yaml", "outcome", "message"]  # fmt: skip


class MaintenanceDetailSerializer(MaintenanceSerializer):
    yaml = serializers.CharField(help_text=f"the first {YAML_RULES_IN_DETAIL} rules as YAML")
    yaml_complete = serializers.BooleanField(help_text="whether `yaml` holds every rule")

    class Meta(MaintenanceSerializer.Meta):
        fields = [*MaintenanceSerializer.Meta.fields, "yaml", "yaml_complete"]


class MaintenanceUndoneSerializer(MaintenanceSerializer):
    undo = serializers.JSONField(help_text="which evicted pods stay evicted, which replacements exist")

    class Meta(MaintenanceSerializer.Meta):
        fields = [*MaintenanceSerializer.Meta.fields, "undo"]


def _error(error: MaintenanceError) -> Response:
    return Response(error.as_dict(), status=error.status)


def _problems(problems: list[FieldError]) -> Response:
    return Response(error_body([p.as_dict() for p in problems]), status=400)


def _detail(maintenance: Maintenance) -> dict[str, Any]:
    body = dict(MaintenanceSerializer(maintenance).data)
    body["yaml"] = maintenance_yaml(maintenance=maintenance, limit=YAML_RULES_IN_DETAIL)
    body["yaml_complete"] = maintenance.rule_count <= YAML_RULES_IN_DETAIL
    return body


class MaintenanceListView(APIView):
    parser_classes = JSON_ONLY
    permission_classes = [IsAuthenticated, CanAuthor]
    pagination_class = Pagination

    @extend_schema(operation_id="maintenance_list", responses=MaintenanceSummarySerializer(many=True))
    def get(self, request: Request) -> Response:
        items = (
            Maintenance.objects.select_related("created_by")
            .defer("devices", "rules", "affected", "owner_pods", "budgets", "filters")
            .order_by("-created_at", "id")
        )
        return paginated(
            request,
            items,
            view=self,
            serialize=lambda page: (
                MaintenanceSummarySerializer(
                    page, many=True, context={"drift": rule_drift(maintenances=list(page))}
                ).data
            ),
        )

    @extend_schema(
        operation_id="maintenance_create",
        request=schema.CreateRequest,
        responses={201: MaintenanceDetailSerializer},
    )
    def post(self, request: Request) -> Response:
        try:
            body = parse_create(request.data)
            refs = list(body.devices)
            if body.filters:
                problems = selectors.filter_problems(body.filters)
                if problems:
                    raise MaintenanceError(problems)
                refs = selectors.device_refs(filters=body.filters)
                if not refs:
                    raise MaintenanceError([FieldError("filters", "these filters match no device")])
            draft = Draft(
                title=body.title, reason=body.reason, ticket=body.ticket, key=body.key, value=body.value,
                effect=body.effect, devices=refs, filters=body.filters, every_device=body.every_device,
                expected_count=body.expected_count,
            )  # fmt: skip
            maintenance = maintenance_create(user=request.user, draft=draft)
        except MaintenanceError as error:
            return _error(error)
        return Response(_detail(maintenance), status=201)


class MaintenanceDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(operation_id="maintenance_retrieve", responses=MaintenanceDetailSerializer)
    def get(self, request: Request, maintenance_id: str) -> Response:
        return Response(_detail(get_object_or_404(Maintenance, pk=maintenance_id)))


class MaintenancePreviewView(APIView):
    parser_classes = JSON_ONLY
    # a preview raises the version and replaces the preview the enforce forms were drawn on: a write
    permission_classes = [IsAuthenticated, CanAuthor]

    @extend_schema(
        operation_id="maintenance_preview",
        request=schema.PreviewRequest,
        responses={202: schema.PreviewStarted},
    )
    def post(self, request: Request, maintenance_id: str) -> Response:
        maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
        try:
            version = parse_preview(request.data)
            run = maintenance_preview_start(
                maintenance=maintenance, user=request.user, expected_version=version
            )
        except MaintenanceError as error:
            return _error(error)
        return Response(
            {"run": str(run.pk), "url": f"/api/whatif/runs/{run.pk}/", "version": maintenance.version},
            status=202,
        )


class MaintenanceDrainForecastView(APIView):
    """What a drain would do, from the latest preview (the page's drain form shows the same)."""

    permission_classes = [IsAuthenticated]  # viewers may read what a drain would do

    @extend_schema(
        operation_id="maintenance_drain_forecast",
        parameters=[
            OpenApiParameter(
                "concurrency", OpenApiTypes.INT, description="pods evicted at once, 1-50 (default 1)"
            )
        ],
        responses={200: schema.DrainForecast},
        description="The drain the latest preview predicts: the order (oldest first), the waves the budgets "
        "force at this concurrency, the pods that cannot move (no owner, or no room elsewhere per the "
        "allocator), the budgets and the duration; with the preview's state and the phrase a drain asks "
        "to type. 409 without a succeeded preview.",
    )
    def get(self, request: Request, maintenance_id: str) -> Response:
        maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
        try:
            concurrency = parse_drain_forecast(request.query_params)
            body = drain_forecast_document(maintenance=maintenance, concurrency=concurrency)
        except MaintenanceError as error:
            return _error(error)
        return Response(body)


class MaintenanceApplyView(APIView):
    parser_classes = JSON_ONLY
    permission_classes = [IsAuthenticated, CanAuthor]

    @extend_schema(
        operation_id="maintenance_apply", request=schema.ApplyRequest, responses=MaintenanceSerializer
    )
    def post(self, request: Request, maintenance_id: str) -> Response:
        maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
        try:
            body = parse_apply(request.data)
            if body.mode == "drain":
                maintenance_drain_start(
                    maintenance=maintenance, user=request.user, confirmed=body.confirmed, typed=body.typed,
                    preview_id=body.preview, expected_version=body.version, concurrency=body.concurrency,
                    replacement_timeout=body.replacement_timeout,
                )  # fmt: skip
            else:
                maintenance_apply(
                    maintenance=maintenance, user=request.user, effect=body.effect, confirmed=body.confirmed,
                    typed=body.typed, preview_id=body.preview, expected_version=body.version,
                )  # fmt: skip
        except MaintenanceError as error:
            return _error(error)
        return Response(MaintenanceSerializer(maintenance).data)


class _DrainActionView(APIView):
    parser_classes = JSON_ONLY
    permission_classes = [IsAuthenticated, CanAuthor]

    def act(self, request: Request, maintenance_id: str, service: Any) -> Response:
        maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
        try:
            version = parse_drain_action(request.data)
            service(maintenance=maintenance, user=request.user, expected_version=version)
        except MaintenanceError as error:
            return _error(error)
        return Response(MaintenanceSerializer(maintenance).data)


class MaintenanceDrainPauseView(_DrainActionView):
    @extend_schema(
        operation_id="maintenance_drain_pause", request=schema.DrainActionRequest, responses=MaintenanceSerializer,
        description="Pause a running drain: no new eviction starts (409 unless it is running).",
    )  # fmt: skip
    def post(self, request: Request, maintenance_id: str) -> Response:
        return self.act(request, maintenance_id, maintenance_drain_pause)


class MaintenanceDrainResumeView(_DrainActionView):
    @extend_schema(
        operation_id="maintenance_drain_resume", request=schema.DrainActionRequest, responses=MaintenanceSerializer,
        description="Resume a paused drain (409 unless it is paused).",
    )  # fmt: skip
    def post(self, request: Request, maintenance_id: str) -> Response:
        return self.act(request, maintenance_id, maintenance_drain_resume)


class MaintenanceDrainAbortView(_DrainActionView):
    @extend_schema(
        operation_id="maintenance_drain_abort", request=schema.DrainActionRequest, responses=MaintenanceSerializer,
        description="Abort the drain: no further eviction; the rules keep effect NoSchedule (409 unless draining).",
    )  # fmt: skip
    def post(self, request: Request, maintenance_id: str) -> Response:
        return self.act(request, maintenance_id, maintenance_drain_abort)


class MaintenanceUndoView(APIView):
    parser_classes = JSON_ONLY
    permission_classes = [IsAuthenticated, CanAuthor]

    @extend_schema(
        operation_id="maintenance_undo", request=schema.UndoRequest, responses=MaintenanceUndoneSerializer
    )
    def post(self, request: Request, maintenance_id: str) -> Response:
        maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
        try:
            mode, version = parse_undo(request.data)
            consequences = maintenance_undo(
                maintenance=maintenance, user=request.user, mode=mode, expected_version=version
            )
        except MaintenanceError as error:
            return _error(error)
        return Response({**MaintenanceSerializer(maintenance).data, "undo": consequences})


class MaintenanceRemoveLeftoversView(APIView):
    parser_classes = JSON_ONLY
    permission_classes = [IsAuthenticated, CanAuthor]

    @extend_schema(
        operation_id="maintenance_remove_leftovers", request=schema.RemoveLeftoversRequest,
        responses=MaintenanceSerializer,
        description="Remove at once the rules a failed enforce left in the cluster (`leftover_rules`): deleted, "
        "or set back to the taint they had. 409 when there are none; 503 when the cluster still does not answer "
        "(`leftover_rules` then lists what is still there).",
    )  # fmt: skip
    def post(self, request: Request, maintenance_id: str) -> Response:
        maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
        try:
            confirmed, version = parse_remove_leftovers(request.data)
            maintenance_leftovers_remove(
                maintenance=maintenance, user=request.user, confirmed=confirmed, expected_version=version
            )
        except MaintenanceError as error:
            return _error(error)
        return Response(MaintenanceSerializer(maintenance).data)


class MaintenanceProgressView(APIView):
    """The same document the live page receives over /ws/maintenance/<id>/ (`?pods=all` lists every pod)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="maintenance_progress",
        parameters=[
            OpenApiParameter("pods", OpenApiTypes.STR, enum=["all"], description="`all`: every pod, not 200")
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request, maintenance_id: str) -> Response:
        maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
        every_pod = request.query_params.get("pods") == "all"
        return Response(maintenance_live(maintenance=maintenance, now=timezone.now(), every_pod=every_pod))


class AuditListView(APIView):
    """The audit log, newest first, `?limit=&offset=` paginated; filters as on the page."""

    permission_classes = [IsAuthenticated]
    pagination_class = Pagination

    @extend_schema(
        operation_id="maintenance_audit_list",
        parameters=schema.AUDIT_PARAMETERS,
        responses=AuditEntrySerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        # The API pages with limit/offset like every list (the page's page/page_size are not its own).
        unknown_params(request, selectors.AUDIT_FILTERS)
        params = {k: v for k, v in request.query_params.items() if k not in ("limit", "offset")}
        entries, _, problems = selectors.audit_list(params=params)
        if problems:
            return _problems(problems)
        return paginated(
            request,
            entries,
            view=self,
            serialize=lambda page: AuditEntrySerializer(page, many=True).data,
            params=selectors.AUDIT_FILTERS,
        )


class AuditExportView(APIView):
    """The filtered audit log as CSV (cells a spreadsheet would run as formulas are neutralised)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="maintenance_audit_export",
        parameters=schema.AUDIT_PARAMETERS,
        responses={(200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="the audit log as CSV")},
    )
    def get(self, request: Request) -> Any:
        unknown_params(request, selectors.AUDIT_FILTERS)
        entries, _, problems = selectors.audit_list(params=request.query_params)
        if problems:
            return _problems(problems)
        response = StreamingHttpResponse(
            selectors.audit_csv_lines(entries), content_type="text/csv; charset=utf-8"
        )
        response["Content-Disposition"] = 'attachment; filename="dradash-audit.csv"'
        return response


urlpatterns = [
    path("", MaintenanceListView.as_view(), name="api-list"),
    path("audit/", AuditListView.as_view(), name="api-audit"),
    path("audit/export.csv", AuditExportView.as_view(), name="api-audit-csv"),
    path("<str:maintenance_id>/", MaintenanceDetailView.as_view(), name="api-detail"),
    path("<str:maintenance_id>/preview/", MaintenancePreviewView.as_view(), name="api-preview"),
    path("<str:maintenance_id>/apply/", MaintenanceApplyView.as_view(), name="api-apply"),
    path(
        "<str:maintenance_id>/drain-forecast/",
        MaintenanceDrainForecastView.as_view(),
        name="api-drain-forecast",
    ),
    path("<str:maintenance_id>/undo/", MaintenanceUndoView.as_view(), name="api-undo"),
    path(
        "<str:maintenance_id>/remove-leftovers/",
        MaintenanceRemoveLeftoversView.as_view(),
        name="api-remove-leftovers",
    ),
    path("<str:maintenance_id>/pause/", MaintenanceDrainPauseView.as_view(), name="api-drain-pause"),
    path("<str:maintenance_id>/resume/", MaintenanceDrainResumeView.as_view(), name="api-drain-resume"),
    path("<str:maintenance_id>/abort/", MaintenanceDrainAbortView.as_view(), name="api-drain-abort"),
    path("<str:maintenance_id>/progress/", MaintenanceProgressView.as_view(), name="api-progress"),
]
