"""What-if services: create, queue, cancel, settle and reap WhatIfRun rows, and run one to its end.

Celery tasks, the embedded worker, views and the API are thin and call only these. Every state change
is a conditional UPDATE (`state=<expected>`), so a cancel, a reaper and a worker racing each other can
never move a run backwards or out of a final state.

The run row is the queue: a `pending` row is a queued run, and a worker takes it by moving it to
`running` (one conditional UPDATE, so two workers never both run it). The embedded worker
(`manage.py whatif_worker`, a child process of the web server) polls for pending rows and is woken
when one is created; with a Celery broker (Redis) the run is also sent to the Celery workers.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import InterfaceError, OperationalError, connection, transaction
from django.utils import timezone

from allocation.models import RunState, WhatIfRun
from allocation.publish import publish_run
from allocation.snapshot import MirrorLookup, snapshot_load
from allocation.supervisor import wake_embedded_worker
from allocation.whatif.base import (
    Budget,
    Context,
    WhatIfInputError,
    WhatIfLimitError,
    get_kind,
)
from allocation.whatif.fingerprint import remember_fingerprints
from allocation.whatif.view import AllocatorView, node_names
from dra.allocator import AllocationError, AllocationTimeout
from dradash.celery import app as celery_app
from dradash.context import user_can_author, user_is_admin
from inventory.redaction import redact_yaml_text

log = logging.getLogger(__name__)

#: the Celery task that runs one (tasks.py registers it under this name)
RUN_TASK = "allocation.run_whatif"
HEARTBEAT_SECONDS = 2.0
# A running run whose heartbeat is older than this has lost its worker (killed, restarted, host gone).
STALE_AFTER = timedelta(seconds=30)
# A pending run nobody picked up for this long will not be: no worker is consuming the queue.
PENDING_TIMEOUT = timedelta(minutes=10)
# Grace beyond the time limit before the reaper stops waiting for a worker stuck inside one long step.
TIME_LIMIT_GRACE = timedelta(seconds=30)
PROGRESS_WRITE_SECONDS = 0.5
monotonic = time.monotonic


class RunStopped(Exception):
    """Raised by progress callbacks to stop a run between steps."""


class RunCancelled(RunStopped):
    pass


class RunTimedOut(RunStopped):
    pass


# --------------------------------------------------------------------------- the question


def whatif_answer(*, kind: str, input: dict[str, Any], context: Context) -> dict[str, Any]:
    """Answer a stored (normalized) what-if input: the registered kind's `answer`."""
    return get_kind(kind).answer(input, context)


def whatif_input_normalize(*, kind: str, input: Any) -> dict[str, Any]:
    """Validate `input` for `kind` against the inventory now; the canonical form a run stores.

    Raises `WhatIfInputError` naming the field: a question that cannot be answered is refused here,
    not accepted and then failed (or worse, "succeeded") in the worker."""
    spec = get_kind(kind)
    if not isinstance(input, dict):
        raise WhatIfInputError("input", "must be an object")
    return spec.normalize(input, MirrorLookup())


# --------------------------------------------------------------------------- run lifecycle


def whatif_run_create(
    *, kind: str, input: Any, user: Any, celery_options: dict[str, Any] | None = None
) -> WhatIfRun:
    """Validate, store a pending run, and queue it once the row is committed.

    Raises `WhatIfInputError` for bad input and `WhatIfLimitError` when the user already has
    DRADASH_WHATIF_MAX_RUNS_PER_USER runs pending or running.
    """
    data = whatif_input_normalize(kind=kind, input=input)
    owner = user if getattr(user, "is_authenticated", False) else None
    with transaction.atomic():
        if owner is not None:
            _check_user_limit(owner)
        run = WhatIfRun.objects.create(
            kind=kind,
            input=data,
            created_by=owner,
            time_limit_seconds=settings.DRADASH_WHATIF_TIME_LIMIT,
            max_search_steps=settings.DRADASH_WHATIF_MAX_SEARCH_STEPS,
            phase="waiting for a worker",
        )
        transaction.on_commit(lambda: whatif_run_enqueue(run=run, celery_options=celery_options))
    if not transaction.get_connection().in_atomic_block:
        # Queued (or not: a broker that does not answer fails the run at once): the caller answers with
        # the run as it is now, never a "pending" run that is already failed.
        run.refresh_from_db()
    return run


