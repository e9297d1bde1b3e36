from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.dispatch import Signal

# Sent by the mirror after each batch commits: `changes` lists {kind, type, uid, name, namespace}.
# Other rooms (the maintenance audit log) react to what the cluster did without the mirror knowing them.
mirror_batch_committed = Signal()


def create_roles_after_migrate(sender: AppConfig, **kwargs: Any) -> None:
    """Every database (including each test database) gets the role groups once auth's tables exist."""
    from django.contrib.auth.models import Group

    from inventory.roles import ROLE_NAMES

    using = kwargs.get("using", "default")
    for name in ROLE_NAMES:
        Group.objects.using(using).get_or_create(name=name)
