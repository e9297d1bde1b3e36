"""The inventory's Prometheus metrics, read from the database at scrape time (see dradash.metrics)."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count, Sum
from django.utils import timezone
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from inventory.models import WATCH_STATES, ClassAvailability, Device, WatchState
from inventory.selectors.status import mirror_status


class MirrorCollector:
    """Per kind: watch state, lag, data age, events applied, re-lists by reason, resync divergences."""

    def collect(self) -> Iterator[Metric]:
        now = timezone.now()
        rows = list(WatchState.objects.order_by("kind"))
        state = GaugeMetricFamily(
            "dradash_mirror_watch_state", "1 for the state each kind's watch is in", labels=["kind", "state"]
        )
        synced = GaugeMetricFamily(
            "dradash_mirror_watch_synced", "1 when the kind is synced", labels=["kind"]
        )
        forbidden = GaugeMetricFamily(
            "dradash_mirror_watch_forbidden",
            "1 when the mirror may not list or watch the kind",
            labels=["kind"],
        )
        lag = GaugeMetricFamily(
            "dradash_mirror_watch_lag_seconds", "received → applied, last batch", labels=["kind"]
        )
        age = GaugeMetricFamily(
            "dradash_mirror_data_age_seconds",
            "seconds since the kind was last confirmed in sync",
            labels=["kind"],
        )
        events = CounterMetricFamily(
            "dradash_mirror_events_applied", "watch events applied to the database", labels=["kind"]
        )
        relists = CounterMetricFamily(
            "dradash_mirror_relists", "re-lists after the first list", labels=["kind"]
        )
        divergences = CounterMetricFamily(
            "dradash_mirror_resync_divergences",
            "objects a periodic resync or a reset re-list found wrong and repaired",
            labels=["kind"],
        )
        for row in rows:
            for value, _label in WATCH_STATES:
                state.add_metric([row.kind, value], 1.0 if row.state == value else 0.0)
            synced.add_metric([row.kind], 1.0 if row.state == "synced" else 0.0)
            forbidden.add_metric([row.kind], 1.0 if row.state == "forbidden" else 0.0)
            if row.lag_seconds is not None:
                lag.add_metric([row.kind], row.lag_seconds)
            if row.confirmed_at is not None:
                age.add_metric([row.kind], max(0.0, (now - row.confirmed_at).total_seconds()))
            events.add_metric([row.kind], float(row.events_applied))
            relists.add_metric([row.kind], float(row.relist_count))
            divergences.add_metric([row.kind], float(row.divergences))
        current = GaugeMetricFamily(
            "dradash_mirror_data_current", "1 when every kind is synced and confirmed recently enough"
        )
        current.add_metric([], 1.0 if mirror_status(now=now).current else 0.0)
        yield from (state, synced, forbidden, lag, age, events, relists, divergences, current)


class DeviceCollector:
    """Devices by driver and allocation state, by taint effect, and per DeviceClass free and headroom."""

    def collect(self) -> Iterator[Metric]:
        by_state = GaugeMetricFamily(
            "dradash_devices", "devices by driver and allocation state", labels=["driver", "state"]
        )
        for driver, allocation_state, n in (
            Device.objects.values("driver", "allocation_state")
            .annotate(n=Count("id"))
            .values_list("driver", "allocation_state", "n")
            .order_by("driver", "allocation_state")
        ):
            by_state.add_metric([driver, allocation_state], float(n))
        tainted = GaugeMetricFamily(
            "dradash_devices_tainted", "devices by their strongest taint effect", labels=["effect"]
        )
        for effect, n in (
            Device.objects.filter(tainted=True)
            .values("max_taint_effect")
            .annotate(n=Count("id"))
            .values_list("max_taint_effect", "n")
            .order_by("max_taint_effect")
        ):
            tainted.add_metric([effect or "unknown"], float(n))
        free = GaugeMetricFamily(
            "dradash_class_devices_free",
            "devices a one-device claim of the class could get now",
            labels=["device_class"],
        )
        headroom = GaugeMetricFamily(
            "dradash_class_headroom",
            "one-device claims of the class that fit together now",
            labels=["device_class"],
        )
        for device_class, f, h in (
            ClassAvailability.objects.values("device_class")
            .annotate(f=Sum("free"), h=Sum("headroom"))
            .values_list("device_class", "f", "h")
            .order_by("device_class")
        ):
            free.add_metric([device_class], float(f or 0))
            headroom.add_metric([device_class], float(h or 0))
        yield from (by_state, tainted, free, headroom)


def mirror_check() -> str | None:
    """Readiness: every kind synced (or forbidden: the cluster's answer) and confirmed recently enough."""
    status = mirror_status()
    if status.never_synced:
        return "the mirror has not synced yet"
    waiting = [f"{k.kind} {k.state}" for k in status.problems if k.state != "forbidden"]
    if waiting:
        return "not synced: " + ", ".join(waiting)
    if status.stale:
        age = "unknown" if status.age_seconds is None else f"{status.age_seconds:.0f}s"
        return f"the data is {age} old (DRADASH_READY_MAX_DATA_AGE_SECONDS={status.max_age_seconds})"
    return None
