from __future__ import annotations

from typing import Any

from django.http import HttpRequest

AUTHOR_GROUPS = ("operator", "admin")
ADMIN_GROUP = "admin"


def user_can_author(user: Any) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    if getattr(user, "is_superuser", False):
        return True
    return bool(user.groups.filter(name__in=AUTHOR_GROUPS).exists())


def user_is_admin(user: Any) -> bool:
    """Superusers and members of `admin`: the only users shown values that can hold credentials."""
    if not getattr(user, "is_authenticated", False):
        return False
    if getattr(user, "is_superuser", False):
        return True
    return bool(user.groups.filter(name=ADMIN_GROUP).exists())


def roles(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    return {"can_author": user_can_author(user) if user is not None else False}
