"""What-if metrics, read from the run rows at scrape time: runs by kind and state (pending = the queue),
and a cumulative histogram of how long finished runs took."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count, DurationField, ExpressionWrapper, F
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric

from allocation.models import TERMINAL_STATES, RunState, WhatIfRun

BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)


class WhatIfCollector:
    def collect(self) -> Iterator[Metric]:
        runs = GaugeMetricFamily(
            "dradash_whatif_runs", "what-if runs by kind and state", labels=["kind", "state"]
        )
        for kind, state, n in (
            WhatIfRun.objects.values("kind", "state")
            .annotate(n=Count("id"))
            .values_list("kind", "state", "n")
            .order_by("kind", "state")
        ):
            runs.add_metric([kind, state], float(n))
        queue = GaugeMetricFamily("dradash_whatif_queue_length", "what-if runs waiting for a worker")
        queue.add_metric([], float(WhatIfRun.objects.filter(state=RunState.PENDING).count()))
        running = GaugeMetricFamily("dradash_whatif_running", "what-if runs being computed now")
        running.add_metric([], float(WhatIfRun.objects.filter(state=RunState.RUNNING).count()))
        durations = (
            WhatIfRun.objects.filter(
                state__in=list(TERMINAL_STATES), started_at__isnull=False, finished_at__isnull=False
            )
            .annotate(
                took=ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField())
            )
            .values_list("kind", "took")
        )
        by_kind: dict[str, list[float]] = {}
        for kind, took in durations:
            by_kind.setdefault(kind, []).append(max(0.0, took.total_seconds()))
        histogram = HistogramMetricFamily(
            "dradash_whatif_duration_seconds", "start to finish of finished what-if runs", labels=["kind"]
        )
        for kind, seconds in sorted(by_kind.items()):
            buckets = [(str(b), float(sum(1 for s in seconds if s <= b))) for b in BUCKETS]
            buckets.append(("+Inf", float(len(seconds))))
            histogram.add_metric([kind], buckets, sum_value=sum(seconds))
        yield from (runs, queue, running, histogram)
