"""The three roles. Membership is what counts: `dradash.context.user_can_author` reads the group names."""

from __future__ import annotations

from django.contrib.auth.models import Group

ROLE_NAMES = ("viewer", "operator", "admin")


def roles_ensure() -> list[str]:
    """Create the role groups that do not exist yet; return the names created."""
    created = []
    for name in ROLE_NAMES:
        _, was_created = Group.objects.get_or_create(name=name)
        if was_created:
            created.append(name)
    return created
