"""Template context for every page: whether the mirrored data is current (the status banner)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest

from dradash.context import user_can_author
from inventory.access import user_may_author_rules
from inventory.selectors.status import mirror_status


def data_status(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"data_status": mirror_status()}


def cluster_roles(request: HttpRequest) -> dict[str, Any]:
    """With impersonation on, authoring controls show only when Kubernetes, asked as the user, would allow
    the writes too; the Django role still has to allow them (dradash.context.roles runs first)."""
    user = getattr(request, "user", None)
    if not settings.DRADASH_IMPERSONATION_ENABLED or user is None or not user_can_author(user):
        return {}
    return {"can_author": user_may_author_rules(user)}


def login_options(request: HttpRequest) -> dict[str, Any]:
    return {"oidc_enabled": settings.DRADASH_OIDC_ENABLED}
