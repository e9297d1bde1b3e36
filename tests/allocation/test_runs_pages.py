"""The what-if pages: a form per kind, a run page whose answer explains itself, and bad input (invalid
CEL, a paste too big, too many runs) answered on the form with the input kept."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape

from allocation.models import RunState, WhatIfRun
from allocation.services import whatif_run_execute
from tests.allocation import whatif_objects as o

pytestmark = pytest.mark.django_db


@pytest.fixture
def client_in() -> Client:
    client = Client()
    client.force_login(User.objects.create_user("vic"))
    return client


def answered(client: Client, form: dict[str, str]) -> str:
    """Post a form, run the queued run as a worker would, and return the run page."""
    response = client.post("/whatif/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    run = WhatIfRun.objects.get()
    assert response["Location"] == f"/whatif/{run.id}/"
    whatif_run_execute(run_id=str(run.id))
    page = client.get(response["Location"])
    assert page.status_code == 200
    return page.content.decode()


def browser_post(client: Client, form: dict[str, str]) -> Any:
    """Post the way the page's form does (urlencoded, not the test client's multipart)."""
    return client.post("/whatif/", urlencode(form), content_type="application/x-www-form-urlencoded")


def test_it_shows_the_three_forms_with_inventory_objects_to_pick(client_in: Client) -> None:
    o.store(*o.small_cluster().values())
    page = client_in.get("/whatif/").content.decode()
    for form_id in ("form-feasibility", "form-headroom", "form-taint"):
        assert f'id="{form_id}"' in page
    assert 'value="ResourceClaimTemplate|default/one-gpu"' in page
    assert 'value="Pod|default/train-0"' in page


def test_it_redirects_anonymous_users_to_login() -> None:
    assert Client().get("/whatif/")["Location"].startswith("/accounts/login/")


def test_it_shows_which_nodes_fit_with_devices_and_why_others_do_not(client_in: Client) -> None:
    o.store(*o.small_cluster().values())
    yaml_text = "kind: ResourceClaim\nmetadata: {name: two}\nspec:\n  devices:\n    requests:\n" + (
        "    - {name: gpu, exactly: {deviceClassName: gpu.example.com, count: 2}}\n"
    )
    page = answered(client_in, {"kind": "feasibility", "source": "yaml", "yaml": yaml_text})
    assert "Yes: fits on 1 of 2 nodes" in page
    assert (
        '<code><bdi class="k8s word">gpu</bdi> → <bdi class="k8s word">gpu.example.com/node-b/gpu-1</bdi></code>'
        in page
    )
    assert (
        "<strong>node-a</strong>: 1 usable device; the claim asks for 2; not usable: already in use (1)"
        in page
    )
    assert "<td><code>node-a/gpu-0</code></td><td>gpu</td><td>already in use</td>" in page


def test_it_shows_headroom_per_node_and_per_class(client_in: Client) -> None:
    o.store(*o.small_cluster().values())
    page = answered(
        client_in, {"kind": "headroom", "source": "class", "deviceClassName": o.DRIVER, "count": "1"}
    )
    assert "3 more copies fit" in page
    assert "<tr><td>node-b</td><td>2</td>" in page


def test_it_shows_evictions_and_broken_budgets_for_a_proposed_taint(client_in: Client) -> None:
    objs = o.small_cluster()
    o.store(*objs.values(), o.pdb("train", {"app": "train"}, current=1, desired=1))
    page = answered(
        client_in,
        {"kind": "taint_impact", "pool": "node-a", "key": "example.com/broken", "effect": "NoExecute"},
    )
    assert "<strong>1 evicted</strong>" in page
    assert "PodDisruptionBudget <code>default/train</code> would be broken" in page
    assert "fits on node node-b" in page


def test_it_re_renders_the_form_with_the_field_error(client_in: Client) -> None:
    response = client_in.post(
        "/whatif/", {"kind": "taint_impact", "pool": "p", "key": "", "effect": "NoExecute"}
    )
    assert response.status_code == 400
    # named as the form labels it, then as the API does
    assert "<strong>Key</strong> (<code>input.taint.key</code>): is required" in response.content.decode()
    assert not WhatIfRun.objects.exists()


def test_an_empty_feasibility_form_asks_for_the_object_to_ask_about(client_in: Client) -> None:
    response = client_in.post("/whatif/", {"kind": "feasibility", "source": "claim", "pick_claim": ""})
    assert response.status_code == 400
    html = response.content.decode()
    assert (
        "<strong>Claim, template or pod</strong> (<code>input.name</code>): is required — choose the claim"
        in html
    )
    assert "input.kind" not in html
    assert not WhatIfRun.objects.exists()


def test_it_shows_live_progress_while_running_and_a_cancel_button(client_in: Client) -> None:
    o.store(*o.small_cluster().values())
    client_in.post("/whatif/", {"kind": "headroom", "source": "class", "deviceClassName": o.DRIVER})
    run = WhatIfRun.objects.get()
    page = client_in.get(f"/whatif/{run.id}/").content.decode()
    assert f"/ws/whatif/{run.id}/" in page
    assert 'hx-trigger="every 2s"' in page
    assert 'id="cancel-form"' in page
    client_in.post(f"/whatif/{run.id}/cancel/")
    run.refresh_from_db()
    assert run.state == RunState.CANCELLED
    status = client_in.get(f"/whatif/{run.id}/status/")
    assert status["HX-Refresh"] == "true"


def test_it_names_the_field_and_keeps_a_paste_with_invalid_cel(client_in: Client) -> None:
    o.store(*o.small_cluster().values())
    bad = yaml.safe_dump(o.claim("bad", selector="device.driver =="))
    response = client_in.post("/whatif/", {"kind": "feasibility", "source": "yaml", "yaml": bad})
    page = response.content.decode()
    assert response.status_code == 400
    assert (
        "<code>input.yaml.spec.devices.requests[0].exactly.selectors[0].cel.expression</code>): invalid CEL"
        in page
    )
    assert escape(bad) in page  # the paste is still in the form
    assert not WhatIfRun.objects.exists()


def test_it_answers_a_three_megabyte_paste_naming_the_field_and_the_limit_and_keeps_it(
    client_in: Client,
) -> None:
    big = (
        "kind: ResourceClaim\nmetadata: {name: big}\n# " + "x" * (3 * 1024 * 1024) + "\nspec: {devices: {}}\n"
    )
    response = browser_post(client_in, {"kind": "feasibility", "source": "yaml", "yaml": big})
    page = response.content.decode()
    assert response.status_code == 400  # not Django's bare "Bad Request (400)" for a body over 2.5 MB
    assert "<strong>YAML</strong> (<code>input.yaml</code>): must be at most 256 KiB" in page
    assert big in page


def test_it_answers_413_with_the_form_for_a_body_too_big_to_read(client_in: Client) -> None:
    huge = "x" * (9 * 1024 * 1024)
    response = browser_post(client_in, {"kind": "feasibility", "source": "yaml", "yaml": huge})
    page = response.content.decode()
    assert response.status_code == 413
    assert "<code>input.yaml</code>): the form sent 9.0 MiB" in page and "at most 256 KiB" in page
    assert 'id="form-feasibility"' in page


def test_it_says_on_the_form_when_the_user_has_too_many_runs_going(client_in: Client) -> None:
    o.store(*o.small_cluster().values())
    form = {"kind": "headroom", "source": "class", "deviceClassName": o.DRIVER, "count": "1"}
    assert client_in.post("/whatif/", form).status_code == 302
    assert client_in.post("/whatif/", form).status_code == 302
    response = client_in.post("/whatif/", form)
    assert response.status_code == 429
    assert "one user may have at most 2 at once" in response.content.decode()
    assert WhatIfRun.objects.count() == 2


def test_it_says_how_long_after_the_taint_each_pod_is_evicted_not_a_moment(client_in: Client) -> None:
    objs = o.small_cluster()
    serve = o.pod("serve-0", node_name="node-a", claims=[{"name": "gpu", "resourceClaimName": "serve-0"}])
    toleration = {
        "key": "example.com/broken",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    }
    o.store(
        *objs.values(),
        serve,
        o.allocated_claim("serve-0", "node-a", "gpu-1", serve, tolerations=[toleration]),
    )
    page = answered(
        client_in,
        {"kind": "taint_impact", "pool": "node-a", "key": "example.com/broken", "effect": "NoExecute"},
    )
    assert '<th title="counted from the moment the taint is added">Evicted</th>' in page
    pods = page.split('id="taint-pods"')[1].split("</table>")[0]
    assert re.search(r'data-delay="0(\.0)?">at once</td>', pods)
    assert re.search(r'data-delay="300(\.0)?">after 5 min</td>', pods)
    assert "<time" not in pods  # no "just now" that reads "3 d ago" when the answer is shared later


def test_the_taint_impact_answer_links_each_pod_node_and_claim_to_its_page(client_in: Client) -> None:
    objs = o.small_cluster()
    serve = o.pod("serve-0", node_name="node-a", claims=[{"name": "gpu", "resourceClaimName": "serve-0"}])
    o.store(*objs.values(), serve, o.allocated_claim("serve-0", "node-a", "gpu-1", serve))
    page = answered(
        client_in,
        {"kind": "taint_impact", "pool": "node-a", "key": "example.com/broken", "effect": "NoExecute"},
    )
    pods = page.split('id="taint-pods"')[1].split("</table>")[0]
    namespace = serve["metadata"]["namespace"]
    assert f'href="/pods/{namespace}/serve-0/"><bdi class="word">{namespace}/serve-0</bdi></a>' in pods
    assert 'href="/nodes/node-a/"><bdi class="word">node-a</bdi></a>' in pods
    assert f'href="/claims/{namespace}/serve-0/"><bdi class="word">serve-0</bdi></a>' in pods
    claims = page.split("<h3>Claims</h3>")[1].split("</ul>")[0]
    assert f'href="/claims/{namespace}/serve-0/"><bdi class="word">{namespace}/serve-0</bdi></a>' in claims


def test_the_headroom_answer_heads_each_of_its_tables(client_in: Client) -> None:
    """Two tables one under the other read as one: each has its heading (the one that labels it), as
    the taint impact's tables do."""
    o.store(*o.small_cluster().values())
    page = answered(
        client_in, {"kind": "headroom", "source": "class", "deviceClassName": o.DRIVER, "count": "1"}
    )
    answer = page[page.index('id="headroom-answer"') :]
    for table_id, heading in (
        ("headroom-classes", "Devices the copies would use, per DeviceClass"),
        ("headroom-nodes", "Copies per node"),
    ):
        table = re.search(rf'<table class="t" id="{table_id}" aria-labelledby="([^"]+)">', answer)
        assert table, table_id
        assert re.search(
            rf'<h3 id="{table.group(1)}">{heading}</h3>\s*<table class="t" id="{table_id}"', answer
        )
    between = answer[answer.index("</table>") : answer.index('id="headroom-nodes"')]
    assert "<h3" in between  # not glued to the table above
