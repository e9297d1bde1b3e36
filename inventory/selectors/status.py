"""Is the mirrored data current? One query over the ~10 WatchState rows, for the pages' banner, the API's
`X-Dradash-Data-Age` header, the readiness check and the metrics."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from inventory.models import (
    NOT_SERVED,
    WATCH_FORBIDDEN,
    WATCH_STOPPED,
    WATCH_SYNCED,
    WATCH_UNREACHABLE,
    WatchState,
)

STATE_WORDS = {
    "starting": "not listed yet",
    "relisting": "re-listing",
    "error": "failing",
    "stopped": "not watched (the mirror is stopped)",
    "forbidden": "forbidden (dradash may not list or watch it)",
    "unreachable": "unreachable",
}


@dataclass(frozen=True)
class KindStatus:
    kind: str
    state: str
    since: datetime | None
    confirmed_at: datetime | None
    error: str

    @property
    def words(self) -> str:
        return STATE_WORDS.get(self.state, self.state)


@dataclass(frozen=True)
class MirrorStatus:
    """`current`: every kind with data synced and confirmed within DRADASH_READY_MAX_DATA_AGE_SECONDS."""

    kinds: list[KindStatus]
    problems: list[KindStatus] = field(default_factory=list)  # kinds that are not synced
    age_seconds: float | None = None  # now − the oldest confirmation among kinds with data; None: unknown
    max_age_seconds: int = 0
    unreachable_since: datetime | None = None
    oldest_confirmed_at: datetime | None = None

    @property
    def never_synced(self) -> bool:
        return not self.kinds

    @property
    def stale(self) -> bool:
        return self.age_seconds is None or self.age_seconds > self.max_age_seconds

    @property
    def synced(self) -> bool:
        return bool(self.kinds) and not self.problems

    @property
    def current(self) -> bool:
        return self.synced and not self.stale

    @property
    def listed_problems(self) -> list[KindStatus]:
        """The kinds the banner names one by one: none when every kind is unreachable (the banner's "the
        cluster is unreachable since …" says it once; nine kinds each "unreachable since" the same second
        filled a phone's first screen)."""
        every_kind = bool(self.problems) and len(self.problems) == len(self.kinds)
        if every_kind and all(k.state == WATCH_UNREACHABLE for k in self.problems):
            return []
        return self.problems

    @property
    def forbidden(self) -> list[str]:
        return [k.kind for k in self.problems if k.state == WATCH_FORBIDDEN]

    @property
    def age_header(self) -> str:
        return "unknown" if self.age_seconds is None else str(int(self.age_seconds))


def _has_data(row: KindStatus) -> bool:
    """Kinds the server does not serve, or may not be listed, have no data to be old."""
    return row.state != WATCH_FORBIDDEN and not (row.state == WATCH_STOPPED and row.error == NOT_SERVED)


def mirror_status(*, now: datetime | None = None) -> MirrorStatus:
    now = now or timezone.now()
    rows = [
        KindStatus(kind, state, since, confirmed_at, error)
        for kind, state, since, confirmed_at, error in WatchState.objects.order_by("kind").values_list(
            "kind", "state", "since", "confirmed_at", "error"
        )
    ]
    served = [r for r in rows if not (r.state == WATCH_STOPPED and r.error == NOT_SERVED)]
    problems = [r for r in served if r.state != WATCH_SYNCED]
    with_data = [r for r in rows if _has_data(r)]
    confirmations = [r.confirmed_at for r in with_data]
    oldest = None if not confirmations or None in confirmations else min(c for c in confirmations if c)
    unreachable = [r.since for r in problems if r.state == WATCH_UNREACHABLE and r.since is not None]
    return MirrorStatus(
        kinds=served,
        problems=problems,
        age_seconds=max(0.0, (now - oldest).total_seconds()) if oldest is not None else None,
        max_age_seconds=settings.DRADASH_READY_MAX_DATA_AGE_SECONDS,
        unreachable_since=min(unreachable) if unreachable else None,
        oldest_confirmed_at=oldest,
    )