def _check_user_limit(user: Any) -> None:
    limit = settings.DRADASH_WHATIF_MAX_RUNS_PER_USER
    # The user's row is locked so two requests at once cannot both pass the count (SQLite's IMMEDIATE
    # transactions serialise writers anyway).
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()
    active = WhatIfRun.objects.filter(created_by=user, state__in=(RunState.PENDING, RunState.RUNNING)).count()
    if active >= limit:
        raise WhatIfLimitError(
            "user",
            f"you already have {active} what-if run{'s' if active != 1 else ''} pending or running; "
            f"one user may have at most {limit} at once (DRADASH_WHATIF_MAX_RUNS_PER_USER) — "
            "wait for one to finish or cancel it",
        )


def whatif_run_enqueue(*, run: WhatIfRun, celery_options: dict[str, Any] | None = None) -> None:
    """Tell the workers: wake the embedded one, and send the run to Celery when a broker is configured
    (the task id is the run id, chosen here, so pages can subscribe first).

    `celery_options`: sent to Celery even without a configured broker, e.g. the `producer` of another
    broker and a `queue` of its own (tests of the Redis path).
    """
    wake_embedded_worker()
    if celery_options is None and not settings.CELERY_BROKER_URL:
        return  # the pending row is the queue
    options: dict[str, Any] = {
        "task_id": str(run.id),
        # Prefork workers enforce these with signals; the allocator's own deadline fires first.
        "soft_time_limit": run.time_limit_seconds + 5,
        "time_limit": run.time_limit_seconds + int(TIME_LIMIT_GRACE.total_seconds()),
    }
    options.update(celery_options or {})
    try:
        celery_app.send_task(RUN_TASK, args=[str(run.id)], **options)
    except Exception as exc:  # the broker is down: say so on the run instead of leaving it pending
        log.exception("could not queue what-if run %s", run.id)
        error = f"could not queue the run: the task broker did not answer ({str(exc)[:300]}); try again in a moment"
        _finish(run.id, RunState.FAILED, expected=RunState.PENDING, error=error)


def whatif_may_cancel(*, user: Any, run: WhatIfRun) -> bool:
    """The user who started a run, an operator or an admin may cancel it; anyone logged in may read it."""
    return bool(run.created_by_id == user.pk or user.is_staff or user_can_author(user))


def whatif_run_input_shown(*, user: Any, run: WhatIfRun) -> Any:
    """The question as `user` may see it: a pasted object (`input.yaml`, a pod with its env, say) is
    redacted (inventory.redaction) for everybody but its author and admins."""
    data = run.input
    if run.created_by_id == user.pk or user_is_admin(user) or not isinstance(data, dict):
        return data
    if isinstance(data.get("yaml"), str):
        return {**data, "yaml": redact_yaml_text(data["yaml"])}
    return data


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
    if not settings.CELERY_BROKER_URL:
        return
    try:
        celery_app.control.revoke(task_id)
    except Exception:  # best effort: the worker also skips runs that are no longer pending
        log.info("revoke of %s failed; the worker will skip it", task_id, exc_info=True)


