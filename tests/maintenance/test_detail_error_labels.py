"""A maintenance's page names what its forms sent and were refused by the label the user sees on that form,
then by the path the server knows it by: "I have reviewed the NoExecute blast radius (confirm): …", "Pods evicted at
once (concurrency): …" — never "confirm:" beside a checkbox labelled otherwise. What a form sends without a
field of its own is named as the page shows it (State, Version, Preview). The REST API keeps the path alone."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from inventory.models import Device
from maintenance.models import Maintenance
from maintenance.planning import DeviceRef
from maintenance.views import DETAIL_LABELS, DRAIN_LABELS, UNDO_LABELS
from tests.form_labels import error_names, form_label
from tests.maintenance.support import GPU, create, gpu_pods_on, preview_now

pytestmark = pytest.mark.django_db


def busiest_node_gpus(cluster: Any) -> list[DeviceRef]:
    """Every GPU of the node whose GPUs hold the most pods: enforcing NoExecute asks for a typed phrase."""
    node = max(("node-0", "node-1", "node-2"), key=lambda n: len(gpu_pods_on(cluster, n)))
    assert gpu_pods_on(cluster, node)
    return [DeviceRef(d.driver, d.pool, d.name) for d in Device.objects.filter(driver=GPU, pool=node)]


def refused(client: Client, m: Maintenance, action: str, form: dict[str, Any]) -> tuple[str, list[Any]]:
    """The page answering a refused action, and how its error panel names each field."""
    response = client.post(f"/maintenance/{m.id}/{action}/", form)
    assert response.status_code in (400, 409), response.status_code
    page = response.content.decode()
    panel = page.split('id="apply-errors"')[1].split("</div>")[0]
    return page, error_names(panel)


def form_of(page: str, form_id: str) -> str:
    return page.split(f'id="{form_id}"')[1].split("</form>")[0]


def test_the_enforce_forms_refusals_are_named_by_their_labels(
    mirrored: Any, operator: Any, operator_client: Client
) -> None:
    m = create(operator, devices=busiest_node_gpus(mirrored))
    enforce = {"effect": "NoExecute", "version": m.version}

    _, names = refused(operator_client, m, "apply", {**enforce, "version": m.version + 5})
    assert names == [(DETAIL_LABELS["version"], "version")] == [("Version", "version")]
    _, names = refused(operator_client, m, "apply", enforce)
    assert names == [("Preview", "preview")]  # enforcing needs a preview first

    run = preview_now(m, operator)
    m.refresh_from_db()
    enforce = {"effect": "NoExecute", "version": m.version, "preview": str(run.pk)}
    page, names = refused(operator_client, m, "apply", enforce)
    form = form_of(page, "enforce-NoExecute-form")
    assert names == [(form_label(form, "confirm"), "confirm")]
    assert form_label(form, "confirm") == "I have reviewed the NoExecute blast radius"

    page, names = refused(operator_client, m, "apply", {**enforce, "confirm": "yes", "typed": "not it"})
    form = form_of(page, "enforce-NoExecute-form")
    assert names == [(form_label(form, "typed"), "typed")]
    assert form_label(form, "typed") == "To confirm NoExecute, type"

    _, names = refused(operator_client, m, "apply", {**enforce, "effect": "Sometimes"})
    assert names == [("Effect", "taint.effect")]
    _, names = refused(operator_client, m, "undo", {"mode": "backwards", "version": m.version})
    assert names == [(UNDO_LABELS["mode"], "mode")] == [("Undo", "mode")]

    api = operator_client.post(
        f"/api/maintenance/{m.id}/apply/",
        json.dumps({"effect": "NoExecute", "confirm": False}),
        content_type="application/json",
    )
    assert [e["field"] for e in api.json()["errors"]] == ["confirm"]  # the API keeps the path


def test_the_drain_forms_refusals_are_named_by_its_labels(
    mirrored: Any, operator: Any, operator_client: Client
) -> None:
    m = create(operator, devices=busiest_node_gpus(mirrored), effect="NoSchedule")
    run = preview_now(m, operator)
    m.refresh_from_db()
    drain = {"mode": "drain", "version": m.version, "preview": str(run.pk)}

    page, names = refused(operator_client, m, "apply", {**drain, "confirm": "yes", "concurrency": "lots"})
    form = form_of(page, "drain-form")
    assert names == [(form_label(form, "concurrency"), "concurrency")]
    assert form_label(form, "concurrency") == DRAIN_LABELS["concurrency"] == "Pods evicted at once"

    page, names = refused(operator_client, m, "apply", drain)
    form = form_of(page, "drain-form")
    assert names == [(form_label(form, "confirm"), "confirm")]
    assert form_label(form, "confirm") == "I have reviewed this drain"
    assert f"<h3>{DRAIN_LABELS['mode']} — " in form  # what a refused `mode` is named by

    _, names = refused(operator_client, m, "apply", {**drain, "confirm": "yes", "typed": "not it"})
    assert names == [("To confirm, type", "typed")]
