"""Maintenances in the search box (registered into dradash.search by MaintenanceConfig.ready): by id,
title or ticket; an exact id or title first. Bounded like every provider (LIMIT, one COUNT)."""

from __future__ import annotations

from django.db.models import Case, IntegerField, Q, QuerySet, Value, When
from django.urls import reverse

from dradash.search import SearchHit, SearchProvider, register_provider
from maintenance.models import Maintenance


def _maintenances(q: str) -> QuerySet[Maintenance]:
    exact = Q(id=q) | Q(title__iexact=q) | Q(ticket__iexact=q)
    rank = Case(When(exact, then=Value(0)), default=Value(1), output_field=IntegerField())
    match = Q(id=q) | Q(title__icontains=q) | Q(ticket__icontains=q)
    return Maintenance.objects.filter(match).annotate(_rank=rank).order_by("_rank", "-created_at")


def _hits(q: str, start: int, stop: int) -> list[SearchHit]:
    rows = _maintenances(q).only("id", "title", "state", "ticket", "target_effect")[start:stop]
    return [
        SearchHit(
            kind="maintenances",
            name=m.title,
            url=reverse("maintenance:detail", args=[m.id]),
            detail=" · ".join(p for p in (m.id, m.state, m.target_effect, m.ticket) if p),
            exact=getattr(m, "_rank", 1) == 0,
        )
        for m in rows
    ]


PROVIDER = SearchProvider(
    "maintenances",
    "Maintenances",
    60,
    count=lambda q: _maintenances(q).count(),
    hits=_hits,
)


def register_search_provider() -> None:
    register_provider(PROVIDER)
