"""Settings for the test suite: same as production settings, with a fast password hasher.

DATABASE_URL and REDIS_URL still come from the environment, so the suite runs against SQLite +
in-memory channels by default and against PostgreSQL + Redis when .ci/run sets them.
"""

from dradash.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DRADASH_EMBEDDED_WORKER = False  # tests start the worker they need explicitly
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
