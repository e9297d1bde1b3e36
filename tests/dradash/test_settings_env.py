"""Settings come from the environment, parsed strictly: a typo fails at start-up with the variable's name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dradash.env import (
    ImproperlyConfiguredEnv,
    database_from_url,
    env_bool,
    env_choice,
    env_int,
    local_secret_key,
)


def test_it_refuses_a_boolean_that_is_not_true_or_false(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRADASH_DEBUG", "yes")
    with pytest.raises(ImproperlyConfiguredEnv, match="DRADASH_DEBUG must be 'true' or 'false'"):
        env_bool("DRADASH_DEBUG", False)
    monkeypatch.setenv("DRADASH_DEBUG", "TRUE")
    assert env_bool("DRADASH_DEBUG", False) is True


def test_it_refuses_a_non_integer_and_a_too_small_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRADASH_CHANNEL_CAPACITY", "lots")
    with pytest.raises(ImproperlyConfiguredEnv, match="must be an integer"):
        env_int("DRADASH_CHANNEL_CAPACITY", 5000, minimum=100)
    monkeypatch.setenv("DRADASH_CHANNEL_CAPACITY", "10")
    with pytest.raises(ImproperlyConfiguredEnv, match="must be >= 100"):
        env_int("DRADASH_CHANNEL_CAPACITY", 5000, minimum=100)


def test_it_reads_sqlite_and_postgres_urls_and_refuses_others(tmp_path: Path) -> None:
    assert database_from_url("sqlite:////tmp/x.sqlite3", base_dir=tmp_path)["NAME"] == "/tmp/x.sqlite3"
    pg = database_from_url("postgres://u:p%40ss@db.example:6543/dradash", base_dir=tmp_path)
    assert (pg["USER"], pg["PASSWORD"], pg["HOST"], pg["PORT"], pg["NAME"]) == (
        "u",
        "p@ss",
        "db.example",
        "6543",
        "dradash",
    )
    with pytest.raises(ImproperlyConfiguredEnv, match="DATABASE_URL must start with"):
        database_from_url("mysql://x/y", base_dir=tmp_path)


def test_it_makes_a_local_secret_once_and_keeps_it(tmp_path: Path) -> None:
    path = tmp_path / "var" / "secret-key"
    first = local_secret_key(path)
    assert len(first) >= 50 and local_secret_key(path) == first
    assert path.stat().st_mode & 0o777 == 0o600


def test_it_accepts_only_the_exact_names_of_a_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    choices = ("cel-expr-python", "cel-python")
    assert env_choice("DRADASH_CEL_BACKEND", "cel-expr-python", choices) == "cel-expr-python"
    monkeypatch.setenv("DRADASH_CEL_BACKEND", "cel-python")
    assert env_choice("DRADASH_CEL_BACKEND", "cel-expr-python", choices) == "cel-python"
    monkeypatch.setenv("DRADASH_CEL_BACKEND", "CEL-Python")
    with pytest.raises(
        ImproperlyConfiguredEnv, match="must be one of cel-expr-python, cel-python, got 'CEL-Python'"
    ):
        env_choice("DRADASH_CEL_BACKEND", "cel-expr-python", choices)


def _start_django(backend: str | None) -> subprocess.CompletedProcess[str]:
    """A fresh process that starts Django the way manage.py does and reports the allocator's CEL backend."""
    env = {k: v for k, v in os.environ.items() if k != "DRADASH_CEL_BACKEND"}
    env |= {"DJANGO_SETTINGS_MODULE": "dradash.settings", "DRADASH_SECRET_KEY": "test-only"}
    if backend is not None:
        env["DRADASH_CEL_BACKEND"] = backend
    code = (
        "import django; django.setup()\n"
        "from dra.allocator.selectors import default_backend; print(default_backend().engine.backend)"
    )
    root = Path(__file__).resolve().parents[2]
    return subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


def test_it_fails_at_start_up_on_a_misspelt_cel_backend() -> None:
    started = _start_django("cel_python")
    assert started.returncode != 0
    assert (
        "DRADASH_CEL_BACKEND must be one of cel-expr-python, cel-python, got 'cel_python'" in started.stderr
    )


def test_it_applies_the_cel_backend_setting_when_the_app_starts() -> None:
    assert _start_django(None).stdout.split() == ["cel-expr-python"]
    assert _start_django("cel-python").stdout.split() == ["cel-python"]


def test_a_sqlite_connection_keeps_statement_journals_in_memory_checkpoints_every_40_mb_and_caches_64_mb(
    tmp_path: Path,
) -> None:
    """What the mirror's bulk writes rely on (dradash.env): measured in bench/RESULTS.md."""
    import sqlite3

    options = database_from_url(f"sqlite:///{tmp_path}/db.sqlite3", base_dir=tmp_path)["OPTIONS"]
    connection = sqlite3.connect(str(tmp_path / "db.sqlite3"))
    connection.executescript(options["init_command"])
    names = ("journal_mode", "synchronous", "temp_store", "wal_autocheckpoint", "cache_size")
    pragmas = {name: connection.execute(f"PRAGMA {name}").fetchone()[0] for name in names}
    assert pragmas == {
        "journal_mode": "wal", "synchronous": 1, "temp_store": 2, "wal_autocheckpoint": 10000, "cache_size": -65536,
    }  # fmt: skip


def test_it_refuses_a_socket_lifetime_a_channel_layer_would_outlast() -> None:
    """Past a day the channel layers forget a socket's groups: such a lifetime would bring back the silent
    live page it exists to end."""
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "dradash.settings",
        "DRADASH_SECRET_KEY": "test-only",
        "DRADASH_SOCKET_MAX_SECONDS": "90000",
    }
    root = Path(__file__).resolve().parents[2]
    started = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert started.returncode != 0
    assert "DRADASH_SOCKET_MAX_SECONDS must be under 86400" in started.stderr
