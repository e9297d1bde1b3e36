"""Logins: throttled with a lockout and a cool-off (django-axes), strong passwords only."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.test import Client

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery-staple-7"


def attempt(client: Client, password: str) -> int:
    return client.post("/accounts/login/", {"username": "ada", "password": password}).status_code


def test_it_locks_an_account_after_repeated_wrong_passwords_even_for_the_right_one(settings) -> None:
    User.objects.create_user("ada", password=PASSWORD)
    client = Client()
    statuses = [attempt(client, f"wrong-{i}") for i in range(12)]
    assert statuses[0] == 200  # the form again, with an error
    assert 429 in statuses  # locked out before the twelfth try
    response = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD})
    assert response.status_code == 429
    assert b"Too many failed logins" in response.content
    assert "_auth_user_id" not in client.session


def test_it_lets_the_right_password_in_before_the_limit(settings) -> None:
    User.objects.create_user("ada", password=PASSWORD)
    client = Client()
    for i in range(settings.AXES_FAILURE_LIMIT - 1):
        assert attempt(client, f"wrong-{i}") == 200
    assert attempt(client, PASSWORD) == 302
    assert client.session.get("_auth_user_id")


def test_it_counts_failures_per_user_name_not_for_everyone(settings) -> None:
    User.objects.create_user("ada", password=PASSWORD)
    User.objects.create_user("bob", password=PASSWORD)
    client = Client()
    for i in range(settings.AXES_FAILURE_LIMIT + 1):
        attempt(client, f"wrong-{i}")
    response = client.post("/accounts/login/", {"username": "bob", "password": PASSWORD})
    assert response.status_code == 302


@pytest.mark.parametrize("password", ["12345678", "password123456", "ada-ada-ada", "short1!"])
def test_it_refuses_weak_passwords(password: str) -> None:
    with pytest.raises(ValidationError):
        validate_password(password, user=User(username="ada-ada-ada"))


def test_it_accepts_a_long_uncommon_password() -> None:
    validate_password(PASSWORD, user=User(username="ada"))
