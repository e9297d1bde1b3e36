"""The value sets the chart is rendered with in these tests: the defaults and the switches that change what
the chart grants or runs. Each is what an operator would pass with --values."""

from __future__ import annotations

from typing import Any

EXTERNAL_SERVICES: dict[str, Any] = {
    "database": {"url": "postgres://dradash:s3cret@postgres.db.svc:5432/dradash"},
    "redis": {"url": "redis://:s3cret@redis.db.svc:6379/0"},
}
OIDC: dict[str, Any] = {
    "enabled": True,
    "clientId": "dradash",
    "clientSecret": "client-s3cret",
    "authorizationEndpoint": "https://idp.example.com/authorize",
    "tokenEndpoint": "https://idp.example.com/token",
    "userEndpoint": "https://idp.example.com/userinfo",
    "jwksEndpoint": "https://idp.example.com/jwks",
    "roleGroups": {"viewer": ["dra-viewers"], "operator": ["dra-operators", "sre"], "admin": ["dra-admins"]},
}

VALUE_SETS: dict[str, dict[str, Any]] = {
    "default": {},
    "external-db-redis": EXTERNAL_SERVICES,
    "existing-secrets": {
        "database": {"existingSecret": "pg-credentials", "existingSecretKey": "uri"},
        "redis": {"existingSecret": "redis-credentials"},
        "secretKey": {"existingSecret": "django-key", "existingSecretKey": "key"},
    },
    "impersonation": {
        **EXTERNAL_SERVICES,
        "impersonation": {"enabled": True, "groupPrefix": "oidc:", "userPrefix": "oidc:"},
        "oidc": OIDC,
    },
    "impersonation-restricted": {
        **EXTERNAL_SERVICES,
        "impersonation": {
            "enabled": True,
            "allowedUsers": ["alice@example.com", "bob@example.com"],
            "allowedGroups": ["oidc:sre"],
        },
    },
    "impersonation-legacy": {
        **EXTERNAL_SERVICES,
        "impersonation": {"enabled": True, "mode": "legacy", "allowedGroups": ["oidc:sre"]},
    },
    "drain-off": {**EXTERNAL_SERVICES, "drain": {"enabled": False}},
    "pool-status-off": {**EXTERNAL_SERVICES, "resourcePoolStatus": {"enabled": False}},
    "ingress": {
        **EXTERNAL_SERVICES,
        "ingress": {
            "enabled": True,
            "className": "nginx",
            "hosts": ["dradash.example.com", "dradash.internal"],
            "tls": [{"secretName": "dradash-tls", "hosts": ["dradash.example.com"]}],
        },
        "oidc": OIDC,
        "web": {"replicas": 3},
    },
    "single-mirror": {**EXTERNAL_SERVICES, "mirror": {"replicas": 1, "leaderElection": {"enabled": False}}},
}
