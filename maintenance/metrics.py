"""Maintenance metrics at scrape time: pods an applied NoExecute maintenance will still evict or is
evicting (frozen in `Maintenance.affected` with an eviction time, and still present in the mirror)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from inventory.models import KubeObject
from maintenance.models import Maintenance


class EvictionCollector:
    def collect(self) -> Iterator[Metric]:
        pending: dict[str, list[str]] = {}
        for mid, affected in Maintenance.objects.filter(
            state=Maintenance.APPLIED, applied_effect="NoExecute"
        ).values_list("id", "affected"):
            pending[str(mid)] = [p["uid"] for p in affected or [] if p.get("evict_at") is not None]
        uids = {uid for group in pending.values() for uid in group}
        present = set(KubeObject.objects.filter(kind="pods", uid__in=uids).values_list("uid", flat=True))
        family = GaugeMetricFamily(
            "dradash_evictions_in_progress",
            "pods an applied NoExecute maintenance evicts that are not gone yet",
            labels=["maintenance"],
        )
        for mid, group in sorted(pending.items()):
            family.add_metric([mid], float(sum(1 for uid in group if uid in present)))
        total = GaugeMetricFamily(
            "dradash_evictions_in_progress_total_pods", "the same, over all maintenances"
        )
        total.add_metric([], float(sum(1 for uid in uids if uid in present)))
        yield from (family, total)
