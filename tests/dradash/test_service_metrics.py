"""Running like a service: the mirror's readiness check, the rooms' Prometheus metrics, JSON logs."""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from allocation.models import RunState, WhatIfRun
from dradash import health
from dradash.jsonlog import JsonFormatter
from inventory.kube import MIRRORED_KINDS
from inventory.metrics import mirror_check
from inventory.mirror.reflector import Health
from inventory.mirror.writer import BatchWriter, Event, HealthUpdate, Replace
from inventory.models import WatchState
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def scrape() -> str:
    return Client().get("/metrics").content.decode()


def synced_everywhere() -> None:
    now = timezone.now()
    for kind in MIRRORED_KINDS:
        WatchState.objects.create(kind=kind, state="synced", since=now, confirmed_at=now)


def test_it_reports_the_mirror_check_without_failing_web_readiness_by_default() -> None:
    response = Client().get("/readyz")
    assert response.status_code == 200
    assert response.json()["checks"]["mirror"] == "the mirror has not synced yet"


def test_it_fails_readiness_on_the_mirror_when_asked_to(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health, "_advisory", set())
    assert Client().get("/readyz").status_code == 503
    synced_everywhere()
    assert Client().get("/readyz").status_code == 200


def test_it_counts_forbidden_kinds_as_settled_but_unreachable_ones_and_old_data_as_not(settings: Any) -> None:
    synced_everywhere()
    WatchState.objects.filter(kind="poddisruptionbudgets").update(state="forbidden")
    assert mirror_check() is None
    WatchState.objects.filter(kind="pods").update(state="unreachable")
    assert mirror_check() == "not synced: pods unreachable"
    WatchState.objects.filter(kind="pods").update(state="synced")
    settings.DRADASH_READY_MAX_DATA_AGE_SECONDS = 60
    WatchState.objects.update(confirmed_at=timezone.now() - timedelta(seconds=120))
    assert "old" in (mirror_check() or "")


def test_it_exposes_events_relists_divergences_lag_and_state_per_kind() -> None:
    writer = BatchWriter()
    rule = f.taint_rule("maint", selector={})
    writer.apply([Replace("devicetaintrules", [rule], "5", reason="initial")])
    writer.apply(
        [Event("devicetaintrules", "MODIFIED", rule, "6"), Event("devicetaintrules", "BOOKMARK", {}, "7")]
    )
    writer.apply([Replace("devicetaintrules", [], "9", reason="resync")])  # the rule is a ghost: 1 divergence
    writer.apply([HealthUpdate("pods", Health(kind="pods", state="forbidden", relists=2))])

    body = scrape()

    assert 'dradash_mirror_events_applied_total{kind="devicetaintrules"} 1.0' in body
    assert 'dradash_mirror_resync_divergences_total{kind="devicetaintrules"} 1.0' in body
    assert 'dradash_mirror_relists_total{kind="pods"} 2.0' in body
    assert 'dradash_mirror_watch_forbidden{kind="pods"} 1.0' in body
    assert 'dradash_mirror_watch_state{kind="pods",state="forbidden"} 1.0' in body
    assert 'dradash_mirror_watch_lag_seconds{kind="devicetaintrules"}' in body
    assert "dradash_mirror_data_current 0.0" in body
    assert WatchState.objects.get(kind="devicetaintrules").last_divergence["ghosts"] == 1


def test_it_exposes_devices_by_driver_state_and_class() -> None:
    f.write(("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")])))

    body = scrape()

    assert 'dradash_devices{driver="gpu.example.com",state="free"} 2.0' in body


def test_it_exposes_the_what_if_queue_and_a_histogram_of_run_durations() -> None:
    now = timezone.now()
    WhatIfRun.objects.create(kind="headroom", input={}, state=RunState.PENDING, time_limit_seconds=60)
    for seconds in (0.2, 3.0):
        WhatIfRun.objects.create(kind="headroom", input={}, state=RunState.SUCCEEDED, time_limit_seconds=60,
                                 started_at=now, finished_at=now + timedelta(seconds=seconds))  # fmt: skip

    body = scrape()

    assert "dradash_whatif_queue_length 1.0" in body
    assert 'dradash_whatif_runs{kind="headroom",state="succeeded"} 2.0' in body
    assert 'dradash_whatif_duration_seconds_bucket{kind="headroom",le="0.25"} 1.0' in body
    assert 'dradash_whatif_duration_seconds_bucket{kind="headroom",le="5.0"} 2.0' in body
    assert 'dradash_whatif_duration_seconds_count{kind="headroom"} 2.0' in body


def test_it_exposes_evictions_in_progress() -> None:
    assert "dradash_evictions_in_progress_total_pods 0.0" in scrape()


def test_it_writes_one_json_object_per_log_line_with_extra_fields() -> None:
    record = logging.LogRecord(
        "inventory.mirror", logging.WARNING, __file__, 1, "%s diverged", ("pods",), None
    )
    record.kind = "pods"

    line = JsonFormatter().format(record)

    entry = json.loads(line)
    assert "\n" not in line
    assert entry["level"] == "WARNING" and entry["logger"] == "inventory.mirror"
    assert (
        entry["message"] == "pods diverged" and entry["kind"] == "pods" and entry["time"].endswith("+00:00")
    )
