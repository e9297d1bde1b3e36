"""Settings for the test suite: same as production settings, with a fast password hasher.

DATABASE_URL and REDIS_URL still come from the environment, so the suite runs against SQLite +
in-memory channels by default and against PostgreSQL + Redis when .ci/run sets them.
"""

import os

from dradash.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DRADASH_EMBEDDED_WORKER = False  # tests start the worker they need explicitly
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# SQLite: test on a file, not pytest-django's shared-cache in-memory database. In shared-cache mode a
# reader that meets another thread's write fails at once with "database table is locked", while the
# product (mirror, worker and web threads on one file in WAL mode) waits for the lock, as here.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    (BASE_DIR / "var").mkdir(exist_ok=True)  # noqa: F405
    # One file per test process, so concurrent runs on one machine do not share (and corrupt) it.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / "var" / f"test-db-{os.getpid()}.sqlite3")}  # noqa: F405
