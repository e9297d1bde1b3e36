"""A what-if's pasted object (a pod with its env, say) is the asker's: other users who are not admins
see it redacted on the run page and in the API; its author and admins see it as pasted."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from allocation.models import WhatIfRun
from inventory.redaction import REDACTED

pytestmark = pytest.mark.django_db

SECRET = "hunter2-s3cr3t"
POD = f"""apiVersion: v1
kind: Pod
metadata: {{name: p, namespace: default}}
spec:
  containers:
  - name: app
    env:
    - {{name: DB_PASSWORD, value: {SECRET}}}
"""


def client_of(name: str, group: str) -> Client:
    user = User.objects.get_or_create(username=name)[0]
    user.groups.add(Group.objects.get_or_create(name=group)[0])
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def run() -> WhatIfRun:
    author = User.objects.create_user("ada")
    return WhatIfRun.objects.create(
        kind="feasibility", input={"source": "yaml", "yaml": POD}, created_by=author, time_limit_seconds=60,
        max_search_steps=1000, state="succeeded",
    )  # fmt: skip


def shown(client: Client, run: WhatIfRun) -> tuple[str, str]:
    api = client.get(f"/api/whatif/runs/{run.pk}/")
    page = client.get(f"/whatif/{run.pk}/")
    assert api.status_code == 200 and page.status_code == 200
    return api.json()["input"]["yaml"], page.content.decode()


def test_it_redacts_a_pasted_objects_env_for_other_users(run: WhatIfRun) -> None:
    for name, group in (("victor", "viewer"), ("olivia", "operator")):
        yaml_text, page = shown(client_of(name, group), run)
        assert SECRET not in yaml_text and SECRET not in page
        assert "DB_PASSWORD" in yaml_text and REDACTED in yaml_text


def test_it_shows_the_pasted_object_to_its_author_and_to_admins(run: WhatIfRun) -> None:
    for name, group in (("ada", "viewer"), ("root", "admin")):
        yaml_text, page = shown(client_of(name, group), run)
        assert SECRET in yaml_text and SECRET in page
