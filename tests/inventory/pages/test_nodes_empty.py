"""The Nodes page's empty table says why it is empty: a filter that matches no node names the filter and
offers every node; a mirror with no node says so. It read "No nodes." either way, as if the cluster had none
while the filter box above still held a typo."""

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


def test_a_filter_that_matches_no_node_says_so_and_offers_every_node(client: Client) -> None:
    f.write(("nodes", f.node("worker-0")))
    html = client.get("/nodes/", {"q": "<zzz>"}).content.decode()
    assert (
        'No node name contains “<bdi class="k8s word">&lt;zzz&gt;</bdi>”. <a href="/nodes/">Show every node</a>'
    ) in html
    assert "No nodes." not in html


def test_an_empty_mirror_says_it_has_no_nodes_yet(client: Client) -> None:
    html = client.get("/nodes/").content.decode()
    assert "No nodes in the mirror yet." in html
