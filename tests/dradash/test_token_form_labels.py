"""The API tokens page names a refused field by the label the user sees on its form, then by the field:
"Name (name): you already have a token named 'ci'", not "name: …" in bold as if it were a label."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from dradash.views import TOKEN_LABELS
from tests.form_labels import error_names, form_label

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser() -> Client:
    client = Client()
    client.force_login(User.objects.create_user("ada", password="correct-horse-battery-staple-7"))
    return client


@pytest.mark.parametrize("names", [[""], ["ci", "ci"], ["x" * 101]])
def test_a_refused_name_is_named_by_its_label_on_the_form(browser: Client, names: list[str]) -> None:
    for name in names:
        response = browser.post("/accounts/tokens/", {"name": name})
    assert response.status_code == 400
    page = response.content.decode()
    refusal = page.split('id="token-error"')[1].split("</div>")[0]
    assert error_names(refusal) == [(form_label(page, "name"), "name")]
    assert form_label(page, "name") == TOKEN_LABELS["name"] == "Name"
