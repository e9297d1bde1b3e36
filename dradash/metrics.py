"""Prometheus metrics at `/metrics` (prometheus-client, text exposition format).

Numbers are read from the database when Prometheus scrapes, so every web replica answers the same and
processes that write them (mirror, workers) need no endpoint of their own. Rooms register collectors in
their AppConfig.ready with `register_collector(collector)`: an object with `collect()` yielding
`prometheus_client.core` metric families (one or two indexed queries per scrape).

`DRADASH_METRICS_TOKEN`, when set, must be sent as `Authorization: Bearer <token>`.
"""

from __future__ import annotations

import hmac
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

_registry = CollectorRegistry(auto_describe=False)


def register_collector(collector: Any) -> None:
    _registry.register(collector)


def registry() -> CollectorRegistry:
    return _registry


@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    token = settings.DRADASH_METRICS_TOKEN
    if token:
        sent = request.headers.get("Authorization", "")
        if not hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
            response = HttpResponse("metrics need the bearer token (DRADASH_METRICS_TOKEN)\n", status=401)
            response["WWW-Authenticate"] = "Bearer"
            return response
    return HttpResponse(generate_latest(_registry), content_type=CONTENT_TYPE_LATEST)
