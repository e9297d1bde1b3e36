"""The embedded worker is a process of its own: it answers runs outside the web process, is replaced
when it dies, ends its runs as failed when stopped, and goes away when its web process does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured

from allocation import services
from allocation.models import RunState, WhatIfRun
from allocation.supervisor import EmbeddedWorker, database_url, start_embedded_worker, stop_embedded_worker
from dradash.env import database_from_url
from tests.allocation import whatif_objects as o

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]


def wait_until(check: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {timeout} s")
        time.sleep(0.05)
    return value


def finished(run_id: Any) -> WhatIfRun:
    return wait_until(
        lambda: (r := WhatIfRun.objects.get(pk=run_id)).is_finished and r, f"run {run_id} finished"
    )


def ask(kind: str = "headroom", data: dict[str, Any] | None = None) -> WhatIfRun:
    user = User.objects.get_or_create(username="wes")[0]
    return services.whatif_run_create(
        kind=kind, input=data or {"source": "class", "deviceClassName": o.DRIVER}, user=user
    )


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@pytest.fixture
def worker() -> Iterator[EmbeddedWorker]:
    started = start_embedded_worker()
    yield started
    stop_embedded_worker()


def test_it_answers_runs_in_its_own_process(worker: EmbeddedWorker, monkeypatch: pytest.MonkeyPatch) -> None:
    def not_here(**kwargs: Any) -> dict[str, Any]:
        raise AssertionError("answered inside the web process")

    monkeypatch.setattr(services, "whatif_answer", not_here)  # this process's copy, not the worker's
    o.store(*o.small_cluster().values(), versions={"resourceslices": "7"})
    run = finished(ask().pk)
    assert (run.state, run.error) == (RunState.SUCCEEDED, "")
    assert run.result is not None and run.result["total"] == 3
    assert worker.pid is not None and worker.pid != os.getpid()


def test_it_starts_a_new_worker_when_the_old_one_dies_and_it_runs_what_was_queued_meanwhile(
    worker: EmbeddedWorker,
) -> None:
    first = wait_until(lambda: worker.pid, "worker started")
    os.kill(first, signal.SIGKILL)
    wait_until(lambda: worker.pid is None, "the worker gone")
    o.store(*o.small_cluster().values())
    queued = ask()  # nobody to wake: the pending row waits for the next worker
    second = wait_until(lambda: worker.pid not in (None, first) and worker.pid, "a new worker", timeout=60)
    assert worker.restarts == 1 and second != first
    assert finished(queued.pk).state == RunState.SUCCEEDED


def test_it_ends_the_runs_it_was_answering_as_failed_when_it_is_stopped(worker: EmbeddedWorker) -> None:
    o.store(o.device_class(), o.node("node-h"), o.gpu_slice("node-h", "A100", count=16))
    hard = o.claim("hard")
    hard["spec"]["devices"]["requests"] = [
        {"name": "a", "exactly": {"deviceClassName": o.DRIVER, "count": 8}},
        {"name": "b", "exactly": {"deviceClassName": o.DRIVER, "count": 9}},
    ]
    run = ask("feasibility", {"source": "yaml", "yaml": yaml.safe_dump(hard)})
    wait_until(lambda: WhatIfRun.objects.get(pk=run.pk).phase == "trying each node", "run busy")
    stop_embedded_worker()
    run.refresh_from_db()
    assert run.state == RunState.FAILED
    assert run.error.startswith("the what-if worker stopped (the server shut down or restarted)")


def test_it_hands_the_worker_the_database_this_process_uses(tmp_path: Path) -> None:
    pg = {"ENGINE": "django.db.backends.postgresql", "NAME": "test_dradash", "USER": "u", "PASSWORD": "p@ss:w/rd",
          "HOST": "db.example", "PORT": "6543"}  # fmt: skip
    back = database_from_url(database_url(pg), base_dir=tmp_path)
    fields = ("NAME", "USER", "PASSWORD", "HOST", "PORT")
    assert {k: back[k] for k in fields} == {k: pg[k] for k in fields}
    sqlite = {"ENGINE": "django.db.backends.sqlite3", "NAME": str(tmp_path / "db.sqlite3")}
    assert database_from_url(database_url(sqlite), base_dir=ROOT)["NAME"] == sqlite["NAME"]
    with pytest.raises(ImproperlyConfigured, match="in-memory SQLite"):
        database_url({"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"})


PARENT = """
import os, sys, time
import django
django.setup()
from allocation.supervisor import EmbeddedWorker
worker = EmbeddedWorker(threads=1)
worker.start()
while worker.pid is None:
    time.sleep(0.05)
print(worker.pid, flush=True)
time.sleep(600)
"""


def test_it_goes_away_when_its_web_process_is_killed() -> None:
    env = {**os.environ, "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "dradash.test_settings"}
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        wait_until(lambda: not alive(child), f"worker {child} gone after its parent was killed")
    finally:
        parent.kill()
        parent.wait()
