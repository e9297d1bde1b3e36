"""OIDC login (mozilla-django-oidc): claims become a user, dradash roles come only from the configured
group lists, the provider's groups are what impersonation asserts, and DRADASH_OIDC_* configure it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from inventory.access import kube_identity
from inventory.kube import Identity
from inventory.oidc import DradashOIDCBackend

ROOT = Path(__file__).resolve().parent.parent.parent
pytestmark = pytest.mark.django_db


@pytest.fixture
def oidc(settings: Any) -> Any:
    settings.DRADASH_OIDC_USERNAME_CLAIM = "email"
    settings.DRADASH_OIDC_GROUPS_CLAIM = "groups"
    settings.DRADASH_OIDC_VIEWER_GROUPS = ["staff"]
    settings.DRADASH_OIDC_OPERATOR_GROUPS = ["sre"]
    settings.DRADASH_OIDC_ADMIN_GROUPS = ["platform-leads"]
    # What dradash/settings.py sets from DRADASH_OIDC_* (the backend reads them when it is made).
    settings.OIDC_OP_TOKEN_ENDPOINT = "https://idp.example.com/token"
    settings.OIDC_OP_USER_ENDPOINT = "https://idp.example.com/userinfo"
    settings.OIDC_OP_JWKS_ENDPOINT = "https://idp.example.com/jwks"
    settings.OIDC_RP_CLIENT_ID = "dradash"
    settings.OIDC_RP_CLIENT_SECRET = "s3cret"
    settings.OIDC_RP_SIGN_ALGO = "RS256"
    return settings


def roles(user: User) -> set[str]:
    return set(user.groups.values_list("name", flat=True))


def test_it_creates_the_user_from_the_username_claim_with_the_roles_its_groups_map_to(oidc: Any) -> None:
    backend = DradashOIDCBackend()
    claims = {"email": "alice@example.com", "groups": ["staff", "sre", "admin"]}

    assert backend.verify_claims(claims)
    user = backend.create_user(claims)

    assert user.username == "alice@example.com"
    assert roles(user) == {"viewer", "operator"}  # the provider's "admin" group is no dradash admin
    assert list(backend.filter_users_by_claims(claims)) == [user]


def test_it_moves_the_roles_with_the_groups_on_every_login(oidc: Any) -> None:
    backend = DradashOIDCBackend()
    user = backend.create_user({"email": "bob@example.com", "groups": ["staff", "sre"]})

    backend.update_user(user, {"email": "bob@example.com", "groups": ["staff"]})

    assert roles(user) == {"viewer"}


def test_a_deactivated_user_signed_in_through_oidc_loses_the_dashboard_at_the_next_request(
    oidc: Any, client: Any
) -> None:
    oidc.AUTHENTICATION_BACKENDS = [*oidc.AUTHENTICATION_BACKENDS, "inventory.oidc.DradashOIDCBackend"]
    user = DradashOIDCBackend().create_user({"email": "olga@example.com", "groups": ["sre"]})
    client.force_login(user, backend="inventory.oidc.DradashOIDCBackend")
    assert client.get("/devices/").status_code == 200

    User.objects.filter(pk=user.pk).update(is_active=False)

    answer = client.get("/devices/")
    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")
    assert client.get("/api/devices/").status_code in (401, 403)


def test_it_refuses_a_login_without_the_username_claim_or_any_mapped_group(oidc: Any) -> None:
    backend = DradashOIDCBackend()
    assert not backend.verify_claims({"groups": ["staff"]})
    assert not backend.verify_claims({"email": "eve@example.com", "groups": ["contractors"]})
    oidc.DRADASH_OIDC_VIEWER_GROUPS = []  # empty: every provider user may look
    assert backend.verify_claims({"email": "eve@example.com", "groups": ["contractors"]})


def test_it_impersonates_with_the_providers_groups_and_the_configured_prefixes(oidc: Any) -> None:
    oidc.DRADASH_IMPERSONATION_ENABLED = True
    oidc.DRADASH_IMPERSONATION_USER_PREFIX = "oidc:"
    oidc.DRADASH_IMPERSONATION_GROUP_PREFIX = "oidc:"
    user = DradashOIDCBackend().create_user({"email": "alice@example.com", "groups": ["sre", "staff"]})

    assert kube_identity(user) == Identity("oidc:alice@example.com", ("oidc:sre", "oidc:staff"))
    oidc.DRADASH_IMPERSONATION_ALLOWED_GROUPS = ["oidc:sre"]
    assert kube_identity(user) == Identity("oidc:alice@example.com", ("oidc:sre",))
    oidc.DRADASH_IMPERSONATION_ENABLED = False
    assert kube_identity(user) is None


def settings_in_a_fresh_process(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    script = """
import json, django
django.setup()
from django.conf import settings
from django.urls import reverse
print(json.dumps({"apps": "mozilla_django_oidc" in settings.INSTALLED_APPS,
                  "backends": settings.AUTHENTICATION_BACKENDS, "client": settings.OIDC_RP_CLIENT_ID,
                  "secret": settings.OIDC_RP_CLIENT_SECRET, "scopes": settings.OIDC_RP_SCOPES,
                  "login": reverse("oidc_authentication_init")}))
"""
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "DJANGO_SETTINGS_MODULE": "dradash.settings",
             "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "DRADASH_SECRET_KEY": "k" * 50, **env},
    )  # fmt: skip


def test_it_configures_mozilla_django_oidc_from_the_environment(tmp_path: Path) -> None:
    secret = tmp_path / "client-secret"
    secret.write_text("s3cret\n")
    result = settings_in_a_fresh_process(
        tmp_path,
        DRADASH_OIDC_ENABLED="true",
        DRADASH_OIDC_CLIENT_ID="dradash",
        DRADASH_OIDC_CLIENT_SECRET_FILE=str(secret),
        DRADASH_OIDC_AUTHORIZATION_ENDPOINT="https://idp.example.com/auth",
        DRADASH_OIDC_TOKEN_ENDPOINT="https://idp.example.com/token",
        DRADASH_OIDC_USER_ENDPOINT="https://idp.example.com/userinfo",
        DRADASH_OIDC_JWKS_ENDPOINT="https://idp.example.com/jwks",
        DRADASH_OIDC_SCOPES="openid email groups",
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["apps"] and "inventory.oidc.DradashOIDCBackend" in seen["backends"]
    assert (seen["client"], seen["secret"], seen["scopes"]) == ("dradash", "s3cret", "openid email groups")
    assert seen["login"] == "/oidc/authenticate/"


def test_it_refuses_to_start_with_oidc_on_and_an_endpoint_missing(tmp_path: Path) -> None:
    result = settings_in_a_fresh_process(
        tmp_path, DRADASH_OIDC_ENABLED="true", DRADASH_OIDC_CLIENT_ID="dradash"
    )
    assert result.returncode != 0
    assert "DRADASH_OIDC_AUTHORIZATION_ENDPOINT" in result.stderr
