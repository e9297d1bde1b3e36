"""`manage.py create_api_token USER --name NAME`: a named API token for a user, its key printed once
(the same token the Tokens page makes: hashed at rest, listed and revocable there)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from dradash.tokens import TokenError, api_token_create


class Command(BaseCommand):
    help = "Make a named API token for a user and print its key (shown once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", required=True, help="what the token is for, e.g. ci-pipeline")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"username: no user {options['username']!r}")
        try:
            _, key = api_token_create(user=user, name=options["name"])
        except TokenError as error:
            raise CommandError(f"{error.field}: {error.message}") from error
        self.stdout.write(key)
