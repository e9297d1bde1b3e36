"""The database came back without commits it had acknowledged (a crash: the mirror commits with
`synchronous_commit = off`; a failover to an asynchronous replica). The reflectors went on past those
events and will not send them again, so the writer, finding WatchState behind what it committed once it
can write again, must not write on over the hole while every kind says "synced": it stops, and the
mirror started again resumes from what the database holds and replays what was lost."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import OperationalError

from inventory.kube import connect
from inventory.mirror.runner import Mirror, wait_for_sync
from inventory.models import KubeObject, WatchState
from tests.inventory.mirror.helpers import wait_for_db_to_equal_cluster, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_database_that_lost_acknowledged_commits_is_caught_up_by_a_resumed_mirror(
    simcluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = connect(str(simcluster.kubeconfig_path))
    handle = Mirror(client, inactivity_timeout=30).start()
    try:
        assert wait_for_sync(handle, timeout=30)
        first, second = (n["metadata"]["name"] for n in simcluster.store.list("nodes")[:2])
        before_state = WatchState.objects.get(kind="nodes").resource_version
        before_row = KubeObject.objects.filter(kind="nodes", name=first).values("resource_version", "raw")[0]

        simcluster.store.patch("nodes", first, {"metadata": {"labels": {"example.com/lost": "yes"}}})
        wait_until(lambda: ("nodes", first) in {("nodes", n) for n in _names_with_label("example.com/lost")})
        wait_until(handle.caught_up, what="the writer to catch up")
        # The crash: the database comes back as it was before that commit …
        KubeObject.objects.filter(kind="nodes", name=first).update(**before_row)
        WatchState.objects.filter(kind="nodes").update(resource_version=before_state)
        # … and the writer meets it through a broken connection.
        _break_the_next_write(monkeypatch)
        simcluster.store.patch("nodes", second, {"metadata": {"labels": {"example.com/after": "yes"}}})

        wait_until(lambda: not handle.is_alive(), what="the mirror to stop", timeout=20)
        assert WatchState.objects.get(kind="nodes").state != "synced"
    finally:
        handle.stop()
    monkeypatch.undo()

    resumed = Mirror(client, inactivity_timeout=30).start(resume=True)
    try:
        wait_for_db_to_equal_cluster(simcluster)
    finally:
        resumed.stop()


def _break_the_next_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer's next batch fails as on a connection the database closed; the ones after it go through."""
    real = Mirror._apply_ops
    calls = {"n": 0}

    def broken_once(self: Mirror, ops: list[Any]) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OperationalError("server closed the connection unexpectedly")
        real(self, ops)

    monkeypatch.setattr(Mirror, "_apply_ops", broken_once)


def _names_with_label(label: str) -> list[str]:
    return [
        name
        for name, labels in KubeObject.objects.filter(kind="nodes").values_list(
            "name", "raw__metadata__labels"
        )
        if label in (labels or {})
    ]


def test_the_mirror_command_fails_with_the_reason_when_the_database_lost_commits(
    simcluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`manage.py mirror` shares its stop event with the writer: when the writer stops itself over lost
    commits, the command must not exit 0 saying "stopped" as after a SIGTERM."""
    import threading

    from django.core.management.base import CommandError

    from inventory.management.commands.mirror import Command

    client = connect(str(simcluster.kubeconfig_path))
    started: list[Any] = []
    real_start = Mirror.start

    def keep(self: Mirror, *args: Any, **kwargs: Any) -> Any:
        started.append(real_start(self, *args, **kwargs))
        return started[-1]

    monkeypatch.setattr(Mirror, "start", keep)
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            Command()._run_single(client, threading.Event())
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    runner = threading.Thread(target=run)
    runner.start()
    try:
        wait_until(lambda: bool(started), what="the mirror to start")
        assert wait_for_sync(started[0], timeout=30)
        wait_until(started[0].caught_up, what="the writer to catch up")
        first = simcluster.store.list("nodes")[0]["metadata"]["name"]
        WatchState.objects.filter(kind="nodes").update(resource_version="1")  # behind what was committed
        _break_the_next_write(monkeypatch)
        simcluster.store.patch("nodes", first, {"metadata": {"labels": {"example.com/after": "yes"}}})
        runner.join(30)
    finally:
        if started:
            started[0].stop()
        runner.join(10)
    assert outcome and isinstance(outcome[0], CommandError), outcome
    assert "lost committed batches of nodes" in str(outcome[0])
