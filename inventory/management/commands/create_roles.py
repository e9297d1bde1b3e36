from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from inventory.roles import ROLE_NAMES, roles_ensure


class Command(BaseCommand):
    help = "Create the role groups viewer, operator and admin (idempotent; migrate also does it)."

    def handle(self, *args: Any, **options: Any) -> None:
        created = roles_ensure()
        if options["verbosity"] < 1:
            return
        for name in ROLE_NAMES:
            state = "created" if name in created else "exists"
            self.stdout.write(f"{name}: {state}")
