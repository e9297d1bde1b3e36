"""Reads of the maintenance room: device selection from the inventory and the audit log."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime, time
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from allocation.models import WhatIfRun
from dradash.csvexport import csv_lines
from inventory.selectors.devices import device_filterset
from maintenance.models import AuditEntry
from maintenance.planning import DeviceRef
from maintenance.taints import FieldError
from maintenance.validation import filters_errors

#: the Audit log's filters and their labels on its form (the page renders them; its errors name them so)
AUDIT_FILTER_LABELS = {
    "maintenance": "Maintenance",
    "actor": "Actor",
    "action": "Action",
    "rule": "Rule",
    "subject": "Pod, budget or device",
    "source": "Source",
    "since": "Since",
    "until": "Until",
}
AUDIT_FILTERS = tuple(AUDIT_FILTER_LABELS)
AUDIT_PARAMS = (*AUDIT_FILTERS, "page", "page_size", "format", "fragment", "live")
NODES_LISTED = 12


def filter_problems(filters: Mapping[str, Any]) -> list[FieldError]:
    """Unknown keys and wrong types (refused), then what the inventory's FilterSet refuses."""
    problems = filters_errors(filters)
    if problems:
        return problems
    filterset = device_filterset(filters=filters)
    if not filterset.is_valid():
        return [
            FieldError(f"filters.{f}", " ".join(str(e) for e in errs)) for f, errs in filterset.errors.items()
        ]
    return []


def matching_devices(*, filters: Mapping[str, str]) -> QuerySet[Any]:
    """The inventory's devices matching valid `filters` (check `filter_problems` first)."""
    return device_filterset(filters=filters).qs.order_by("driver", "pool", "name")


def matching_summary(*, filters: Mapping[str, str]) -> dict[str, Any]:
    """What "all N matching" would select: N, and the nodes and drivers it spans."""
    queryset = device_filterset(filters=filters).qs
    nodes = sorted(n for n in queryset.order_by().values_list("node_name", flat=True).distinct() if n)
    drivers = sorted(queryset.order_by().values_list("driver", flat=True).distinct())
    return {
        "count": queryset.count(),
        "node_count": len(nodes),
        "nodes": nodes[:NODES_LISTED],
        "more_nodes": max(0, len(nodes) - NODES_LISTED),
        "drivers": drivers,
    }


def device_refs(*, filters: Mapping[str, str]) -> list[DeviceRef]:
    return [
        DeviceRef(d, p, n)
        for d, p, n in matching_devices(filters=filters).values_list("driver", "pool", "name")
    ]


def parse_device_refs(
    values: list[str], *, field: str = "device"
) -> tuple[list[DeviceRef], list[FieldError]]:
    """Form values `driver|pool|device` (the checkbox values of the selection table). A value of another
    shape is refused by name, never dropped: dropping it would draft fewer devices than were ticked."""
    refs: list[DeviceRef] = []
    errors: list[FieldError] = []
    for value in values:
        parts = value.split("|")
        if len(parts) == 3 and all(parts):
            refs.append(DeviceRef(*parts))
        else:
            shown = value if len(value) <= 80 else value[:77] + "..."
            errors.append(
                FieldError(field, f"not a device reference: {shown!r}; expected driver|pool|device")
            )
    return refs, errors


def page_filters(params: Mapping[str, str]) -> tuple[dict[str, str], list[FieldError]]:
    """The device filters of the New maintenance page's query string; an unknown one is an error
    (a mistyped `nod=` must not quietly show every device)."""
    known = {"page", "fragment", "live", "from_whatif"}
    filters = {k: v for k, v in params.items() if k not in known and v}
    return filters, filter_problems(filters) if filters else []


