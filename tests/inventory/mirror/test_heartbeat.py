"""An API server that stops answering without closing anything (a hung kube-apiserver, a network path that
drops every packet) leaves each watch stream open and silent. Before the heartbeat, every kind stayed
"synced" — the pages showed the data as current — until the watches' two-minute inactivity timeout. The
mirror's heartbeat asks for /version and, with no answer, ends the streams: every kind turns "unreachable"
within seconds, and comes back "synced", with the changes made meanwhile, once the server answers.

Over a real simcluster behind a TCP forwarder that stops passing bytes (`TcpCut.freeze`, tests/faults.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inventory.kube import KubeClient, connect
from inventory.mirror.runner import Mirror, MirrorHandle, wait_for_sync
from inventory.models import KubeObject, WatchState
from inventory.selectors.status import mirror_status
from tests.faults import TcpCut
from tests.inventory.mirror.helpers import wait_until
from tests.inventory.mirror.test_watch import RULE

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def cut(simcluster: Any, tmp_path: Path) -> Iterator[tuple[TcpCut, str]]:
    proxy = TcpCut("127.0.0.1", simcluster.port)
    through = tmp_path / "through-cut-kubeconfig"
    text = Path(simcluster.kubeconfig_path).read_text()
    assert f":{simcluster.port}" in text
    through.write_text(text.replace(f":{simcluster.port}", f":{proxy.port}"))
    try:
        yield proxy, str(through)
    finally:
        proxy.restore()
        proxy.close()


def start(client: KubeClient, *, heartbeat_seconds: float) -> MirrorHandle:
    # the watches' inactivity timeout as in production: what the heartbeat must not wait for
    handle = Mirror(client, heartbeat_seconds=heartbeat_seconds, heartbeat_timeout=1).start()
    assert wait_for_sync(handle, timeout=30)
    return handle


def served_states() -> set[str]:
    return {state for state in WatchState.objects.values_list("state", flat=True) if state != "stopped"}


def wait_for_the_rule(what: str) -> None:
    name = RULE["metadata"]["name"]
    wait_until(
        lambda: KubeObject.objects.filter(kind="devicetaintrules", name=name).exists(), timeout=15, what=what
    )


def test_a_server_that_stops_answering_turns_every_kind_unreachable_within_seconds_and_back(
    simcluster: Any, cut: tuple[TcpCut, str]
) -> None:
    proxy, kubeconfig = cut
    handle = start(connect(kubeconfig), heartbeat_seconds=0.5)
    try:
        assert served_states() == {"synced"}

        proxy.freeze()
        wait_until(lambda: served_states() == {"unreachable"}, timeout=10, what="every kind unreachable")
        status = mirror_status()
        assert not status.current
        assert status.unreachable_since is not None
        errors = set(WatchState.objects.filter(state="unreachable").values_list("error", flat=True))
        assert any("did not answer GET /version within 1s" in e for e in errors), errors
        simcluster.store.create("devicetaintrules", RULE)

        proxy.restore()
        wait_until(lambda: served_states() == {"synced"}, timeout=30, what="every kind synced again")
        wait_for_the_rule("the rule made while the server did not answer")
        assert mirror_status().current
    finally:
        proxy.restore()
        handle.stop()


def test_an_answering_server_keeps_its_watches(simcluster: Any, cut: tuple[TcpCut, str]) -> None:
    """The heartbeat ends streams only when the server does not answer: on a healthy cluster every kind
    stays synced on the watch it opened (no error, no reconnect and re-check every heartbeat)."""
    _proxy, kubeconfig = cut
    client = connect(kubeconfig)
    ended: list[str] = []
    interrupt = client.interrupt_watches

    def spied(reason: str) -> int:
        ended.append(reason)
        return interrupt(reason)

    client.interrupt_watches = spied  # type: ignore[method-assign]
    handle = start(client, heartbeat_seconds=0.1)
    try:
        time.sleep(1.5)  # about fifteen heartbeats
        simcluster.store.create("devicetaintrules", RULE)
        wait_for_the_rule("the rule")
        assert ended == []
        assert served_states() == {"synced"}
        assert interrupt("the test") == len(handle.reflectors), "one open watch per kind"
    finally:
        handle.stop()
