"""A pod's page leads back to the Pods list, as every other detail page leads back to its list."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.inventory import factories as f
from tests.inventory.pages.test_pods_list import client_in, pod

pytestmark = pytest.mark.django_db
__all__ = ["client_in"]  # the fixture, imported


def test_it_links_the_breadcrumb_to_the_pods_list(client_in: Client) -> None:
    f.write(pod("trainer-0", namespace="ml", node="node-1"))

    html = client_in.get("/pods/ml/trainer-0/").content.decode()

    assert '<a href="/pods/">Pods</a> / <bdi>ml</bdi>' in html
