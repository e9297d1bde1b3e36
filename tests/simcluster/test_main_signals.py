"""`python -m simcluster` stops on SIGTERM: its handler only notes the signal (one that set an Event
deadlocked inside the main thread's `Event.wait`, and simcluster outlived the demo that started it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_simcluster_stops_on_sigterm_however_often_it_is_sent(tmp_path: Path) -> None:
    """A burst of signals while it serves (a parent's death and a supervisor's): it stops once, cleanly."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "simcluster", "--topology", "demo", "--listen", "127.0.0.1:0",
         "--kubeconfig", str(tmp_path / "kubeconfig"), "--insecure-http", "--no-controllers"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "simcluster serving" in line, line
        for _ in range(20):  # all before its stop begins: during interpreter shutdown the default is back
            os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
