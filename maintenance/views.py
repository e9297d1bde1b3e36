"""Maintenance pages: thin views over maintenance.services (writes) and the room's reads.

The detail page's actions live in one fragment (`?fragment=live`) that the page re-fetches when the
live document says the maintenance or its preview changed; every form carries the version it was
drawn at, so an action from an out-of-date page is refused with the current state (409)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from dradash.context import user_can_author
from dradash.fieldnames import shown_errors, unknown_parameters
from inventory.filters import (
    ALLOCATABLE_CHOICES,
    DEVICE_FILTER_LABELS,
    HEALTH_CHOICES,
    STATE_CHOICES,
    TAINT_CHOICES,
)
from inventory.selectors.devices import device_filter_choices
from maintenance import selectors
from maintenance.audit import latest_version
from maintenance.confirmation import challenge
from maintenance.drain import (
    drain_confirmation,
    drain_document,
    drain_forecast,
    maintenance_drain_abort,
    maintenance_drain_pause,
    maintenance_drain_resume,
    maintenance_drain_start,
)
from maintenance.errors import MaintenanceError
from maintenance.leftovers import RETRY_EVERY_SECONDS, maintenance_leftovers_remove
from maintenance.live import live_document, maintenance_live
from maintenance.models import AuditEntry, Maintenance
from maintenance.progress import drift_summary, maintenance_progress, rule_drift
from maintenance.services import (
    Draft,
    maintenance_apply,
    maintenance_blast,
    maintenance_create,
    maintenance_kubectl_command,
    maintenance_preview_observe,
    maintenance_preview_start,
    maintenance_undo,
    maintenance_yaml,
)
from maintenance.taints import EFFECTS, FieldError
from maintenance.validation import EVERY_DEVICE_PHRASE, MAX_CONCURRENCY, form_version, form_whole_number

SELECTION_PAGE_SIZE = 100
DEVICES_PAGE_SIZE = 50
RULES_SHOWN = 10
AUDIT_PAGE_SIZE = 100


AUTHOR_ONLY = (
    "Only operators and admins may change a maintenance (create, preview, apply, drain, undo); "
    "viewers can read everything."
)


def _require_author(request: HttpRequest) -> None:
    if not user_can_author(request.user):
        raise PermissionDenied(AUTHOR_ONLY)


@login_required
@require_safe
def index(request: HttpRequest) -> HttpResponse:
    maintenances = list(
        Maintenance.objects.select_related("created_by").defer(
            "devices", "rules", "affected", "owner_pods", "budgets", "filters"
        )[:200]
    )
    drift = rule_drift(maintenances=maintenances)
    for m in maintenances:  # a rule changed outside dradash: the list must not say "applied" alone
        m.drift = drift.get(m.pk, [])  # type: ignore[attr-defined]
        m.drift_summary = drift_summary(m.drift)  # type: ignore[attr-defined]
    context = {
        "maintenances": maintenances,
        "nav": "maintenance",
        # live as the audit page: a maintenance's every change, and a rule changed outside dradash, is an entry
        "live_version": latest_version(),
        "live_ws_path": "/ws/maintenance-audit/",
        "live_poll_path": reverse("maintenance:audit-version"),
        "fragment_url": reverse("maintenance:index") + "?fragment=table",
    }
    if request.GET.get("fragment") == "table":
        return render(request, "maintenance/_index_table.html", context)
    return render(request, "maintenance/index.html", context)


# --------------------------------------------------------------------------- new

#: The New maintenance form's labels, by field (the page renders them) ...
NEW_FORM_LABELS = {
    "filters": "Find devices",
    "devices": "Select devices",
    "select_all": "Select all",
    "title": "Title",
    "reason": "Reason",
    "ticket": "Ticket",
    "key": "Key",
    "value": "Value",
    "effect": "Effect (intended)",
    "every_device": "Every device in the cluster",
}
#: ... and by the field paths its errors name: a refused filter reads "Allocation (filters.state)", as the
#: Devices page names its own filter.
NEW_LABELS = {
    **NEW_FORM_LABELS,
    **{f"filters.{name}": label for name, label in DEVICE_FILTER_LABELS.items()},
    "device": NEW_FORM_LABELS["devices"],
    "matching_count": NEW_FORM_LABELS["select_all"],
    "expected_count": NEW_FORM_LABELS["select_all"],  # the service's refusal of a stale "Select all N"
    **{f"taint.{name}": NEW_FORM_LABELS[name] for name in ("key", "value", "effect")},
}


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def new(request: HttpRequest) -> HttpResponse:
    _require_author(request)
    filters, filter_errors = selectors.page_filters(request.GET)
    # a parameter that is no device filter is named as sent, as the list pages name it, with the filters
    unknown = [name for name in filters if name not in DEVICE_FILTER_LABELS]
    context: dict[str, Any] = {
        "nav": "maintenance",
        "filters": filters,
        "filter_errors": shown_errors(
            [e for e in filter_errors if e.field.removeprefix("filters.") not in unknown], NEW_LABELS
        ),
        "unknown_parameters": unknown_parameters(unknown, DEVICE_FILTER_LABELS),
        "filter_labels": DEVICE_FILTER_LABELS,
        "labels": NEW_FORM_LABELS,
        "effects": EFFECTS,
        "state_choices": STATE_CHOICES,
        "health_choices": HEALTH_CHOICES,
        "taint_choices": TAINT_CHOICES,
        "allocatable_choices": ALLOCATABLE_CHOICES,
        "choices": device_filter_choices(),  # the Devices page's dropdowns, from the inventory
        "form": {"effect": "NoExecute", "key": "example.com/maintenance"},
        "errors": [],
        "ticked": set(),
        "every_device_phrase": EVERY_DEVICE_PHRASE,
        "max_devices": settings.DRADASH_MAINTENANCE_MAX_DEVICES,
        "partial": None,
        # the browser stops at the lengths the server would refuse past (the model's, declared once)
        "max_length": {
            name: Maintenance._meta.get_field(name).max_length for name in ("title", "reason", "ticket")
        },
    }
    if not filter_errors:
        devices = selectors.matching_devices(filters=filters)
        page = Paginator(devices, SELECTION_PAGE_SIZE).get_page(request.GET.get("page"))
        query = request.GET.copy()
        query.pop("page", None)
        context.update(
            page=page, matching=selectors.matching_summary(filters=filters), query=query.urlencode()
        )
    if request.method != "POST":
        prefill = (
            selectors.whatif_prefill(run_id=request.GET.get("from_whatif", ""))
            if "from_whatif" in request.GET
            else None
        )
        if prefill:
            context.update(form=prefill["form"], ticked=prefill["ticked"], from_whatif=prefill["run_id"])
        return render(request, "maintenance/new.html", context)

    form = request.POST
    context["form"] = form
    context["ticked"] = set(form.getlist("device"))
    matching = context.get("matching")
    if form.get("select_all") != "yes" and matching and 0 < len(context["ticked"]) < matching["count"]:
        context["partial"] = {
            "ticked": len(context["ticked"]),
            "rest": matching["count"] - len(context["ticked"]),
        }
    errors: list[FieldError] = []  # refused filters have their own panel above the form: not named twice
    expected: int | None = None
    if form.get("select_all") == "yes":
        refs = [] if filter_errors else selectors.device_refs(filters=filters)
        try:
            expected = int(form.get("matching_count", ""))
        except ValueError:
            errors.append(FieldError("matching_count", "the page did not say how many devices it showed"))
    else:
        refs, malformed = selectors.parse_device_refs(form.getlist("device"))
        errors.extend(malformed)
    if errors or filter_errors:
        context["errors"] = shown_errors(errors, NEW_LABELS)
        return render(request, "maintenance/new.html", context, status=400)
    draft = Draft(
        title=form.get("title", ""), reason=form.get("reason", ""), ticket=form.get("ticket", ""),
        key=form.get("key", "").strip(), value=form.get("value", "").strip(), effect=form.get("effect", ""),
        devices=refs, filters=filters, every_device=form.get("every_device", "").strip() == EVERY_DEVICE_PHRASE,
        expected_count=expected,
    )  # fmt: skip
    if form.get("every_device", "").strip() and not draft.every_device:
        refused = FieldError(
            "every_device", f'type exactly "{EVERY_DEVICE_PHRASE}", or leave the field empty'
        )
        context["errors"] = shown_errors([refused], NEW_LABELS)
        return render(request, "maintenance/new.html", context, status=400)
    try:
        maintenance = maintenance_create(user=request.user, draft=draft)
    except MaintenanceError as error:
        context["errors"] = shown_errors(error.errors, NEW_LABELS)
        return render(request, "maintenance/new.html", context, status=error.status)
    return redirect("maintenance:detail", maintenance_id=maintenance.id)


# --------------------------------------------------------------------------- detail

#: What the maintenance page calls each field its actions' errors name: its forms' labels (the page renders
#: them), and for what a form sends without a field of its own, the words the page shows it by ("State
#: draft · version 3", the preview, the Rules panel): "I have reviewed the NoExecute blast radius
#: (confirm): …", "Version (version): this page showed version 3; …". The page's ...
DETAIL_LABELS = {
    "version": "Version",
    "state": "State",
    "preview": "Preview",
    "effect": "Effect",
    "taint": "Taint",
    "taint.effect": "Effect",
    "rules": "Rules",
    "confirm": "I have reviewed this blast radius",
    "typed": "To confirm, type",
}
#: ... each enforce form's: its checkbox and typed phrase say which effect they confirm, so the NoSchedule and
#: NoExecute forms' fields are not two of the same name on one page ...
ENFORCE_LABELS = {
    effect: {
        **DETAIL_LABELS,
        "confirm": f"I have reviewed the {effect} blast radius",
        "typed": f"To confirm {effect}, type",
    }
    for effect in ("NoSchedule", "NoExecute")
}
#: ... the drain form's (its `mode` is the drain itself) ...
DRAIN_LABELS = {
    **DETAIL_LABELS,
    "mode": "Drain, respecting PDBs",
    "confirm": "I have reviewed this drain",
    "concurrency": "Pods evicted at once",
}
#: ... and the undo buttons'.
UNDO_LABELS = {**DETAIL_LABELS, "mode": "Undo"}
#: ... and "Remove them now"'s.
LEFTOVER_LABELS = {**DETAIL_LABELS, "confirm": "Remove the rules the failed enforce left"}


def _enforce_options(maintenance: Maintenance, preview: Any, actions: list[str]) -> list[dict[str, Any]]:
    """One confirmation per evicting effect the state allows: its blast radius and the phrase to type."""
    options = []
    for effect in ("NoSchedule", "NoExecute"):
        if f"enforce-{effect}" not in actions:
            continue
        blast = (
            maintenance_blast(maintenance=maintenance, status=preview, effect=effect)
            if preview.ready
            else None
        )
        options.append(
            {
                "effect": effect,
                "blast": blast,
                "challenge": challenge(blast) if blast else None,
                "labels": ENFORCE_LABELS[effect],
            }
        )
    return options


DRAIN_CONCURRENCY_CHOICES = (1, 2, 4, 8)


def _drain_option(maintenance: Maintenance, preview: Any, actions: list[str]) -> dict[str, Any] | None:
    """The "Drain, respecting PDBs" choice: its confirmation and what the preview predicts at each
    concurrency the form offers (waves, duration, pods that cannot move)."""
    if "drain" not in actions:
        return None
    if not preview.ready:
        return {"ready": False}
    blast, wanted = drain_confirmation(maintenance=maintenance, status=preview)
    forecasts = {
        c: drain_forecast(maintenance=maintenance, result=preview.result, concurrency=c)
        for c in DRAIN_CONCURRENCY_CHOICES
    }
    return {"ready": True, "blast": blast, "challenge": wanted, "forecast": forecasts[1],
            "forecasts": [forecasts[c] for c in DRAIN_CONCURRENCY_CHOICES]}  # fmt: skip


def _filters_match(maintenance: Maintenance) -> dict[str, Any] | None:
    """How many devices the filters the draft was made from match now, beside how many it selected: a
    draft of the ticks of one page says so."""
    if maintenance.every_device or not maintenance.filters or selectors.filter_problems(maintenance.filters):
        return None
    count = selectors.matching_devices(filters=maintenance.filters).count()
    shown = ", ".join(f"{k}={v}" for k, v in sorted(maintenance.filters.items()))
    return {"count": count, "filters": shown, "partial": count > maintenance.device_count}


def _detail_context(request: HttpRequest, maintenance: Maintenance, **extra: Any) -> dict[str, Any]:
    preview = maintenance_preview_observe(
        maintenance=maintenance, check_stale=maintenance.state != Maintenance.UNDONE
    )
    now = timezone.now()
    progress = maintenance_progress(maintenance=maintenance, now=now)
    drain = drain_document(maintenance=maintenance, now=now)
    live = live_document(maintenance=maintenance, progress=progress, preview=preview, drain=drain)
    devices = Paginator(maintenance.devices, DEVICES_PAGE_SIZE).get_page(request.GET.get("devices_page"))
    undo_entry = (
        AuditEntry.objects.filter(maintenance=maintenance, action="undo").order_by("-id").first()
        if maintenance.state == Maintenance.UNDONE
        else None
    )
    return {
        "nav": "maintenance",
        "m": maintenance,
        "filters_match": _filters_match(maintenance),
        "yaml": maintenance_yaml(maintenance=maintenance, limit=RULES_SHOWN),
        "kubectl": maintenance_kubectl_command(maintenance=maintenance, limit=RULES_SHOWN),
        "rules_shown": min(RULES_SHOWN, maintenance.rule_count),
        "preview": preview,
        "result": preview.result,
        "live": live,
        "actions": live["actions"],
        "enforce_options": _enforce_options(maintenance, preview, live["actions"]),
        "drain_option": _drain_option(maintenance, preview, live["actions"]),
        "drain": drain,
        "progress": progress,
        "undo_entry": undo_entry,
        "devices_page": devices,
        "live_url": reverse("maintenance:detail", args=[maintenance.id]) + "?fragment=live",
        "labels": DETAIL_LABELS,
        "drain_labels": DRAIN_LABELS,
        "leftover_retry_seconds": int(RETRY_EVERY_SECONDS),
        "errors": [],
        **extra,
    }


@login_required
@require_safe
def detail(request: HttpRequest, maintenance_id: str) -> HttpResponse:
    maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
    context = _detail_context(request, maintenance)
    fragment = request.GET.get("fragment")
    if fragment == "live":
        return render(request, "maintenance/_live.html", context)
    if fragment:
        return HttpResponse(
            "unknown fragment; known: live", status=400, content_type="text/plain; charset=utf-8"
        )
    return render(request, "maintenance/detail.html", context)


@login_required
@require_safe
def rules_yaml(request: HttpRequest, maintenance_id: str) -> HttpResponse:
    """Every rule of the maintenance as one YAML stream (the page shows only the first few)."""
    maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
    response = HttpResponse(
        maintenance_yaml(maintenance=maintenance), content_type="application/yaml; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{maintenance.id}-rules.yaml"'
    return response


def _show_refusal(
    request: HttpRequest, maintenance: Maintenance, error: MaintenanceError, labels: dict[str, str]
) -> HttpResponse:
    """The page as it is now, with what was refused named by the labels of the form that sent it."""
    maintenance.refresh_from_db()
    context = _detail_context(request, maintenance, errors=shown_errors(error.errors, labels), error=error)
    return render(request, "maintenance/detail.html", context, status=error.status)


@login_required
@require_POST
def preview(request: HttpRequest, maintenance_id: str) -> HttpResponse:
    _require_author(request)  # a preview raises the version and replaces the preview: a write
    maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
    try:
        maintenance_preview_start(
            maintenance=maintenance,
            user=request.user,
            expected_version=form_version(request.POST.get("version")),
        )
    except MaintenanceError as error:
        return _show_refusal(request, maintenance, error, DETAIL_LABELS)
    return redirect("maintenance:detail", maintenance_id=maintenance.id)


def _write_and_show(
    request: HttpRequest, maintenance_id: str, write: Any, labels: dict[str, str] = DETAIL_LABELS
) -> HttpResponse:
    """Run an authoring write; on refusal show the page as it is now, with what was refused and why
    (named by `labels`: those of the form that sent it)."""
    _require_author(request)
    maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
    try:
        write(maintenance, form_version(request.POST.get("version")))
    except MaintenanceError as error:
        return _show_refusal(request, maintenance, error, labels)
    return redirect("maintenance:detail", maintenance_id=maintenance.id)


@login_required
@require_POST
def apply(request: HttpRequest, maintenance_id: str) -> HttpResponse:
    form = request.POST
    if form.get("mode") == "drain":
        return _write_and_show(
            request, maintenance_id,
            lambda m, version: maintenance_drain_start(
                maintenance=m, user=request.user, confirmed=form.get("confirm") == "yes", typed=form.get("typed", ""),
                preview_id=form.get("preview", ""), expected_version=version,
                concurrency=form_whole_number(form.get("concurrency"), "concurrency", 1, MAX_CONCURRENCY),
            ),
            DRAIN_LABELS,
        )  # fmt: skip
    return _write_and_show(
        request,
        maintenance_id,
        lambda m, version: maintenance_apply(
            maintenance=m,
            user=request.user,
            effect=form.get("effect", ""),
            confirmed=form.get("confirm") == "yes",
            typed=form.get("typed", ""),
            preview_id=form.get("preview", ""),
            expected_version=version,
        ),  # fmt: skip
        ENFORCE_LABELS.get(form.get("effect", ""), DETAIL_LABELS),
    )


def _drain_action(service: Any) -> Any:
    @login_required
    @require_POST
    def view(request: HttpRequest, maintenance_id: str) -> HttpResponse:
        return _write_and_show(
            request, maintenance_id,
            lambda m, version: service(maintenance=m, user=request.user, expected_version=version),
        )  # fmt: skip

    return view


drain_pause = _drain_action(maintenance_drain_pause)
drain_resume = _drain_action(maintenance_drain_resume)
drain_abort = _drain_action(maintenance_drain_abort)


@login_required
@require_POST
def undo(request: HttpRequest, maintenance_id: str) -> HttpResponse:
    mode = request.POST.get("mode", "delete")
    return _write_and_show(
        request,
        maintenance_id,
        lambda m, version: maintenance_undo(
            maintenance=m, user=request.user, mode=mode, expected_version=version
        ),
        UNDO_LABELS,
    )


@login_required
@require_POST
def remove_leftovers(request: HttpRequest, maintenance_id: str) -> HttpResponse:
    confirmed = request.POST.get("confirm") == "yes"
    return _write_and_show(
        request,
        maintenance_id,
        lambda m, version: maintenance_leftovers_remove(
            maintenance=m, user=request.user, confirmed=confirmed, expected_version=version
        ),
        LEFTOVER_LABELS,
    )


@login_required
@require_safe
def progress_json(request: HttpRequest, maintenance_id: str) -> JsonResponse:
    maintenance = get_object_or_404(Maintenance, pk=maintenance_id)
    return JsonResponse(maintenance_live(maintenance=maintenance, now=timezone.now()))


# --------------------------------------------------------------------------- audit


@login_required
@require_safe
def audit(request: HttpRequest) -> HttpResponse:
    entries, filters, problems = selectors.audit_list(params=request.GET)
    if request.GET.get("format") == "csv":
        if problems:
            return JsonResponse({"errors": [p.as_dict() for p in problems]}, status=400)
        response = StreamingHttpResponse(
            selectors.audit_csv_lines(entries), content_type="text/csv; charset=utf-8"
        )
        response["Content-Disposition"] = 'attachment; filename="dradash-audit.csv"'
        return response
    if problems:
        entries = entries.none()
    unknown = [name for name in request.GET if name not in selectors.AUDIT_PARAMS]
    page = Paginator(entries, AUDIT_PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    for name in ("page", "fragment", "live"):
        query.pop(name, None)
    context = {
        "nav": "maintenance",
        "page": page,
        "filters": filters,
        # named as every list page names them (partials/query_errors.html): a value by its filter's label, a
        # parameter that is no filter as sent, with the filters the page does take
        "field_errors": shown_errors(
            [p for p in problems if p.field not in unknown], selectors.AUDIT_FILTER_LABELS
        ),
        "unknown_parameters": unknown_parameters(unknown, selectors.AUDIT_FILTER_LABELS),
        "filter_labels": selectors.AUDIT_FILTER_LABELS,
        "query": query.urlencode(),
        "actions": AuditEntry.ACTIONS,
        "actors": selectors.audit_actors(),
        "live_version": latest_version(),
        "live_ws_path": "/ws/maintenance-audit/",
        "live_poll_path": reverse("maintenance:audit-version"),
        "fragment_url": reverse("maintenance:audit")
        + "?"
        + (query.urlencode() + "&" if query else "")
        + f"page={page.number}&fragment=table",
    }
    # a refused filter is the request's error (400, as the Devices and Pods pages answer), named on the page
    status = 400 if problems else 200
    if request.GET.get("fragment") == "table":
        return render(request, "maintenance/_audit_table.html", context, status=status)
    return render(request, "maintenance/audit.html", context, status=status)


@login_required
@require_safe
def audit_version(request: HttpRequest) -> JsonResponse:
    """The polling fallback of the live audit page: the newest entry's id."""
    return JsonResponse({"version": latest_version()})
