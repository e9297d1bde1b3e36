"""`manage.py mirror` as its own process: it syncs, then stops cleanly on SIGTERM."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_it_mirrors_until_sigterm_then_exits_cleanly(simcluster: Any, tmp_path: Path) -> None:
    db = tmp_path / "mirror.sqlite3"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{db}", "DJANGO_SETTINGS_MODULE": "dradash.settings"}
    assert manage("migrate", "--verbosity", "0", env=env).returncode == 0
    process = subprocess.Popen(
        [sys.executable, "manage.py", "mirror", "--kubeconfig", str(simcluster.kubeconfig_path)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        synced = 0
        while time.monotonic() < deadline and synced < 8:
            with sqlite3.connect(db) as conn:
                try:
                    synced = conn.execute(
                        "SELECT count(*) FROM inventory_watchstate WHERE state = 'synced'"
                    ).fetchone()[0]
                except sqlite3.OperationalError:
                    synced = 0
            time.sleep(0.1)
        assert synced >= 8, "every served kind should report synced"

        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()

    assert process.returncode == 0, err[-2000:]
    assert "stopped" in out
    with sqlite3.connect(db) as conn:
        states = {row[0] for row in conn.execute("SELECT state FROM inventory_watchstate")}
        devices = conn.execute("SELECT count(*) FROM inventory_device").fetchone()[0]
    assert states <= {"stopped"}
    assert devices > 0
