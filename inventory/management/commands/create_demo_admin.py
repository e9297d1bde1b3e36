from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandParser

from inventory.roles import roles_ensure


class Command(BaseCommand):
    help = (
        "Create (or reset) the demo user in the admin group and print its password once. "
        "For real users use `manage.py createsuperuser` or the admin site and add them to a role group."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default="admin")
        parser.add_argument("--password", default="", help="default: a generated one, printed once")

    def handle(self, *args: Any, **options: Any) -> None:
        username: str = options["username"]
        password: str = options["password"] or secrets.token_urlsafe(12)
        roles_ensure()
        user_model = get_user_model()
        user, created = user_model.objects.get_or_create(username=username)
        user.set_password(password)
        user.is_staff = True
        user.is_superuser = True
        user.save()
        user.groups.add(Group.objects.get(name="admin"))
        verb = "created" if created else "reset"
        self.stdout.write(f"demo admin {verb}: username={username} password={password}")
