"""A simcluster process keeps its loaded world out of the cyclic garbage collector's walks (`gc.freeze`):
every full collection walked hundreds of thousands of long-lived dicts again (0.5 s each at `scale:3000`,
a quarter of the process's CPU in a 1,500-pod burst). Stopping gives them back, so that what a stopped
world leaves in cycles is collected."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

import simcluster.__main__ as simcluster_main
from simcluster.app import start_simcluster


def test_a_frozen_world_is_out_of_the_collectors_reach_until_the_cluster_stops(tmp_path: Path) -> None:
    before = gc.get_freeze_count()
    cluster = start_simcluster(topology="demo", controllers=False, insecure_http=True, freeze_world=True)
    try:
        frozen = gc.get_freeze_count()
        tracked = {id(o) for o in gc.get_objects()}
        # The world's objects are frozen: the store's objects are no longer among those a collection walks.
        assert frozen > before + 1000
        assert id(cluster.store) not in tracked
    finally:
        cluster.stop()
    assert gc.get_freeze_count() == 0
    assert id(cluster.store) in {id(o) for o in gc.get_objects()}


def test_a_cluster_started_without_freezing_leaves_the_collector_as_it_was(tmp_path: Path) -> None:
    before = gc.get_freeze_count()
    cluster = start_simcluster(topology="demo", controllers=False, insecure_http=True)
    try:
        assert gc.get_freeze_count() == before
    finally:
        cluster.stop()
    assert gc.get_freeze_count() == before


def test_python_m_simcluster_freezes_its_world(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def start(**kwargs: Any) -> Any:
        seen.update(kwargs)
        raise OSError(98, "Address already in use")  # stops main before it serves

    monkeypatch.setattr(simcluster_main, "start_simcluster", start)
    code = simcluster_main.main(
        ["--topology", "demo", "--listen", "127.0.0.1:0", "--kubeconfig", str(tmp_path / "kc")]
    )
    assert code == 2
    assert seen["freeze_world"] is True
