"""What-if services: create, run, cancel and reap WhatIfRun rows, and the three questions themselves.

Celery tasks, views and the API are thin and call only these. Every state change is a conditional
UPDATE (`state=<expected>`), so a cancel, a reaper and a worker racing each other can never move a
run backwards or out of a final state.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from allocation.models import RunKind, RunState, WhatIfRun
from allocation.snapshot import Snapshot, snapshot_load
from allocation.whatif_common import Progress, WhatIfInputError, no_progress
from allocation.whatif_feasibility import feasibility
from allocation.whatif_headroom import headroom
from allocation.whatif_inputs import check_pick_exists, normalize_input, resolve_subject
from allocation.whatif_publish import publish_run
from allocation.whatif_taint import TaintImpact, taint_impact_compute

log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 2.0
# A running run whose heartbeat is older than this has lost its worker (killed, restarted, host gone).
STALE_AFTER = timedelta(seconds=30)
# A pending run nobody picked up for this long will not be: no worker is consuming the queue.
PENDING_TIMEOUT = timedelta(minutes=10)
# Grace beyond the time limit before the reaper stops waiting for a worker stuck inside one long step.
TIME_LIMIT_GRACE = timedelta(seconds=30)
PROGRESS_WRITE_SECONDS = 0.5
monotonic = time.monotonic

_PLURAL = {
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "Pod": "pods",
}


class RunStopped(Exception):
    """Raised by progress callbacks to stop a run between steps."""


class RunCancelled(RunStopped):
    pass


class RunTimedOut(RunStopped):
    pass


# --------------------------------------------------------------------------- the questions


def taint_impact(
    *,
    selector: dict[str, str] | None = None,
    selectors: list[dict[str, str]] | None = None,
    taint: dict[str, Any],
    now: datetime,
    snapshot: Snapshot | None = None,
) -> TaintImpact:
    """What a proposed device taint would do (maintenance's preview): one `selector`, or several
    `selectors` (one DeviceTaintRule each). `TaintImpact.to_json()` is JSON-serialisable. Raises
    WhatIfInputError for a bad selector or taint."""
    raw: dict[str, Any] = {"taint": taint}
    if selectors is not None:
        raw["selectors"] = selectors
    elif selector is not None:
        raw["selector"] = selector
    data = normalize_input("taint_impact", raw)
    return taint_impact_compute(
        snapshot=snapshot if snapshot is not None else snapshot_load(),
        selectors=data["selectors"],
        taint=data["taint"],
        now=now,
    )


def whatif_answer(
    *, kind: str, input: dict[str, Any], snapshot: Snapshot, now: datetime, progress: Progress = no_progress
) -> dict[str, Any]:
    """Answer a stored (normalized) what-if input against `snapshot`."""
    if kind == RunKind.TAINT_IMPACT:
        return taint_impact_compute(
            snapshot=snapshot, selectors=input["selectors"], taint=input["taint"], now=now, progress=progress
        ).to_json()
    subject = resolve_subject(input, snapshot)
    if kind == RunKind.FEASIBILITY:
        return feasibility(
            snapshot=snapshot, subject=subject, only_node=input.get("node", ""), progress=progress
        )
    if kind == RunKind.HEADROOM:
        return headroom(
            snapshot=snapshot, subject=subject, max_per_node=input["max_per_node"], progress=progress
        )
    raise WhatIfInputError("kind", f"unknown what-if kind {kind!r}")


# --------------------------------------------------------------------------- run lifecycle


def _picked_exists(kind: str, namespace: str, name: str) -> object | None:
    from inventory.models import KubeObject

    return KubeObject.objects.filter(kind=_PLURAL[kind], namespace=namespace, name=name).first()


def whatif_run_create(*, kind: str, input: Any, user: Any, producer: Any = None) -> WhatIfRun:
    """Validate, store a pending run, and queue it once the row is committed."""
    if kind not in RunKind.values:
        raise WhatIfInputError("kind", f"must be one of {', '.join(RunKind.values)}, got {kind!r}")
    data = normalize_input(kind, input)
    check_pick_exists(data, _picked_exists)
    run = WhatIfRun.objects.create(
        kind=kind,
        input=data,
        created_by=user if getattr(user, "is_authenticated", False) else None,
        time_limit_seconds=settings.DRADASH_WHATIF_TIME_LIMIT,
        phase="waiting for a worker",
    )
    transaction.on_commit(lambda: whatif_run_enqueue(run=run, producer=producer))
    return run


def whatif_run_enqueue(*, run: WhatIfRun, producer: Any = None, start_worker: bool = True) -> None:
    """Send the run to the workers; the task id is the run id (chosen here, so pages can subscribe first).

    `producer`: a kombu Producer for another broker than the configured one (tests of the Redis path).
    """
    from allocation.tasks import run_whatif

    if settings.DRADASH_EMBEDDED_WORKER and producer is None and start_worker:
        # Normally started with the server; this makes sure a run never waits for a worker that
        # nobody started (idempotent, and quick once running).
        from allocation.worker import start_embedded_worker

        start_embedded_worker()
    options: dict[str, Any] = {"task_id": str(run.id)}
    if not str(settings.CELERY_BROKER_URL).startswith("memory://"):
        # Separate (prefork) workers enforce these with signals; the cooperative deadline fires first.
        options["soft_time_limit"] = run.time_limit_seconds + 5
        options["time_limit"] = run.time_limit_seconds + int(TIME_LIMIT_GRACE.total_seconds())
    if producer is not None:
        options["producer"] = producer
    try:
        run_whatif.apply_async(args=[str(run.id)], **options)
    except Exception as exc:  # the broker is down: say so on the run instead of leaving it pending
        log.exception("could not queue what-if run %s", run.id)
        _finish(run.id, RunState.FAILED, expected=RunState.PENDING, error=f"could not queue the run: {exc}")


def whatif_requeue_pending() -> int:
    """Queue every pending run again: an in-memory broker loses its queue when the process restarts.

    A run delivered twice runs once (the worker only starts runs that are still pending).
    """
    runs = list(
        WhatIfRun.objects.filter(state=RunState.PENDING, created_at__gte=timezone.now() - PENDING_TIMEOUT)
    )
    for run in runs:
        whatif_run_enqueue(run=run, start_worker=False)
    return len(runs)


def whatif_run_cancel(*, run: WhatIfRun) -> WhatIfRun:
    """Cancel: a pending run stops at once; a running one at its next step."""
    now = timezone.now()
    if WhatIfRun.objects.filter(pk=run.pk, state=RunState.PENDING).update(
        state=RunState.CANCELLED, cancel_requested=True, finished_at=now, error="cancelled before it started"
    ):
        _revoke(str(run.pk))
    else:
        WhatIfRun.objects.filter(pk=run.pk, state=RunState.RUNNING).update(cancel_requested=True)
    run.refresh_from_db()
    publish_run(run)
    return run


def _revoke(task_id: str) -> None:
    try:
        from dradash.celery import app

        app.control.revoke(task_id)
    except Exception:  # best effort: the worker also skips runs that are no longer pending
        log.info("revoke of %s failed; the worker will skip it", task_id, exc_info=True)


def whatif_reap_stale(*, now: datetime | None = None) -> int:
    """Fail runs whose worker is gone (stale heartbeat), stuck past their time limit, or never picked up."""
    now = now or timezone.now()
    reaped = 0
    for run in WhatIfRun.objects.filter(state=RunState.RUNNING):
        beat = run.heartbeat_at or run.started_at or run.created_at
        if beat < now - STALE_AFTER:
            reaped += _finish(
                run.pk,
                RunState.FAILED,
                now=now,
                error=(
                    f"the worker running this stopped responding (last heartbeat {beat:%Y-%m-%d %H:%M:%S} UTC); "
                    "it was probably restarted or killed — run the what-if again"
                ),
            )
        elif (
            run.started_at
            and run.started_at < now - timedelta(seconds=run.time_limit_seconds) - TIME_LIMIT_GRACE
        ):
            reaped += _finish(
                run.pk,
                RunState.TIMED_OUT,
                now=now,
                error=f"still running after the time limit of {run.time_limit_seconds} s; stopped waiting for it",
            )
    for run in WhatIfRun.objects.filter(state=RunState.PENDING, created_at__lt=now - PENDING_TIMEOUT):
        reaped += _finish(
            run.pk,
            RunState.FAILED,
            expected=RunState.PENDING,
            now=now,
            error=f"no worker picked this run up within {int(PENDING_TIMEOUT.total_seconds() // 60)} minutes",
        )
    return reaped


def _finish(
    run_id: Any,
    state: str,
    *,
    expected: str = RunState.RUNNING,
    now: datetime | None = None,
    error: str = "",
    result: dict[str, Any] | None = None,
) -> int:
    fields: dict[str, Any] = {"state": state, "finished_at": now or timezone.now(), "error": error}
    if state == RunState.SUCCEEDED:
        fields.update(result=result, percent=100, phase="done")
    changed = WhatIfRun.objects.filter(pk=run_id, state=expected).update(**fields)
    if changed:
        publish_run(WhatIfRun.objects.get(pk=run_id))
    return changed


class _Reporter:
    """The Progress a run's service calls between steps: checks the deadline and the cancel flag,
    writes phase and percent (throttled) with a heartbeat, and broadcasts them."""

    def __init__(self, run: WhatIfRun, clock: Callable[[], float]) -> None:
        self.run_id = run.pk
        self.clock = clock
        self.deadline = clock() + run.time_limit_seconds
        self.time_limit = run.time_limit_seconds
        self.last_write = float("-inf")
        self.last_phase = ""

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = self.clock()
        if now > self.deadline:
            raise RunTimedOut(f"stopped after the time limit of {self.time_limit} s (while {phase})")
        if phase == self.last_phase and now - self.last_write < PROGRESS_WRITE_SECONDS:
            return
        self.last_write, self.last_phase = now, phase
        if WhatIfRun.objects.filter(pk=self.run_id, cancel_requested=True).exists():
            raise RunCancelled("cancelled")
        percent = min(99, int(done * 100 / total)) if total else 0
        if WhatIfRun.objects.filter(pk=self.run_id, state=RunState.RUNNING).update(
            phase=phase[:200], percent=percent, heartbeat_at=timezone.now()
        ):
            publish_run(WhatIfRun.objects.get(pk=self.run_id))


class _Heartbeat(threading.Thread):
    """Touches heartbeat_at while the run's step is busy, so only a dead worker goes stale."""

    def __init__(self, run_id: Any) -> None:
        super().__init__(name=f"whatif-heartbeat-{run_id}", daemon=True)
        self.run_id = run_id
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            while not self.stopped.wait(HEARTBEAT_SECONDS):
                WhatIfRun.objects.filter(pk=self.run_id, state=RunState.RUNNING).update(
                    heartbeat_at=timezone.now()
                )
        except Exception:
            log.warning("heartbeat of what-if run %s stopped", self.run_id, exc_info=True)
        finally:
            connection.close()


def whatif_run_execute(*, run_id: str, clock: Callable[[], float] | None = None) -> None:
    """Run a pending run to its end (called by the Celery task). Never raises for a bad run.

    `clock` (monotonic seconds) drives the time limit; default `allocation.services.monotonic`.
    """
    from celery.exceptions import SoftTimeLimitExceeded

    from dra.allocator import AllocationError

    now = timezone.now()
    if not WhatIfRun.objects.filter(pk=run_id, state=RunState.PENDING).update(
        state=RunState.RUNNING, started_at=now, heartbeat_at=now, phase="reading the inventory", percent=0
    ):
        return  # cancelled before it started, reaped, or a duplicate delivery
    run = WhatIfRun.objects.get(pk=run_id)
    publish_run(run)
    reporter = _Reporter(run, clock or monotonic)
    heartbeat = _Heartbeat(run.pk)
    heartbeat.start()
    try:
        reporter("reading the inventory", 0, 1)
        snapshot = snapshot_load()
        WhatIfRun.objects.filter(pk=run.pk).update(snapshot_versions=snapshot.resource_versions)
        result = whatif_answer(kind=run.kind, input=run.input, snapshot=snapshot, now=now, progress=reporter)
        if WhatIfRun.objects.filter(pk=run.pk, cancel_requested=True).exists():
            raise RunCancelled("cancelled")
        _finish(run.pk, RunState.SUCCEEDED, result=result)
    except RunCancelled:
        _finish(run.pk, RunState.CANCELLED, error="cancelled while running")
    except (RunTimedOut, SoftTimeLimitExceeded) as exc:
        message = (
            str(exc)
            if isinstance(exc, RunTimedOut)
            else f"stopped after the time limit of {run.time_limit_seconds} s"
        )
        _finish(run.pk, RunState.TIMED_OUT, error=message)
    except WhatIfInputError as exc:
        _finish(run.pk, RunState.FAILED, error=str(exc))
    except AllocationError as exc:
        _finish(run.pk, RunState.FAILED, error=f"the allocator refused the input: {exc}")
    except Exception as exc:
        log.exception("what-if run %s failed", run.pk)
        _finish(run.pk, RunState.FAILED, error=f"internal error: {type(exc).__name__}: {exc}")
    finally:
        heartbeat.stopped.set()
        heartbeat.join(timeout=HEARTBEAT_SECONDS * 2)
