"""The worker loop takes pending runs oldest first, never more at once than it has threads, never the
same run twice, and a run that frees a thread lets the next one start."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection

from allocation.models import RunState, WhatIfRun
from allocation.worker import Worker

pytestmark = pytest.mark.django_db(transaction=True)


def wait_until(check: Callable[[], Any], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {timeout} s")
        time.sleep(0.02)


class Gate:
    """An `execute` that takes the run like the real one and then waits until the test lets it end."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.release: dict[str, threading.Event] = {}
        self.lock = threading.Lock()

    def __call__(self, run_id: str) -> None:
        taken = WhatIfRun.objects.filter(pk=run_id, state=RunState.PENDING).update(state=RunState.RUNNING)
        assert taken, f"run {run_id} handed out twice"
        with self.lock:
            self.started.append(run_id)
            event = self.release.setdefault(run_id, threading.Event())
        event.wait(20)
        WhatIfRun.objects.filter(pk=run_id).update(state=RunState.SUCCEEDED)
        connection.close()

    def let_go(self, run_id: str) -> None:
        with self.lock:
            self.release.setdefault(run_id, threading.Event()).set()


@pytest.fixture
def gate() -> Iterator[tuple[Worker, Gate]]:
    execute = Gate()
    worker = Worker(threads=2, poll_seconds=0.05, execute=execute)
    loop = threading.Thread(target=worker.run, daemon=True)
    loop.start()
    yield worker, execute
    for run_id in list(execute.release):
        execute.let_go(run_id)
    worker.stop.set()
    worker.wake.set()
    loop.join(10)


def pending(n: int) -> list[str]:
    return [
        str(WhatIfRun.objects.create(kind="headroom", input={}, time_limit_seconds=60).pk) for _ in range(n)
    ]


def test_it_runs_at_most_as_many_runs_as_it_has_threads_oldest_first(gate: tuple[Worker, Gate]) -> None:
    worker, execute = gate
    first, second, third = pending(3)
    wait_until(lambda: len(execute.started) == 2, "two runs started")
    assert set(execute.started) == {first, second}  # the two oldest
    assert WhatIfRun.objects.get(pk=third).state == RunState.PENDING  # waits for a free thread
    execute.let_go(first)
    wait_until(lambda: len(execute.started) == 3, "the third run started once a thread was free")
    assert execute.started[2] == third
    assert sorted(worker.in_flight()) == sorted([second, third])
