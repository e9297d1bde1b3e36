"""Probes and metrics: /healthz, /readyz (503 naming what is not ready), /metrics (token when set)."""

from __future__ import annotations

import pytest
from django.test import Client
from prometheus_client.core import GaugeMetricFamily

from dradash import health, metrics

pytestmark = pytest.mark.django_db


def test_it_answers_the_liveness_probe_without_login() -> None:
    response = Client().get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_it_is_ready_when_the_database_and_channel_layer_answer() -> None:
    response = Client().get("/readyz")
    assert response.status_code == 200
    assert response.json()["checks"]["database"] == "ok"
    assert response.json()["checks"]["channel_layer"] == "ok"


def test_it_is_not_ready_while_a_registered_check_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(health._checks, "probe", lambda: "the probe is not happy")
    response = Client().get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["probe"] == "the probe is not happy"
    monkeypatch.setitem(health._checks, "probe", lambda: 1 / 0)
    assert Client().get("/readyz").json()["checks"]["probe"].startswith("ZeroDivisionError")


def test_it_refuses_writes_to_the_probes() -> None:
    assert Client().post("/healthz").status_code == 405


class _Probe:
    def collect(self):  # type: ignore[no-untyped-def]
        family = GaugeMetricFamily("dradash_test_probe", "a test metric", labels=["kind"])
        family.add_metric(["pods"], 3)
        yield family


def test_it_serves_registered_collectors_in_prometheus_format() -> None:
    probe = _Probe()
    metrics.register_collector(probe)
    try:
        body = Client().get("/metrics").content.decode()
    finally:
        metrics.registry().unregister(probe)
    assert 'dradash_test_probe{kind="pods"} 3.0' in body


def test_it_asks_for_the_bearer_token_when_one_is_configured(settings) -> None:
    settings.DRADASH_METRICS_TOKEN = "s3cret-scrape-token"
    assert Client().get("/metrics").status_code == 401
    ok = Client(HTTP_AUTHORIZATION="Bearer s3cret-scrape-token").get("/metrics")
    assert ok.status_code == 200 and ok["Content-Type"].startswith("text/plain")
