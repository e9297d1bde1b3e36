"""With Celery (REDIS_URL set), a drain is driven by the drain driver every `celery -A dradash worker` runs
while it lives (maintenance.tasks, on worker_ready): a drain started through the API, with no driver in
the web process, is stepped to completion by a real worker process. Skipped without REDIS_URL (the
PostgreSQL + Redis run of the suite sets it)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from allocation.supervisor import database_url
from inventory.kube import connect
from inventory.mirror.runner import Mirror, wait_for_sync
from maintenance import states, wake
from maintenance.models import AuditEntry, Drain, DrainPod
from simcluster.testing import run_simcluster
from tests.celery_worker import celery_worker_process
from tests.maintenance.drain_support import TrainerWatch, drain_ready, healthy_trainers, trainer_nodes

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs REDIS_URL (a broker for Celery)"),
]

MIN_AVAILABLE = 10  # the demo's ml/trainer budget
# A queue of this test's own: another suite's worker on the same Redis database never takes its tasks,
# and this worker never takes theirs.
QUEUE = f"drain-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def demo(tmp_path: Path, settings: Any) -> Iterator[Any]:
    with run_simcluster(topology="demo", kubeconfig_path=tmp_path / "kubeconfig", batch_delay=0.3) as cluster:
        assert cluster.controllers is not None and cluster.controllers.wait_idle(60)
        settings.DRADASH_KUBECONFIG = str(cluster.kubeconfig_path)
        settings.DRADASH_KUBE_CONTEXT = ""
        handle = Mirror(connect(str(cluster.kubeconfig_path))).start()  # the web process's mirror
        assert wait_for_sync(handle, timeout=30)
        yield cluster
        handle.stop()


@pytest.fixture
def celery_worker(demo: Any, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    import redis

    url = os.environ["REDIS_URL"]
    try:
        redis.Redis.from_url(url).ping()
    except redis.exceptions.ConnectionError:
        pytest.fail(f"Redis is not reachable at {urlparse(url).netloc}; start it (scripts/services)")
    try:
        db = database_url()
    except ImproperlyConfigured as error:
        pytest.skip(f"a worker process needs a database it can open: {error}")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "dradash.test_settings", "DATABASE_URL": db, "REDIS_URL": url,
           "DRADASH_CELERY_BROKER_URL": url, "DRADASH_KUBECONFIG": str(demo.kubeconfig_path),
           "DRADASH_KUBE_CONTEXT": ""}  # fmt: skip
    with celery_worker_process(env=env, queue=QUEUE, log_path=tmp_path / "worker.log") as proc:
        _wait(
            tmp_path, "the worker to be ready", lambda: "ready." in (tmp_path / "worker.log").read_text(), 60
        )
        yield proc


def _wait(tmp_path: Path, what: str, condition: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            log = (tmp_path / "worker.log").read_text()[-3000:]
            raise AssertionError(f"timed out waiting for {what}; worker log:\n{log}")
        time.sleep(0.2)


def test_a_celery_worker_drives_a_drain_started_through_the_api_to_completion(
    demo: Any, celery_worker: subprocess.Popen[bytes], operator: Any, tmp_path: Path
) -> None:
    assert not wake._wakers, "no drain driver may run in this (the web) process"
    node = trainer_nodes(demo)[0]
    m, run, phrase = drain_ready(operator, [node])
    api = Client()
    api.force_login(operator)
    with TrainerWatch(str(demo.kubeconfig_path)) as watch:
        started = api.post(
            f"/api/maintenance/{m.id}/apply/",
            {"mode": "drain", "concurrency": 4, "confirm": True, "typed": phrase, "preview": run, "version": m.version},
            content_type="application/json",
        )  # fmt: skip
        assert started.status_code == 200, started.json()
        assert started.json()["drain"]["state"] == "running"
        _wait(
            tmp_path,
            "the drain to finish",
            lambda: Drain.objects.get(maintenance=m).state == Drain.COMPLETE,
            120,
        )
    drain = Drain.objects.get(maintenance=m)
    assert f"-{celery_worker.pid}-" in drain.lease_owner  # the worker's driver held it
    assert watch.seen and min(watch.seen) >= MIN_AVAILABLE, watch.seen
    pods = list(DrainPod.objects.filter(drain=drain))
    assert pods and all(p.state in (states.RUNNING, states.NO_OWNER) for p in pods)
    assert all(p.replacement_node and p.replacement_node != node for p in pods if p.state == states.RUNNING)
    accepted = list(
        AuditEntry.objects.filter(maintenance=m, action="eviction", outcome__status=201).values_list(
            "object_uid", flat=True
        )
    )
    assert len(accepted) == len(set(accepted)) == sum(1 for p in pods if p.state == states.RUNNING)
    body = api.get(f"/api/maintenance/{m.id}/").json()
    assert body["state"] == "applied" and body["applied_effect"] == "NoSchedule"
    assert body["drain"]["state"] == "complete"
    assert healthy_trainers(connect(str(demo.kubeconfig_path))) == 12
    # A worker stopping cleanly hands its drains back at once (worker_shutdown), not after its lease.
    celery_worker.send_signal(signal.SIGTERM)
    celery_worker.wait(timeout=30)
    assert Drain.objects.get(maintenance=m).lease_owner == ""
