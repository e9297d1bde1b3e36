"""Probes: `/healthz` (the process answers) and `/readyz` (it can serve: database, channel layer, and
whatever each room registers, such as "the mirror is fresh").

Rooms register readiness checks in their AppConfig.ready with `register_check(name, fn)`; `fn()` returns
None when ready or a short sentence saying why not. A check registered with `required=False` is reported
(its sentence in "checks") but does not make the process unready. Checks must be cheap (one indexed query): probes run
every few seconds on every replica.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_safe

log = logging.getLogger(__name__)

Check = Callable[[], str | None]
_checks: dict[str, Check] = {}
_advisory: set[str] = set()


def register_check(name: str, check: Check, *, required: bool = True) -> None:
    _checks[name] = check
    if required:
        _advisory.discard(name)
    else:
        _advisory.add(name)


def _database() -> str | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return None


def _channel_layer() -> str | None:
    layer = get_channel_layer()
    if layer is None:
        return "no channel layer is configured"
    # A send to a throwaway channel: reaches Redis when the Redis layer is used.
    async_to_sync(layer.send)("readyz.probe", {"type": "readyz.probe"})
    return None


register_check("database", _database)
register_check("channel_layer", _channel_layer)


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    results: dict[str, str] = {}
    ready = True
    for name, check in _checks.items():
        try:
            problem = check()
        except Exception as exc:  # a failing dependency is a "not ready", never a 500
            log.warning("readiness check %s failed", name, exc_info=True)
            problem = f"{type(exc).__name__}: {exc}"[:300]
        results[name] = "ok" if problem is None else problem
        ready = ready and (problem is None or name in _advisory)
    return JsonResponse(
        {"status": "ok" if ready else "not ready", "checks": results}, status=200 if ready else 503
    )
