"""dradash settings: every knob is an environment variable, parsed strictly (see dradash/env.py)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from dradash.env import (
    ImproperlyConfiguredEnv,
    database_from_url,
    env_bool,
    env_choice,
    env_features,
    env_int,
    env_list,
    env_secret,
    env_str,
    local_secret_key,
)

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
    "drf_spectacular_sidecar",
    "axes",
    "django_htmx",
    "channels",
    "dradash",
    "inventory",
    "maintenance",
    "allocation",
    "migration",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "dradash.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "allocation.middleware.WhatIfFormBodyMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "dradash.middleware.ApiBodyLimitMiddleware",
    "dradash.middleware.RequestInputMiddleware",
    "dradash.middleware.DatabaseUnavailableMiddleware",
    "inventory.middleware.DataAgeMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "dradash.urls"
ASGI_APPLICATION = "dradash.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            # One way to show cluster strings ({{ v|k8s }}) and times ({% when t %}) on every page.
            "builtins": ["dradash.templatetags.dradash_format"],
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "dradash.context.roles",
                "inventory.context.data_status",
                "inventory.context.cluster_roles",
                "inventory.context.login_options",
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
# A websocket is closed after this long (less up to a tenth) and its page reconnects (0 = never): channel
# layers forget a group's members after a day (group_expiry), so it must stay under 86,400.
DRADASH_SOCKET_MAX_SECONDS = env_int("DRADASH_SOCKET_MAX_SECONDS", 43200, minimum=0)
if DRADASH_SOCKET_MAX_SECONDS >= 86400:
    raise ImproperlyConfiguredEnv(
        f"DRADASH_SOCKET_MAX_SECONDS must be under 86400 (a channel layer forgets a group's members after "
        f"a day), got {DRADASH_SOCKET_MAX_SECONDS}"
    )
if REDIS_URL:
    from dradash.channel_layer import redis_channel_layer

    CHANNEL_LAYERS = {"default": redis_channel_layer(REDIS_URL, capacity=CHANNEL_CAPACITY)}
else:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels.layers.InMemoryChannelLayer",
            "CONFIG": {"capacity": CHANNEL_CAPACITY},
        }
    }

# What-if runs. The run rows are their queue: the embedded worker (`manage.py whatif_worker`, a child
# process of the web server, so runs never compete with requests for the GIL) takes pending rows.
# With REDIS_URL (or a broker URL) runs also go to separate `celery -A dradash worker` processes.
CELERY_BROKER_URL = env_str("DRADASH_CELERY_BROKER_URL", REDIS_URL)
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ACKS_LATE = True
DRADASH_EMBEDDED_WORKER = env_bool("DRADASH_EMBEDDED_WORKER", not REDIS_URL)
DRADASH_WHATIF_TIME_LIMIT = env_int("DRADASH_WHATIF_TIME_LIMIT", 120, minimum=1)
DRADASH_WHATIF_MAX_SEARCH_STEPS = env_int("DRADASH_WHATIF_MAX_SEARCH_STEPS", 1_000_000, minimum=1)
DRADASH_WHATIF_MAX_RUNS_PER_USER = env_int("DRADASH_WHATIF_MAX_RUNS_PER_USER", 2, minimum=1)
DRADASH_WHATIF_WORKER_THREADS = env_int("DRADASH_WHATIF_WORKER_THREADS", 4, minimum=1)
# Every this many seconds a what-if worker brings its snapshot of the mirror (and the view every question
# starts from) up to date, from its start on, so a run finds them ready instead of reading the whole
# inventory first (0 = only when a run asks). It holds the snapshot in memory from the start.
DRADASH_WHATIF_WARM_SECONDS = env_int("DRADASH_WHATIF_WARM_SECONDS", 10, minimum=0)
# With Celery on Redis, a headroom over at least SHARD_MIN_NODES nodes is split into this many shards
# (a Celery group; 1 = never split), sent to SHARD_QUEUE (empty: Celery's default queue).
DRADASH_WHATIF_SHARDS = env_int("DRADASH_WHATIF_SHARDS", 4, minimum=1)
DRADASH_WHATIF_SHARD_MIN_NODES = env_int("DRADASH_WHATIF_SHARD_MIN_NODES", 2000, minimum=1)
DRADASH_WHATIF_SHARD_QUEUE = env_str("DRADASH_WHATIF_SHARD_QUEUE", "")

# The cluster: a kubeconfig path (and context), or in-cluster config when empty.
DRADASH_KUBECONFIG = env_str("DRADASH_KUBECONFIG", "")
DRADASH_KUBE_CONTEXT = env_str("DRADASH_KUBE_CONTEXT", "")
DRADASH_MIRROR_IN_PROCESS = env_bool("DRADASH_MIRROR_IN_PROCESS", False)
# The mirror compares a fresh list of every kind with the database this often (0 = never) and repairs
# what differs, like an informer's resync period but against the cluster itself.
DRADASH_MIRROR_RESYNC_SECONDS = env_int("DRADASH_MIRROR_RESYNC_SECONDS", 300, minimum=0)
# The mirror asks the API server for /version this often (0 = never); with no answer within the timeout it
# ends its watch streams, so the pages say the cluster does not answer at once instead of after the watches'
# two-minute inactivity timeout.
DRADASH_MIRROR_HEARTBEAT_SECONDS = env_int("DRADASH_MIRROR_HEARTBEAT_SECONDS", 15, minimum=0)
DRADASH_MIRROR_HEARTBEAT_TIMEOUT_SECONDS = env_int("DRADASH_MIRROR_HEARTBEAT_TIMEOUT_SECONDS", 10, minimum=1)
# Several mirror replicas: the one holding this coordination.k8s.io/v1 Lease mirrors, the others wait.
DRADASH_MIRROR_LEADER_ELECTION = env_bool("DRADASH_MIRROR_LEADER_ELECTION", False)
DRADASH_MIRROR_LEASE_NAME = env_str("DRADASH_MIRROR_LEASE_NAME", "dradash-mirror")
DRADASH_MIRROR_LEASE_NAMESPACE = env_str("DRADASH_MIRROR_LEASE_NAMESPACE", "default")
DRADASH_MIRROR_LEASE_DURATION_SECONDS = env_int("DRADASH_MIRROR_LEASE_DURATION_SECONDS", 15, minimum=2)
# The mirror process answers /healthz and /readyz (its role: leader or follower) on this port; 0 = no port.
DRADASH_MIRROR_PROBE_PORT = env_int("DRADASH_MIRROR_PROBE_PORT", 0, minimum=0)
# This process's name in the Lease (the chart passes the pod name); empty = host name + a random suffix.
DRADASH_POD_NAME = env_str("DRADASH_POD_NAME", "")
# The mirror is "fresh" when every kind was confirmed in sync within this many seconds (pages say so
# otherwise). /readyz of the web process reports it, and fails on it only with DRADASH_READY_REQUIRES_MIRROR.
DRADASH_READY_MAX_DATA_AGE_SECONDS = env_int("DRADASH_READY_MAX_DATA_AGE_SECONDS", 300, minimum=1)
DRADASH_READY_REQUIRES_MIRROR = env_bool("DRADASH_READY_REQUIRES_MIRROR", False)
# Writes to the cluster as the logged-in user (Impersonate-User/Group): the cluster's RBAC decides.
DRADASH_IMPERSONATION_ENABLED = env_bool("DRADASH_IMPERSONATION_ENABLED", False)
DRADASH_IMPERSONATION_USER_PREFIX = env_str("DRADASH_IMPERSONATION_USER_PREFIX", "")
DRADASH_IMPERSONATION_GROUP_PREFIX = env_str("DRADASH_IMPERSONATION_GROUP_PREFIX", "")
# When set, only these (prefixed) groups are asserted; empty = every group of the user.
DRADASH_IMPERSONATION_ALLOWED_GROUPS = env_list("DRADASH_IMPERSONATION_ALLOWED_GROUPS", [])
# How long the answer to "may this user create devicetaintrules?" (a SelfSubjectAccessReview) is reused.
DRADASH_ACCESS_REVIEW_CACHE_SECONDS = env_int("DRADASH_ACCESS_REVIEW_CACHE_SECONDS", 30, minimum=0)
DRADASH_LIVE_COALESCE_MS = env_int("DRADASH_LIVE_COALESCE_MS", 200, minimum=0)
DRADASH_MAX_STRING = env_int("DRADASH_MAX_STRING", 1024, minimum=64)
DRADASH_METRICS_TOKEN = env_secret("DRADASH_METRICS_TOKEN", "")
# The CEL engine for selectors (allocator, what-if runs, DeviceClass matching in the mirror); applied once at
# start-up by DradashConfig.ready. The names are dra.allocator.cel.BACKEND_NAMES (a test keeps them equal).
# The cluster's DRA feature gates beyond the 1.37 defaults, as the what-if allocator should assume them:
# a comma-separated list of gate names (DRADerivedAttributes, …) or "all".
DRADASH_FEATURES = env_features("DRADASH_FEATURES")
DRADASH_CEL_BACKEND = env_choice("DRADASH_CEL_BACKEND", "cel-expr-python", ("cel-expr-python", "cel-python"))
# One maintenance may select at most this many devices and compile to at most this many rules: a
# bigger change is split into several maintenances, each previewed and confirmed on its own.
DRADASH_MAINTENANCE_MAX_DEVICES = env_int("DRADASH_MAINTENANCE_MAX_DEVICES", 5000, minimum=1)
DRADASH_MAINTENANCE_MAX_RULES = env_int("DRADASH_MAINTENANCE_MAX_RULES", 500, minimum=1)
# The PDB-aware drain (maintenance/drain.py): a driver's lease on a drain, how long an eviction request may be
# in flight before its driver is taken for dead, and the back-off after a PDB refuses an eviction.
DRADASH_DRAIN_LEASE_SECONDS = env_int("DRADASH_DRAIN_LEASE_SECONDS", 15, minimum=1)
DRADASH_DRAIN_IN_FLIGHT_SECONDS = env_int("DRADASH_DRAIN_IN_FLIGHT_SECONDS", 90, minimum=1)
DRADASH_DRAIN_BACKOFF_SECONDS = env_int("DRADASH_DRAIN_BACKOFF_SECONDS", 1, minimum=1)
DRADASH_DRAIN_BACKOFF_MAX_SECONDS = env_int("DRADASH_DRAIN_BACKOFF_MAX_SECONDS", 10, minimum=1)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Login throttling (django-axes): after DRADASH_LOGIN_FAILURE_LIMIT wrong passwords in a row for one user
# name, that account is locked for DRADASH_LOGIN_COOLOFF_MINUTES — even for the right password.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("DRADASH_LOGIN_FAILURE_LIMIT", 10, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("DRADASH_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = ["username"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/lockout.html"
AXES_VERBOSE = False
# axes.W006 asks to lock by IP address too. Accounts are locked by name on purpose: behind an ingress or
# proxy every browser shares the proxy's address, and locking it would lock everybody out at once.
SILENCED_SYSTEM_CHECKS = ["axes.W006"]
# Log in through an OpenID Connect provider (mozilla-django-oidc; inventory/oidc.py maps claims to roles).
DRADASH_OIDC_ENABLED = env_bool("DRADASH_OIDC_ENABLED", False)
DRADASH_OIDC_USERNAME_CLAIM = env_str("DRADASH_OIDC_USERNAME_CLAIM", "email")
DRADASH_OIDC_GROUPS_CLAIM = env_str("DRADASH_OIDC_GROUPS_CLAIM", "groups")
DRADASH_OIDC_VIEWER_GROUPS = env_list("DRADASH_OIDC_VIEWER_GROUPS", [])
DRADASH_OIDC_OPERATOR_GROUPS = env_list("DRADASH_OIDC_OPERATOR_GROUPS", [])
DRADASH_OIDC_ADMIN_GROUPS = env_list("DRADASH_OIDC_ADMIN_GROUPS", [])
if DRADASH_OIDC_ENABLED:
    INSTALLED_APPS.append("mozilla_django_oidc")
    AUTHENTICATION_BACKENDS.insert(1, "inventory.oidc.DradashOIDCBackend")
    OIDC_RP_CLIENT_ID = env_str("DRADASH_OIDC_CLIENT_ID", "")
    OIDC_RP_CLIENT_SECRET = env_secret("DRADASH_OIDC_CLIENT_SECRET", "")
    OIDC_OP_AUTHORIZATION_ENDPOINT = env_str("DRADASH_OIDC_AUTHORIZATION_ENDPOINT", "")
    OIDC_OP_TOKEN_ENDPOINT = env_str("DRADASH_OIDC_TOKEN_ENDPOINT", "")
    OIDC_OP_USER_ENDPOINT = env_str("DRADASH_OIDC_USER_ENDPOINT", "")
    OIDC_OP_JWKS_ENDPOINT = env_str("DRADASH_OIDC_JWKS_ENDPOINT", "")
    OIDC_RP_SIGN_ALGO = env_str("DRADASH_OIDC_SIGN_ALGO", "RS256")
    OIDC_RP_SCOPES = env_str("DRADASH_OIDC_SCOPES", "openid email profile groups")
    OIDC_USE_PKCE = True
    _missing = [
        name
        for name, value in (
            ("DRADASH_OIDC_CLIENT_ID", OIDC_RP_CLIENT_ID),
            ("DRADASH_OIDC_AUTHORIZATION_ENDPOINT", OIDC_OP_AUTHORIZATION_ENDPOINT),
            ("DRADASH_OIDC_TOKEN_ENDPOINT", OIDC_OP_TOKEN_ENDPOINT),
            ("DRADASH_OIDC_USER_ENDPOINT", OIDC_OP_USER_ENDPOINT),
        )
        if not value
    ]
    if _missing:
        raise ImproperlyConfiguredEnv(f"DRADASH_OIDC_ENABLED=true needs {', '.join(_missing)}")
    if OIDC_RP_SIGN_ALGO.startswith("RS") and not OIDC_OP_JWKS_ENDPOINT:
        raise ImproperlyConfiguredEnv(
            f"DRADASH_OIDC_SIGN_ALGO={OIDC_RP_SIGN_ALGO} needs DRADASH_OIDC_JWKS_ENDPOINT"
        )
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

# Request bodies: Django refuses larger ones; the API answers them with a JSON 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DRADASH_MAX_BODY_BYTES", 5 * 1024 * 1024, minimum=1024)

REST_FRAMEWORK = {
    # Token first: its WWW-Authenticate header makes a missing or bad credential a 401, as HTTP wants.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "dradash.tokens.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_FILTER_BACKENDS": ["dradash.api.StrictFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "dradash.api.Pagination",
    "PAGE_SIZE": 100,
    "DEFAULT_PARSER_CLASSES": [
        "dradash.api.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "EXCEPTION_HANDLER": "dradash.api_errors.exception_handler",
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "dradash.api.ContentNegotiation",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "dradash API",
    "DESCRIPTION": "Kubernetes DRA inventory, what-if allocation and device maintenance.",
    "VERSION": "0.1.0",
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Swagger UI and ReDoc from the vendored drf-spectacular-sidecar package: no CDN (air-gapped clusters).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": f"{STATIC_URL}dradash/favicon.svg",  # the dashboard's, not Swagger's
    "REDOC_DIST": "SIDECAR",
    # Four models have a `state`: each set of choices gets its own name in the schema.
    "ENUM_NAME_OVERRIDES": {
        "ClaimStateEnum": "inventory.models.CLAIM_STATES",
        "WatchStateEnum": "inventory.models.WATCH_STATES",
        "MaintenanceStateEnum": "maintenance.models.Maintenance.STATES",
        "RunStateEnum": "allocation.models.RunState",
    },
    # Every operation also documents the error envelope (dradash.api) for 4xx answers.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "dradash.api_schema.add_error_responses",
    ],
}

# Behind TLS (directly or through a proxy that sets X-Forwarded-Proto): DRADASH_SECURE=true turns on
# secure cookies, HSTS, the HTTPS redirect and trusts the proxy's scheme header (`check --deploy` clean).
DRADASH_SECURE = env_bool("DRADASH_SECURE", False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy on every response (django-csp 4): nothing inline, nothing from elsewhere. Templates
# carry no <script> body, on*= handler or style="" attribute (tests/dradash/test_csp.py scans them); the
# websocket origin (ws:// or wss:// of the request's host) is added per request by the middleware, since
# older browsers do not count it as 'self'. The vendored API doc viewers relax style-src (dradash/urls.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "frame-ancestors": ["'none'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
    }
}
SESSION_COOKIE_HTTPONLY = True
if DRADASH_SECURE:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env_int("DRADASH_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("DRADASH_HSTS_PRELOAD", True)
    # Probes and in-cluster callers reach the pods over plain HTTP on the Service.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]

DRADASH_LOG_FORMAT = env_choice("DRADASH_LOG_FORMAT", "text", ("text", "json"))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "dradash.jsonlog.JsonFormatter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            **({"formatter": "json"} if DRADASH_LOG_FORMAT == "json" else {}),
        }
    },
    "root": {"handlers": ["console"], "level": env_str("DRADASH_LOG_LEVEL", "INFO")},
}

# Serve static files straight from the source folders too, so the demo needs no collectstatic step.
WHITENOISE_USE_FINDERS = True
