"""A real `celery -A dradash worker` for the tests that need one (Redis runs only): started on a queue of its
own with the given environment, its output in `log_path`, stopped with SIGTERM (killed if it hangs)."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def celery_worker_process(
    *, env: dict[str, str], queue: str, log_path: Path
) -> Iterator[subprocess.Popen[bytes]]:
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "dradash", "worker", "--pool=solo", "--loglevel=INFO",
             "--without-mingle", "--without-gossip", "-n", f"{queue}@%h", "-Q", queue],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            yield proc
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
