"""An empty Claims table says why: no claim in the mirror yet, or none matching the filters (with a link to
every claim). It read "No claims match." on a fresh cluster, where no filter was set."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.inventory import factories as f
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def client() -> Client:
    c = Client()
    c.force_login(make_user("viewer"))
    return c


def test_claims_on_a_fresh_cluster_say_there_are_none_yet(client: Client) -> None:
    html = client.get("/claims/").content.decode()
    assert "No ResourceClaims in the mirror yet." in html
    assert "match" not in html[html.index('id="claims-empty"') :][:200]


def test_claims_filtered_to_nothing_say_so_and_offer_every_claim(client: Client) -> None:
    f.write(("resourceclaims", f.claim("train-0")))
    html = client.get("/claims/", {"q": "nothing-like-this"}).content.decode()
    assert 'No claims match these filters. <a href="/claims/">Show every claim</a>' in html