def _verdict(run: WhatIfRun, now: datetime) -> tuple[str, str] | None:
    """(state, error) a run must end in because its worker is gone or stuck, or None."""
    if run.state == RunState.RUNNING:
        beat = run.heartbeat_at or run.started_at or run.created_at
        if beat < now - STALE_AFTER:
            return RunState.FAILED, (
                f"the worker running this stopped responding (last heartbeat {beat:%Y-%m-%d %H:%M:%S} UTC); "
                "it was probably restarted or killed — run the what-if again"
            )
        if (
            run.started_at
            and run.started_at < now - timedelta(seconds=run.time_limit_seconds) - TIME_LIMIT_GRACE
        ):
            return RunState.TIMED_OUT, (
                f"still running after the time limit of {run.time_limit_seconds} s; stopped waiting for it"
            )
    elif run.state == RunState.PENDING and run.created_at < now - PENDING_TIMEOUT:
        minutes = int(PENDING_TIMEOUT.total_seconds() // 60)
        return RunState.FAILED, f"no worker picked this run up within {minutes} minutes"
    return None


def whatif_run_settle(*, run: WhatIfRun, now: datetime | None = None) -> WhatIfRun:
    """On a read: decide about this one run only — a dead worker's run is shown failed, not running."""
    verdict = _verdict(run, now or timezone.now())
    if verdict is not None and _finish(run.pk, verdict[0], expected=run.state, now=now, error=verdict[1]):
        run.refresh_from_db()
    return run


def whatif_reap_stale(*, now: datetime | None = None) -> int:
    """Fail every run whose worker is gone, stuck past its time limit, or that nobody picked up.

    Table-wide: the workers' periodic reaper calls it, never a page or API read."""
    now = now or timezone.now()
    reaped = 0
    candidates = WhatIfRun.objects.filter(state=RunState.RUNNING) | WhatIfRun.objects.filter(
        state=RunState.PENDING, created_at__lt=now - PENDING_TIMEOUT
    )
    for run in candidates:
        verdict = _verdict(run, now)
        if verdict is not None:
            reaped += _finish(run.pk, verdict[0], expected=run.state, now=now, error=verdict[1])
    return reaped


def whatif_pending_ids(*, limit: int, skip: Iterable[str] = ()) -> list[str]:
    """The oldest pending runs a worker with `limit` free slots should take next."""
    rows = (
        WhatIfRun.objects.filter(state=RunState.PENDING)
        .exclude(pk__in=list(skip))
        .order_by("created_at")
        .values_list("pk", flat=True)[:limit]
    )
    return [str(pk) for pk in rows]


def whatif_runs_abandon(*, run_ids: Iterable[str], error: str) -> int:
    """A worker going away ends its runs as failed at once, instead of leaving them to the reaper."""
    return sum(_finish(run_id, RunState.FAILED, error=error) for run_id in run_ids)


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
        publish_run(WhatIfRun.objects.defer("result").get(pk=run_id))
    return changed


class _Reporter:
    """The Progress a run's kind calls between steps: checks the deadline and the cancel flag,
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
            publish_run(WhatIfRun.objects.defer("result").get(pk=self.run_id))


class _Heartbeat(threading.Thread):
    """Touches heartbeat_at while the run's step is busy, so only a dead worker goes stale."""

    def __init__(self, run_id: Any) -> None:
        super().__init__(name=f"whatif-heartbeat-{run_id}", daemon=True)
        self.run_id = run_id
        self.stopped = threading.Event()

    def run(self) -> None:
        """One beat every HEARTBEAT_SECONDS until stopped. A beat that fails (the database did not
        answer: a restart, a failover, a cut) is logged and the next one tries again on a new
        connection: a thread that ended at the first error left a live run to be reaped as "stopped
        responding" once one step took longer than STALE_AFTER."""
        try:
            while not self.stopped.wait(HEARTBEAT_SECONDS):
                try:
                    WhatIfRun.objects.filter(pk=self.run_id, state=RunState.RUNNING).update(
                        heartbeat_at=timezone.now()
                    )
                except Exception as exc:
                    log.warning(
                        "heartbeat of what-if run %s failed (tried again in %s s): %s: %s",
                        self.run_id,
                        HEARTBEAT_SECONDS,
                        type(exc).__name__,
                        exc,
                    )
                    connection.close()  # the next beat connects again
        finally:
            connection.close()


def whatif_warm() -> None:
    """Bring this process's snapshot of the mirror, and the view every question starts from, up to date
    (`snapshot_load` reads only what changed since; a view is built once per snapshot). A worker does
    this from its start on (`allocation.worker.start_warmer`), so its first run does not pay for
    reading and decoding the whole inventory: at 100,000 devices that is most of a first answer. The
    nodes' fingerprints for claims that name no attribute are remembered too (the slices' digests)."""
    snapshot = snapshot_load()
    remember_fingerprints(AllocatorView.build(snapshot), node_names(snapshot))


def whatif_run_execute(*, run_id: str, clock: Callable[[], float] | None = None) -> None:
    """Run a pending run to its end (called by a worker). Never raises for a bad run: every way it
    can end is one state and one message on the row.

    `clock` (monotonic seconds) drives the time limit, between steps and inside the allocator's
    search; default `allocation.services.monotonic`.
    """
    now = timezone.now()
    if not WhatIfRun.objects.filter(pk=run_id, state=RunState.PENDING).update(
        state=RunState.RUNNING, started_at=now, heartbeat_at=now, phase="reading the inventory", percent=0
    ):
        return  # cancelled before it started, reaped, or taken by another worker
    run = WhatIfRun.objects.get(pk=run_id)
    publish_run(run)
    clock = clock or monotonic
    reporter = _Reporter(run, clock)
    budget = Budget(deadline=reporter.deadline, max_search_steps=run.max_search_steps, monotonic=clock)
    heartbeat = _Heartbeat(run.pk)
    heartbeat.start()
    try:
        reporter("reading the inventory", 0, 1)
        snapshot = snapshot_load()
        WhatIfRun.objects.filter(pk=run.pk).update(snapshot_versions=snapshot.resource_versions)
        context = Context(snapshot=snapshot, now=now, progress=reporter, budget=budget)
        result = whatif_answer(kind=run.kind, input=run.input, context=context)
        if WhatIfRun.objects.filter(pk=run.pk, cancel_requested=True).exists():
            raise RunCancelled("cancelled")
        _finish(run.pk, RunState.SUCCEEDED, result=result)
    except RunCancelled:
        _finish(run.pk, RunState.CANCELLED, error="cancelled while running")
    except RunTimedOut as exc:
        _finish(run.pk, RunState.TIMED_OUT, error=str(exc))
    except SoftTimeLimitExceeded:
        _finish(
            run.pk, RunState.TIMED_OUT, error=f"stopped after the time limit of {run.time_limit_seconds} s"
        )
    except AllocationTimeout:
        _finish(run.pk, RunState.TIMED_OUT, error=_budget_message(run, budget))
    except WhatIfInputError as exc:
        _finish(run.pk, RunState.FAILED, error=str(exc))
    except AllocationError as exc:
        _finish(run.pk, RunState.FAILED, error=f"the allocator refused the question: {exc}")
    except (OperationalError, InterfaceError) as exc:
        log.warning("what-if run %s failed: the database is unavailable: %s", run.pk, exc)
        _finish_after_database_error(run.pk, database_unavailable_message(exc))
    except Exception as exc:
        log.exception("what-if run %s failed", run.pk)
        _finish(run.pk, RunState.FAILED, error=f"internal error: {type(exc).__name__}: {exc}")
    finally:
        heartbeat.stopped.set()
        heartbeat.join(timeout=HEARTBEAT_SECONDS * 2)


def database_unavailable_message(exc: BaseException) -> str:
    """A run's failure when the database did not answer it (the API's 503 says the same of a request)."""
    cause = str(exc).strip().splitlines()[0] if str(exc).strip() else "no answer"
    return (
        f"the database is unavailable (it did not answer: {type(exc).__name__}: {cause[:300]}); "
        "run the what-if again in a moment"
    )


#: tries at writing a run's end after the database failed it (HEARTBEAT_SECONDS apart)
FINISH_TRIES = 3


def _finish_after_database_error(run_id: Any, error: str) -> None:
    """End the run as failed on a new connection (the one that failed is broken), trying again a few
    times while the database is still away; if it never comes back, the reaper ends the run."""
    for attempt in range(FINISH_TRIES):
        connection.close()
        try:
            _finish(run_id, RunState.FAILED, error=error)
            return
        except (OperationalError, InterfaceError) as exc:
            log.warning("what-if run %s: could not write its failure (try %d): %s", run_id, attempt + 1, exc)
            time.sleep(HEARTBEAT_SECONDS)
    connection.close()


def _budget_message(run: WhatIfRun, budget: Budget) -> str:
    """Which budget the allocator's search ran out of: the run's time, or one attempt's steps."""
    if budget.deadline is not None and budget.monotonic() >= budget.deadline:
        return f"stopped after the time limit of {run.time_limit_seconds} s (inside the allocator's search)"
    return (
        f"stopped: one allocation attempt took more than {run.max_search_steps} search steps "
        "(DRADASH_WHATIF_MAX_SEARCH_STEPS); the question is too hard to answer exhaustively"
    )
