"""`manage.py demo` as an operator runs it: it comes up, and a SIGTERM (or its death) takes simcluster with it,
so the next start finds its ports free."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _wait(predicate: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_stopping_the_demo_stops_its_simulated_cluster(tmp_path: Path, sig: signal.Signals) -> None:
    web, cluster = _free_port(), _free_port()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}"}
    env.pop("REDIS_URL", None)
    log = (tmp_path / "demo.log").open("wb")
    demo = subprocess.Popen(
        [sys.executable, "manage.py", "demo", "--port", str(web), "--cluster-port", str(cluster),
         "--admin-password", "demo-test-password-1"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        assert _wait(lambda: _listening(web) and _listening(cluster), 120), (
            tmp_path / "demo.log"
        ).read_text()
        demo.send_signal(sig)
        demo.wait(timeout=30)
        assert _wait(lambda: not _listening(cluster), 15), "simcluster outlived the demo"
        assert not _listening(web)
        if sig == signal.SIGTERM:  # an orderly stop: the mirror before the cluster, and it says so
            said = (tmp_path / "demo.log").read_text()
            assert "check failed" not in said, said[-2000:]
            assert said.rstrip().endswith("demo stopped"), said[-2000:]
    finally:
        if demo.poll() is None:
            demo.kill()
