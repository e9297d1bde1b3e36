"""The migration pages name a refused form field by the label the user sees on the form, then by the field the
server knows it by ("Paste manifests (yaml): …", "Pool (poolName): …"), never by the field alone beside a
field labelled otherwise. A field the form does not have is named as it was sent. The API keeps the field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from migration import pool_status
from migration.upgrade import UPGRADE_FORM_FIELDS
from migration.views import POOL_STATUS_LABELS, UPGRADE_LABELS
from tests.form_labels import error_names, form_label
from tests.maintenance.conftest import user_in

pytestmark = pytest.mark.django_db

UPGRADE = "/migration/upgrade/"
POOL_STATUS = "/migration/pool-status/"


def panel(page: str) -> str:
    return page.split('id="form-error"')[1].split("</div>")[0]


def test_every_field_of_the_upgrade_form_has_the_label_its_errors_use(viewer_client: Client) -> None:
    assert set(UPGRADE_LABELS) == set(UPGRADE_FORM_FIELDS)  # a new field needs its label
    page = viewer_client.get(UPGRADE).content.decode()
    for name, label in UPGRADE_LABELS.items():
        assert form_label(page, name) == label, name


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"yaml": "  "}, "yaml"),
        ({"file": SimpleUploadedFile("latin1.yaml", "kind: caf\xe9\n".encode("latin-1"))}, "file"),
    ],
)
def test_the_upgrade_page_names_a_refused_field_by_its_label(
    viewer_client: Client, form: dict[str, Any], field: str
) -> None:
    response = viewer_client.post(UPGRADE, form)
    assert response.status_code == 400
    page = response.content.decode()
    assert error_names(panel(page)) == [(form_label(page, field), field)]
    assert form_label(page, field) == UPGRADE_LABELS[field]


def test_the_upgrade_page_names_a_field_it_does_not_have_as_it_was_sent(viewer_client: Client) -> None:
    response = viewer_client.post(UPGRADE, {"yaml": "kind: x\n", "invenotry": "on"})
    assert error_names(panel(response.content.decode())) == [("", "invenotry")]


def test_the_upgrade_api_still_names_the_field(viewer_client: Client) -> None:
    response = viewer_client.post(
        "/api/migration/upgrade/", json.dumps({"yaml": "  "}), content_type="application/json"
    )
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["yaml"]


def test_the_snapshot_form_names_every_refused_field_by_its_label(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_status, "cluster_client", lambda: pytest.fail("the cluster must not be asked"))
    client = Client()
    client.force_login(user_in("operator", "otto-labels"))
    sent = {
        "driver": "Not_A_Driver",
        "poolName": "/bad",
        "limit": "5000",
        "defaultPartitionTypeAttribute": "x y",
    }
    response = client.post(POOL_STATUS, {"action": "create", **sent})
    assert response.status_code == 400
    page = response.content.decode()
    assert error_names(panel(page)) == [(form_label(page, name), name) for name in sent]
    assert [form_label(page, name) for name in sent] == [POOL_STATUS_LABELS[name] for name in sent]
