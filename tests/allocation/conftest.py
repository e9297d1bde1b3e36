"""Fixtures and helpers the what-if input tests share: who asks, and how a refused question is read."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.contrib.auth.models import Group, User
from django.test import Client
from rest_framework.test import APIClient

from allocation.models import WhatIfRun
from tests.allocation import whatif_objects as o


@pytest.fixture
def api(db: Any) -> APIClient:
    """The API as a signed-in user, with `whatif_objects.small_cluster` in the inventory."""
    client = APIClient()
    client.force_authenticate(User.objects.create_user("ines"))
    o.store(*o.small_cluster().values())
    return client


@pytest.fixture
def operator_client(db: Any) -> Client:
    user = User.objects.create_user("opal")
    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    client = Client()
    client.force_login(user)
    return client


def pasted(obj: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """The `input` of a question about `obj` (with `changes` to its top-level fields) pasted as YAML."""
    return {"source": "yaml", "yaml": yaml.safe_dump({**obj, **changes})}


def refused(api: APIClient, kind: str, data: Any) -> dict[str, str]:
    """The one error of a question refused with 400, nothing stored."""
    response = api.post("/api/whatif/runs/", {"kind": kind, "input": data}, format="json")
    assert response.status_code == 400, response.content
    assert not WhatIfRun.objects.exists()
    (error,) = response.json()["errors"]
    return dict(error)
