"""DRADASH_SECURE=true makes `manage.py check --deploy` clean: secure cookies, HSTS, the proxy's scheme."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def deploy_check(extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "dradash.settings",
        "DRADASH_SECRET_KEY": "k" * 10 + "-random-enough-for-the-check-" + "Zq8#xV2!pL" * 4,
        "DRADASH_ALLOWED_HOSTS": "dradash.example.com",
        "DRADASH_DEBUG": "false",
        **extra,
    }
    env.pop("DATABASE_URL", None)
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--tag", "security", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_passes_the_deploy_check_with_dradash_secure() -> None:
    result = deploy_check({"DRADASH_SECURE": "true"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_it_warns_without_dradash_secure() -> None:
    result = deploy_check({"DRADASH_SECURE": "false"})
    assert result.returncode != 0
    for warning in ("W004", "W008", "W012", "W016"):
        assert warning in result.stdout + result.stderr
