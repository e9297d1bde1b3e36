"""Run a simcluster inside a test: a free loopback port, a kubeconfig, everything stopped on exit."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from simcluster.app import SimCluster, start_simcluster

__all__ = ["SimCluster", "run_simcluster"]


@contextlib.contextmanager
def run_simcluster(
    topology: str | None = "tiny", kubeconfig_path: Path | None = None, **options: Any
) -> Iterator[SimCluster]:
    """Start simcluster on a free port with `topology` (None: empty) and write `kubeconfig_path`.

    Options: controllers (bool), history_size, bookmark_interval, default_watch_timeout, and anything
    else is passed to `simcluster.controllers.start_all` as its options.
    """
    cluster = start_simcluster(topology=topology, kubeconfig_path=kubeconfig_path, **options)
    try:
        yield cluster
    finally:
        cluster.stop()
