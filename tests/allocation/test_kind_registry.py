"""Adding a what-if kind is one module and one template: a kind made here, in the test, with its template
in a temporary folder, is served by the API, the worker and the pages without touching another file."""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from allocation.models import RunState, WhatIfRun
from allocation.services import whatif_run_execute
from allocation.whatif import kinds
from allocation.whatif.base import Context, Lookup, WhatIfKind, kind_names, register, unregister
from allocation.whatif.inputs import text
from tests.allocation import whatif_objects as o

pytestmark = pytest.mark.django_db

TEMPLATE = """{% if part == "form" %}
<div class="panel" id="form-device-count"><form method="post">{% csrf_token %}
  <input type="hidden" name="kind" value="device_count"><input name="driver"></form></div>
{% else %}<p id="device-count">{{ r.driver }} has {{ r.devices }} devices</p>{% endif %}
"""


def count_normalize(raw: Mapping[str, Any], lookup: Lookup) -> dict[str, Any]:
    return {"driver": text(raw, "driver", "input.driver", max_len=63)}


def count_answer(data: dict[str, Any], ctx: Context) -> dict[str, Any]:
    slices = [s for s in ctx.snapshot.slices if s["spec"]["driver"] == data["driver"]]
    return {"driver": data["driver"], "devices": sum(len(s["spec"]["devices"]) for s in slices)}


@pytest.fixture
def device_count(tmp_path: Path, settings: Any) -> Iterator[WhatIfKind]:
    """The whole kind: this module's functions and one template file."""
    (tmp_path / "device_count.html").write_text(TEMPLATE)
    templates = copy.deepcopy(settings.TEMPLATES)
    templates[0]["DIRS"] = [*templates[0]["DIRS"], tmp_path]
    settings.TEMPLATES = templates
    kind = register(
        WhatIfKind(
            name="device_count",
            label="Device count",
            template="device_count.html",
            normalize=count_normalize,
            answer=count_answer,
            form_input=lambda post: {"driver": post.get("driver", "")},
            input_help="{driver}",
        )
    )
    yield kind
    unregister("device_count")


def test_it_serves_a_new_kind_through_the_api_and_the_worker(device_count: WhatIfKind) -> None:
    o.store(*o.small_cluster().values())
    api = APIClient()
    api.force_authenticate(User.objects.create_user("kim"))
    created = api.post(
        "/api/whatif/runs/", {"kind": "device_count", "input": {"driver": o.DRIVER}}, format="json"
    )
    assert created.status_code == 202, created.content
    whatif_run_execute(run_id=created.json()["id"])
    body = api.get(f"/api/whatif/runs/{created.json()['id']}/").json()
    assert (body["state"], body["kind_label"], body["result"]) == (
        "succeeded",
        "Device count",
        {"driver": o.DRIVER, "devices": 4},
    )
    bad = api.post("/api/whatif/runs/", {"kind": "device_count", "input": {"driver": 7}}, format="json")
    assert bad.json()["errors"] == [{"field": "input.driver", "message": "must be a string, got int"}]


def test_it_shows_a_new_kinds_form_and_answer_on_the_pages(device_count: WhatIfKind) -> None:
    o.store(*o.small_cluster().values())
    client = Client()
    client.force_login(User.objects.create_user("kim"))
    assert 'id="form-device-count"' in client.get("/whatif/").content.decode()
    response = client.post("/whatif/", {"kind": "device_count", "driver": o.DRIVER})
    assert response.status_code == 302
    run = WhatIfRun.objects.get()
    whatif_run_execute(run_id=str(run.pk))
    assert WhatIfRun.objects.get().state == RunState.SUCCEEDED
    page = client.get(response["Location"]).content.decode()
    assert '<p id="device-count">gpu.example.com has 4 devices</p>' in page
    assert "<h1>Device count <small" in page


def test_it_refuses_a_second_kind_with_a_name_already_taken(device_count: WhatIfKind) -> None:
    with pytest.raises(ValueError, match="registered twice"):
        register(WhatIfKind("device_count", "Again", "x.html", count_normalize, count_answer, dict))


PROBE = """from allocation.whatif.base import WhatIfKind, register

register(WhatIfKind("probe", "Probe", "probe.html", lambda raw, lookup: {}, lambda data, ctx: {}, dict))
"""


def test_it_finds_a_new_kind_module_without_a_list_to_update() -> None:
    module = Path(kinds.__file__).parent / "_probe_kind.py"
    module.write_text(PROBE)
    try:
        apps.get_app_config("allocation").ready()
        assert "probe" in kind_names()
    finally:
        module.unlink()
        unregister("probe")
        sys.modules.pop("allocation.whatif.kinds._probe_kind", None)
    assert kind_names() == ["feasibility", "headroom", "taint_impact", "plugin_removal"]
