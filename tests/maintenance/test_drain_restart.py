"""A drain survives the process that drives it being killed (SIGKILL, mid-drain): a new `manage.py
drain_driver` process takes over once the dead one's lease runs out and finishes it, each pod evicted once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from allocation.supervisor import database_url
from inventory.kube import connect
from inventory.mirror.runner import Mirror, wait_for_sync
from maintenance import states
from maintenance.drain import maintenance_drain_start
from maintenance.models import AuditEntry, Drain, DrainPod
from simcluster.testing import run_simcluster
from tests.maintenance.drain_support import drain_ready, trainer_nodes

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def demo(tmp_path: Path, settings: Any) -> Iterator[Any]:
    with run_simcluster(topology="demo", kubeconfig_path=tmp_path / "kubeconfig", batch_delay=0.3) as cluster:
        assert cluster.controllers is not None and cluster.controllers.wait_idle(60)
        settings.DRADASH_KUBECONFIG = str(cluster.kubeconfig_path)
        settings.DRADASH_KUBE_CONTEXT = ""
        handle = Mirror(connect(str(cluster.kubeconfig_path))).start()
        assert wait_for_sync(handle, timeout=30)
        yield cluster
        handle.stop()


def _driver_process(kubeconfig: str) -> subprocess.Popen[bytes]:
    try:
        url = database_url()
    except ImproperlyConfigured as error:
        pytest.skip(f"a driver process needs a database it can open: {error}")
    env = {**os.environ, "DATABASE_URL": url, "DRADASH_KUBECONFIG": kubeconfig, "DRADASH_KUBE_CONTEXT": "",
           "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE") or "dradash.settings"}  # fmt: skip
    command = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "drain_driver", "--every", "0.3"]
    return subprocess.Popen(command, cwd=settings.BASE_DIR, env=env, stdout=subprocess.DEVNULL)


def _wait(what: str, condition: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_killing_the_driver_mid_drain_and_starting_another_finishes_it(demo: Any, operator: Any) -> None:
    m, run, phrase = drain_ready(operator, trainer_nodes(demo)[:1])  # four trainers and a server
    maintenance_drain_start(maintenance=m, user=operator, confirmed=True, typed=phrase, preview_id=run)
    pods = DrainPod.objects.filter(drain__maintenance=m)
    total = pods.exclude(state=states.NO_OWNER).count()
    assert total >= 4

    first = _driver_process(str(demo.kubeconfig_path))
    try:
        _wait("the first eviction", lambda: pods.filter(evicted_at__isnull=False).exists(), 60)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    drain = Drain.objects.get(maintenance=m)
    assert drain.state == Drain.RUNNING and drain.lease_owner  # killed mid-drain, holding its lease
    assert pods.filter(state__in=states.POD_TO_EVICT).exists()

    second = _driver_process(str(demo.kubeconfig_path))
    try:
        _wait("the drain to finish", lambda: Drain.objects.get(maintenance=m).state == Drain.COMPLETE, 120)
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=20)
    assert Drain.objects.get(maintenance=m).lease_owner != drain.lease_owner
    assert all(p.state in (states.RUNNING, states.NO_OWNER) for p in pods.all())
    accepted = list(
        AuditEntry.objects.filter(maintenance=m, action="eviction", outcome__status=201).values_list(
            "object_uid", flat=True
        )
    )
    assert len(accepted) == len(set(accepted)) == total
