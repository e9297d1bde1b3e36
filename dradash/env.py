"""Strict environment parsing: a typo in a setting fails at start-up, never silently."""

from __future__ import annotations

import os
from pathlib import Path

from dra.allocator.errors import AllocationError
from dra.allocator.features import parse_feature_list


class ImproperlyConfiguredEnv(ValueError):
    """An environment variable holds a value its setting does not accept."""


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() == "true":
        return True
    if raw.lower() == "false":
        return False
    raise ImproperlyConfiguredEnv(f"{name} must be 'true' or 'false', got {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfiguredEnv(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfiguredEnv(f"{name} must be >= {minimum}, got {value}")
    return value


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """One of ``choices``, spelled exactly; anything else fails at start-up naming the choices."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw not in choices:
        raise ImproperlyConfiguredEnv(f"{name} must be one of {', '.join(choices)}, got {raw!r}")
    return raw


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_features(name: str) -> frozenset[str]:
    """DRA feature gates: the 1.37 defaults plus a comma-separated list of gate names, or "all"."""
    try:
        return parse_feature_list(os.environ.get(name, ""))
    except AllocationError as error:
        raise ImproperlyConfiguredEnv(f"{name}: {error}") from None


def env_secret(name: str, default: str) -> str:
    """Read NAME, or the file named by NAME_FILE (for mounted secrets)."""
    file_name = os.environ.get(f"{name}_FILE")
    if file_name:
        return Path(file_name).read_text().strip()
    return os.environ.get(name, default)


def local_secret_key(path: Path) -> str:
    """Without DRADASH_SECRET_KEY: a random key made once and kept in `path` (mode 0600), so a demo or a
    single-host install needs no configuration and sessions survive restarts — never a key in the code."""
    import secrets

    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as handle:
        handle.write(key)
    return key


def database_from_url(url: str, *, base_dir: Path) -> dict[str, object]:
    """Turn DATABASE_URL (sqlite:///path or postgres://user:pass@host:port/name) into a DATABASES entry."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        # sqlite:////abs/path (absolute), sqlite:///rel/path (relative to the project), sqlite:///:memory:
        rest = unquote(url.split("://", 1)[1])[1:] if url.startswith("sqlite:///") else ""
        if rest == ":memory:":
            name = ":memory:"
        elif rest.startswith("/"):
            name = rest
        else:
            name = str(base_dir / (rest or "db.sqlite3"))
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": name,
            # Several threads write (mirror, worker, web): IMMEDIATE transactions take the write lock up
            # front and wait for it, instead of failing at once when a read transaction tries to write.
            # temp_store=MEMORY: the statement journal each row of a bulk upsert opens (the device table
            # has triggers) stays in memory instead of a temporary file: 30,000 device rows 5.2 → 2.8 s.
            # wal_autocheckpoint=10000 pages (40 MB of WAL, not 4 MB): an index page the mirror's pages of
            # a list all touch is copied back to the database once per checkpoint, and with the default
            # that was once per commit: 30,000 device rows in 60 commits 5.7 → 3.6–4.2 s.
            # cache_size=-65536 (64 MiB of pages, allocated as used; the default is 2 MiB): at 100,000
            # devices the indexes' pages no longer fit the default, and every insert read them back from
            # the WAL or the file: the initial sync 46.5 → 38.8 s (claims 5.7 → 4.6 s); no change at 10,000.
            "OPTIONS": {
                "timeout": 30,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA temp_store=MEMORY; "
                "PRAGMA wal_autocheckpoint=10000; PRAGMA cache_size=-65536;",
            },
        }
    if parsed.scheme in ("postgres", "postgresql"):
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parsed.path.lstrip("/")),
            "USER": unquote(parsed.username or ""),
            "PASSWORD": unquote(parsed.password or ""),
            "HOST": parsed.hostname or "",
            "PORT": str(parsed.port or ""),
            "CONN_MAX_AGE": 0,
        }
    raise ImproperlyConfiguredEnv(
        f"DATABASE_URL must start with sqlite:// or postgres://, got scheme {parsed.scheme!r}"
    )
