"""dradash settings: every knob is an environment variable, parsed strictly (see dradash/env.py)."""

from __future__ import annotations

from pathlib import Path

from dradash.env import database_from_url, env_bool, env_int, env_list, env_secret, env_str, local_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DRADASH_DEBUG", False)
SECRET_KEY = env_secret("DRADASH_SECRET_KEY", "") or local_secret_key(BASE_DIR / "var" / "secret-key")
ALLOWED_HOSTS = env_list("DRADASH_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DRADASH_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "django_htmx",
    "channels",
    "dradash",
    "inventory",
    "maintenance",
    "allocation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "dradash.urls"
ASGI_APPLICATION = "dradash.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "dradash.context.roles",
            ],
        },
    },
]

DATABASES = {
    "default": database_from_url(env_str("DATABASE_URL", "sqlite:///var/db.sqlite3"), base_dir=BASE_DIR)
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", "")
CHANNEL_CAPACITY = env_int("DRADASH_CHANNEL_CAPACITY", 5000, minimum=100)
if REDIS_URL:
    # Measured: the default pool (100) and capacity (100) drop group messages silently under load.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "max_connections": 1000}],
                "capacity": CHANNEL_CAPACITY,
                "expiry": 60,
            },
        }
    }
else:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels.layers.InMemoryChannelLayer",
            "CONFIG": {"capacity": CHANNEL_CAPACITY},
        }
    }

# Celery: with REDIS_URL, a real broker and separate workers; without, an in-process worker thread
# on the in-memory transport (never task_always_eager: it would block every websocket of the process).
CELERY_BROKER_URL = env_str("DRADASH_CELERY_BROKER_URL", REDIS_URL or "memory://")
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ACKS_LATE = True
DRADASH_EMBEDDED_WORKER = env_bool("DRADASH_EMBEDDED_WORKER", not REDIS_URL)
DRADASH_WHATIF_TIME_LIMIT = env_int("DRADASH_WHATIF_TIME_LIMIT", 120, minimum=1)

# The cluster: a kubeconfig path (and context), or in-cluster config when empty.
DRADASH_KUBECONFIG = env_str("DRADASH_KUBECONFIG", "")
DRADASH_KUBE_CONTEXT = env_str("DRADASH_KUBE_CONTEXT", "")
DRADASH_MIRROR_IN_PROCESS = env_bool("DRADASH_MIRROR_IN_PROCESS", False)
DRADASH_LIVE_COALESCE_MS = env_int("DRADASH_LIVE_COALESCE_MS", 200, minimum=0)
DRADASH_MAX_STRING = env_int("DRADASH_MAX_STRING", 1024, minimum=64)
# One maintenance may select at most this many devices and compile to at most this many rules: a
# bigger change is split into several maintenances, each previewed and confirmed on its own.
DRADASH_MAINTENANCE_MAX_DEVICES = env_int("DRADASH_MAINTENANCE_MAX_DEVICES", 5000, minimum=1)
DRADASH_MAINTENANCE_MAX_RULES = env_int("DRADASH_MAINTENANCE_MAX_RULES", 500, minimum=1)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "var" / "staticfiles"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "dradash API",
    "DESCRIPTION": "Kubernetes DRA inventory, what-if allocation and device maintenance.",
    "VERSION": "0.1.0",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("DRADASH_LOG_LEVEL", "INFO")},
}

# Serve static files straight from the source folders too, so the demo needs no collectstatic step.
WHITENOISE_USE_FINDERS = True