def whatif_prefill(*, run_id: str) -> dict[str, Any] | None:
    """A succeeded taint-impact answer as the start of a new maintenance: its devices ticked and its taint
    filled in. Only a starting point: the operator still creates the draft, previews it and confirms."""
    try:
        run = WhatIfRun.objects.get(pk=run_id, kind="taint_impact", state="succeeded")
    except (WhatIfRun.DoesNotExist, ValidationError, ValueError):
        return None
    result = run.result or {}
    ticked: set[str] = set()
    for shown in result.get("devices") or []:
        # "driver/pool/device": a driver and a device name hold no "/", a pool name may
        driver, _, rest = str(shown).partition("/")
        pool, _, device = rest.rpartition("/")
        if driver and pool and device:
            ticked.add(f"{driver}|{pool}|{device}")
    taint = result.get("taint") or {}
    return {
        "run_id": str(run.pk),
        "ticked": ticked,
        "form": {
            "title": f"From what-if {str(run.pk)[:8]}",
            "key": str(taint.get("key") or ""),
            "value": str(taint.get("value") or ""),
            "effect": str(taint.get("effect") or "NoExecute"),
        },
    }


def _moment(value: str, *, end: bool) -> datetime | None:
    try:
        parsed = parse_datetime(value)
        day = parse_date(value) if parsed is None else None
    except ValueError:  # well-formed but no such moment (2026-99-99, 25:00): Django raises, not None
        return None
    if parsed is None:
        if day is None:
            return None
        parsed = datetime.combine(day, time.max if end else time.min)
    if timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, timezone.get_current_timezone())
    return parsed


def audit_list(*, params: Mapping[str, str]) -> tuple[QuerySet[AuditEntry], dict[str, str], list[FieldError]]:
    """Entries matching the filters, newest first; problems name the parameter (nothing is guessed)."""
    filters = {k: str(params[k]).strip() for k in AUDIT_FILTERS if params.get(k)}
    problems = [
        FieldError(k, "Unknown parameter: supported are " + ", ".join(AUDIT_PARAMS))
        for k in params
        if k not in AUDIT_PARAMS
    ]
    entries = AuditEntry.objects.select_related("maintenance").all()
    if "rule" in filters:
        entries = entries.filter(rule_name__icontains=filters["rule"])
    if "subject" in filters:
        entries = entries.filter(subject__icontains=filters["subject"])
    if "actor" in filters:
        entries = entries.filter(actor=filters["actor"])
    if "action" in filters:
        if filters["action"] not in AuditEntry.ACTION_NAMES:
            problems.append(
                FieldError("action", "Unsupported value: one of " + ", ".join(AuditEntry.ACTION_NAMES))
            )
        entries = entries.filter(action=filters["action"])
    if "source" in filters:
        if filters["source"] not in (AuditEntry.SOURCE_DRADASH, AuditEntry.SOURCE_CLUSTER):
            problems.append(FieldError("source", 'Unsupported value: "dradash" or "cluster"'))
        entries = entries.filter(source=filters["source"])
    if "maintenance" in filters:
        entries = entries.filter(maintenance_id=filters["maintenance"])
    for name, lookup, end in (("since", "at__gte", False), ("until", "at__lte", True)):
        if name in filters:
            moment = _moment(filters[name], end=end)
            if moment is None:
                problems.append(
                    FieldError(name, "must be a date (2026-11-29) or a date-time (2026-11-29T12:00:00Z)")
                )
            else:
                entries = entries.filter(**{lookup: moment})
    return entries, filters, problems


def audit_actors() -> list[str]:
    return sorted(AuditEntry.objects.order_by().values_list("actor", flat=True).distinct()[:200])


CSV_COLUMNS = [
    "at",
    "actor",
    "source",
    "action",
    "rule",
    "subject",
    "effect",
    "maintenance",
    "preview",
    "message",
]


def audit_csv_lines(entries: QuerySet[AuditEntry], *, limit: int = 100_000) -> Iterator[str]:
    rows = (
        (e.at.isoformat(), e.actor, e.source, e.action, e.rule_name, e.subject, e.effect,
         e.maintenance_id or "", e.preview_run_id, e.message)
        for e in entries[:limit].iterator(chunk_size=2000)
    )  # fmt: skip
    return csv_lines(CSV_COLUMNS, rows)
