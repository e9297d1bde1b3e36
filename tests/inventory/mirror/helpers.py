"""Helpers for the mirror tests: compare the database with the simcluster store, poll with a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.db import OperationalError

from inventory.kube import KIND
from inventory.models import KubeObject

MIRRORED = [k for k in KIND if k != "resourcepoolstatusrequests"]


def cluster_state(cluster: Any, kinds: list[str] = MIRRORED) -> set[tuple[str, str, str]]:
    state = set()
    for kind in kinds:
        for obj in cluster.store.list(kind):
            meta = obj["metadata"]
            state.add((kind, meta["uid"], str(meta["resourceVersion"])))
    return state


def db_state(kinds: list[str] = MIRRORED) -> set[tuple[str, str, str]]:
    return set(KubeObject.objects.filter(kind__in=kinds).values_list("kind", "uid", "resource_version"))


def wait_until(predicate: Callable[[], bool], *, timeout: float = 15.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except OperationalError as exc:
            # The test database is SQLite in shared-cache memory mode: a reader that meets the mirror's
            # write transaction gets "table is locked" at once instead of waiting. Poll again.
            if "locked" not in str(exc):
                raise
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def wait_for_db_to_equal_cluster(cluster: Any, *, timeout: float = 20.0) -> None:
    last: dict[str, Any] = {}

    def equal() -> bool:
        cluster_now, db_now = cluster_state(cluster), db_state()
        last["missing"] = sorted(cluster_now - db_now)[:5]
        last["extra"] = sorted(db_now - cluster_now)[:5]
        return cluster_now == db_now

    try:
        wait_until(equal, timeout=timeout, what="the database to equal the cluster")
    except AssertionError as exc:
        raise AssertionError(f"{exc}: missing {last.get('missing')}, extra {last.get('extra')}") from None
