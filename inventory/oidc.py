"""Log in through an OpenID Connect provider (mozilla-django-oidc), with DRADASH_OIDC_ENABLED=true.

The user name is the DRADASH_OIDC_USERNAME_CLAIM claim (default email). On every login the user's dradash
roles are set from the provider's groups (DRADASH_OIDC_GROUPS_CLAIM) through DRADASH_OIDC_VIEWER_GROUPS,
_OPERATOR_GROUPS and _ADMIN_GROUPS (an empty viewer list makes every provider user a viewer; a user whom
no list names may not log in), and the provider's groups are kept (`ExternalGroups`) as the groups dradash
asserts when it impersonates the user.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from inventory.models import ExternalGroups
from inventory.roles import ROLE_NAMES

log = logging.getLogger(__name__)


def provider_groups(claims: dict[str, Any]) -> list[str]:
    raw = claims.get(settings.DRADASH_OIDC_GROUPS_CLAIM) or []
    if isinstance(raw, str):
        raw = [raw]
    return sorted({str(g) for g in raw if isinstance(g, str | int) and str(g)})


def roles_for(groups: list[str]) -> list[str]:
    """dradash roles (viewer, operator, admin) the provider's groups give."""
    mapping = {
        "viewer": settings.DRADASH_OIDC_VIEWER_GROUPS,
        "operator": settings.DRADASH_OIDC_OPERATOR_GROUPS,
        "admin": settings.DRADASH_OIDC_ADMIN_GROUPS,
    }
    given = set(groups)
    roles = [role for role, names in mapping.items() if given & set(names)]
    if not mapping["viewer"]:
        roles.append("viewer")
    return sorted(set(roles))


class DradashOIDCBackend(OIDCAuthenticationBackend):  # type: ignore[misc]
    def get_username(self, claims: dict[str, Any]) -> str:
        return str(claims.get(settings.DRADASH_OIDC_USERNAME_CLAIM) or "")[:150]

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        if not self.get_username(claims):
            log.warning("OIDC login refused: no %r claim", settings.DRADASH_OIDC_USERNAME_CLAIM)
            return False
        if not roles_for(provider_groups(claims)):
            log.warning(
                "OIDC login of %s refused: no group maps to a dradash role", self.get_username(claims)
            )
            return False
        return True

    def get_user(self, user_id: Any) -> Any:
        """The session's user, while active: mozilla-django-oidc's returns a deactivated one too, so an
        operator an admin deactivated kept every page until the session ended (ModelBackend refuses them)."""
        user = super().get_user(user_id)
        return user if user is not None and user.is_active else None

    def filter_users_by_claims(self, claims: dict[str, Any]) -> Any:
        return self.UserModel.objects.filter(username=self.get_username(claims))

    def create_user(self, claims: dict[str, Any]) -> Any:
        user = self.UserModel.objects.create_user(self.get_username(claims), email=claims.get("email") or "")
        return self.update_user(user, claims)

    def update_user(self, user: Any, claims: dict[str, Any]) -> Any:
        groups = provider_groups(claims)
        roles = roles_for(groups)
        keep = [g for g in user.groups.all() if g.name not in ROLE_NAMES]
        user.groups.set([*keep, *(Group.objects.get_or_create(name=role)[0] for role in roles)])
        ExternalGroups.objects.update_or_create(user=user, defaults={"groups": groups})
        return user
