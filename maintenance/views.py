"""Maintenance pages: thin views over maintenance.services (writes) and maintenance.progress (reads)."""

from __future__ import annotations

import csv
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from dradash.context import user_can_author
from inventory.filters import HEALTH_CHOICES
from inventory.models import ALLOCATION_STATES
from maintenance import selectors
from maintenance.models import Maintenance
from maintenance.progress import maintenance_progress
from maintenance.services import (
    Draft,
    MaintenanceError,
    maintenance_apply,
    maintenance_create,
    maintenance_kubectl_command,
    maintenance_preview_start,
    maintenance_undo,
    maintenance_yaml,
)
from maintenance.taints import EFFECTS

DEVICE_FILTERS = ("driver", "pool", "node", "device_class", "attribute", "taint", "state", "health", "q")
SELECTION_PREVIEW_LIMIT = 500


def _require_author(request: HttpRequest) -> None:
    if not user_can_author(request.user):
        raise PermissionDenied("Only operators and admins may author DeviceTaintRules.")


@login_required
def index(request: HttpRequest) -> HttpResponse:
    maintenances = Maintenance.objects.select_related("created_by")[:200]
    return render(request, "maintenance/index.html", {"maintenances": maintenances, "nav": "maintenance"})


@login_required
def new(request: HttpRequest) -> HttpResponse:
    _require_author(request)
    filters = {k: v for k, v in request.GET.items() if k in DEVICE_FILTERS and v}
    devices, total, filter_error = selectors.selectable_devices(
        filters=filters, limit=SELECTION_PREVIEW_LIMIT
    )
    context: dict[str, Any] = {
        "nav": "maintenance",
        "filters": filters,
        "devices": devices,
        "total": total,
        "limit": SELECTION_PREVIEW_LIMIT,
        "filter_error": filter_error,
        "effects": EFFECTS,
        "state_choices": ALLOCATION_STATES,
        "health_choices": HEALTH_CHOICES,
        "form": {"effect": "NoExecute", "key": "example.com/maintenance"},
        "errors": [],
    }
    if request.method == "POST":
        form = request.POST
        context["form"] = form
        every = form.get("every_device") == "every device in the cluster"
        if form.get("selection") == "all-matching":
            refs = selectors.device_refs(filters=filters)
        else:
            refs = selectors.parse_device_refs(form.getlist("device"))
        draft = Draft(
            title=form.get("title", ""),
            reason=form.get("reason", ""),
            ticket=form.get("ticket", ""),
            key=form.get("key", "").strip(),
            value=form.get("value", "").strip(),
            effect=form.get("effect", ""),
            devices=refs,
            filters=filters,
            every_device=every,
        )
        try:
            maintenance = maintenance_create(user=request.user, draft=draft)
        except MaintenanceError as error:
            context["errors"] = error.errors
            return render(request, "maintenance/new.html", context, status=400)
        return redirect("maintenance:detail", maintenance_id=maintenance.id)
    return render(request, "maintenance/new.html", context)


def _detail_context(request: HttpRequest, maintenance: Maintenance, **extra: Any) -> dict[str, Any]:
    preview = selectors.preview_summary(maintenance=maintenance)
    return {
        "nav": "maintenance",
        "m": maintenance,
        "yaml": maintenance_yaml(maintenance=maintenance),
        "kubectl": maintenance_kubectl_command(maintenance=maintenance),
        "preview": preview,
        "progress": maintenance_progress(maintenance=maintenance, now=timezone.now()),
        "audit": maintenance.auditentry_set.order_by("-at")[:50],
        "errors": [],
        **extra,
    }


@login_required
def detail(request: HttpRequest, maintenance_id: str) -> HttpResponse:
    maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
    return render(request, "maintenance/detail.html", _detail_context(request, maintenance))


@login_required
def preview_panel(request: HttpRequest, maintenance_id: str) -> HttpResponse:
    """The preview panel alone: htmx polls it every second while the preview run is working."""
    maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
    context = {"m": maintenance, "preview": selectors.preview_summary(maintenance=maintenance), "oob": True}
    return render(request, "maintenance/_preview.html", context)


@login_required
@require_POST
def preview(request: HttpRequest, maintenance_id: str) -> HttpResponse:
    maintenance = get_object_or_404(Maintenance, pk=maintenance_id)  # viewers may run previews
    try:
        maintenance_preview_start(maintenance=maintenance, user=request.user)
    except MaintenanceError as error:
        context = _detail_context(request, maintenance, errors=error.errors)
        return render(request, "maintenance/detail.html", context, status=error.status)
    return redirect("maintenance:detail", maintenance_id=maintenance.id)


def _write_and_show(request: HttpRequest, maintenance_id: str, write: Any) -> HttpResponse:
    """Run an authoring write; on refusal show the detail page with the errors (the draft is kept)."""
    _require_author(request)
    maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
    try:
        write(maintenance)
    except MaintenanceError as error:
        maintenance.refresh_from_db()
        context = _detail_context(
            request, maintenance, errors=error.errors, cluster_error=error.cluster_error
        )
        return render(request, "maintenance/detail.html", context, status=error.status)
    return redirect("maintenance:detail", maintenance_id=maintenance.id)


@login_required
@require_POST
def apply(request: HttpRequest, maintenance_id: str) -> HttpResponse:
    effect = request.POST.get("effect", "")
    confirmed = request.POST.get("confirm") == "yes"
    return _write_and_show(
        request,
        maintenance_id,
        lambda m: maintenance_apply(maintenance=m, user=request.user, effect=effect, confirmed=confirmed),
    )


@login_required
@require_POST
def undo(request: HttpRequest, maintenance_id: str) -> HttpResponse:
    mode = request.POST.get("mode", "delete")
    return _write_and_show(
        request, maintenance_id, lambda m: maintenance_undo(maintenance=m, user=request.user, mode=mode)
    )


@login_required
def progress_json(request: HttpRequest, maintenance_id: str) -> JsonResponse:
    maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
    return JsonResponse(maintenance_progress(maintenance=maintenance, now=timezone.now()))


@login_required
def audit(request: HttpRequest) -> HttpResponse:
    entries, filters = selectors.audit_list(params=request.GET)
    if request.GET.get("format") == "csv":
        response = HttpResponse(content_type="text/csv")
        response["Content-Disposition"] = 'attachment; filename="dradash-audit.csv"'
        writer = csv.writer(response)
        writer.writerow(
            ["at", "actor", "source", "action", "rule", "effect", "maintenance", "preview", "message"]
        )
        for e in entries[:50000]:
            writer.writerow(
                [e.at.isoformat(), e.actor, e.source, e.action, e.rule_name, e.effect, e.maintenance_id or "",
                 e.preview_run_id, e.message]
            )  # fmt: skip
        return response
    page = Paginator(entries, 100).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "maintenance/audit.html",
        {"nav": "maintenance", "page": page, "filters": filters, "query": query.urlencode()},
    )
