"""The what-if form as a user meets it: a subject picker (claim / pod / YAML), the input kept and the 400's
message next to the form it belongs to, a failed run that says "failed" once, and a taint-impact answer
that becomes the start of a maintenance draft (which still needs its preview and confirmation)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from allocation.models import RunState, WhatIfRun
from allocation.services import whatif_run_execute
from maintenance.models import Maintenance
from tests.allocation import whatif_objects as o
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def test_the_form_offers_claim_pod_and_a_labelled_yaml_tab(operator_client: Client) -> None:
    o.store(*o.small_cluster().values())
    html = operator_client.get("/whatif/").content.decode()
    form = html[html.index('id="form-feasibility"') : html.index('id="form-headroom"')]
    assert "<legend>What to check</legend>" in form
    for value, words in (("claim", "A claim or template"), ("pod", "A pod"), ("yaml", "YAML")):
        assert re.search(rf'value="{value}"[^>]*> {words}</label>', form), value
    assert '<label for="feasibility-yaml">YAML of a ResourceClaim, ResourceClaimTemplate or Pod' in form
    assert '<option value="Pod|default/train-0" >default/train-0</option>' in form


def test_on_a_fresh_cluster_the_pickers_say_there_is_nothing_to_pick(operator_client: Client) -> None:
    """An empty "— choose —" list and a blank DeviceClass box looked broken on a cluster with no objects."""
    html = operator_client.get("/whatif/").content.decode()
    assert html.count('<option value="">— none in the mirror: paste its YAML —</option>') == 2
    assert '<option value="">— no pod in the mirror: paste its YAML —</option>' in html
    assert (
        '<select name="deviceClassName" id="headroom-class"><option value="">— no DeviceClass in the mirror —'
        in html
    )
    o.store(*o.small_cluster().values())
    html = operator_client.get("/whatif/").content.decode()
    assert "in the mirror" not in html


def test_a_pending_claims_page_opens_the_feasibility_form_with_that_claim_picked(
    operator_client: Client,
) -> None:
    from html import unescape

    o.store(*o.small_cluster().values())
    f.write(("resourceclaims", o.claim("want-nine", count=9)))  # through the mirror: its Claim row too
    page = operator_client.get("/claims/default/want-nine/").content.decode()
    link = re.search(r'<a id="claim-feasibility" href="([^"]+)"', page)
    assert link, "a pending claim links to the what-if"
    form = operator_client.get(unescape(link.group(1))).content.decode()
    form = form[form.index('id="form-feasibility"') : form.index('id="form-headroom"')]
    assert '<option value="ResourceClaim|default/want-nine" selected>' in form
    assert re.search(r'value="claim" checked> A claim or template', form)


def test_a_picked_pod_is_asked_about(operator_client: Client) -> None:
    o.store(*o.small_cluster().values())
    response = operator_client.post(
        "/whatif/",
        {"kind": "feasibility", "source": "pod", "pick_pod": "Pod|default/train-0", "pick_claim": ""},
    )
    assert response.status_code == 302
    assert WhatIfRun.objects.get().input["name"] == "train-0"


def test_bad_yaml_keeps_the_input_and_says_why_next_to_it(operator_client: Client) -> None:
    pasted = "kind: Secret\nmetadata: {name: x}\n"
    response = operator_client.post("/whatif/", {"kind": "feasibility", "source": "yaml", "yaml": pasted})
    assert response.status_code == 400
    html = response.content.decode()
    form = html[html.index('id="form-feasibility"') : html.index('id="form-headroom"')]
    assert "kind: Secret\nmetadata: {name: x}" in form  # the paste is still there
    assert re.search(r'value="yaml" checked', form)  # and its tab is the open one
    error = form[form.index('id="feasibility-error"') :]
    assert "<code>input.yaml" in error
    assert form.index("feasibility-yaml") < form.index('id="feasibility-error"')
    assert 'id="form-errors"' not in html  # one message, in its place
    assert not WhatIfRun.objects.exists()


def test_a_failed_run_says_failed_with_one_message(operator_client: Client) -> None:
    run = WhatIfRun.objects.create(
        kind="feasibility", input={"source": "yaml"}, state=RunState.FAILED, error="the allocator gave up",
        time_limit_seconds=10, percent=100,
    )  # fmt: skip
    html = operator_client.get(f"/whatif/{run.id}/").content.decode()
    assert '<strong id="run-state">Failed</strong>' in html
    assert html.count("the allocator gave up") == 1
    assert "Succeeded" not in html


@pytest.mark.parametrize(
    ("state", "percent", "stopped"),
    [
        (RunState.FAILED, 0, "(stopped while trying each node)"),
        (RunState.CANCELLED, 40, "(stopped while trying each node, 40% done)"),
        (RunState.TIMED_OUT, 85, "(stopped while trying each node, 85% done)"),
    ],
)
def test_a_run_that_ended_without_an_answer_shows_no_progress_bar(
    operator_client: Client, state: str, percent: int, stopped: str
) -> None:
    """A failed run read "Failed — trying each node [empty bar] 0%", as if it were still at work."""
    run = WhatIfRun.objects.create(
        kind="feasibility", input={"source": "yaml"}, state=state, error="why", phase="trying each node",
        time_limit_seconds=10, percent=percent,
    )  # fmt: skip
    html = operator_client.get(f"/whatif/{run.id}/").content.decode()
    status = html[html.index('id="run-status"') : html.index('id="run-error"')]
    assert "<progress" not in status
    assert 'id="run-phase"' not in status
    assert stopped in status


def test_a_running_run_shows_its_phase_and_progress(operator_client: Client) -> None:
    run = WhatIfRun.objects.create(
        kind="feasibility", input={"source": "yaml"}, state=RunState.RUNNING, phase="trying each node",
        time_limit_seconds=10, percent=30,
    )  # fmt: skip
    html = operator_client.get(f"/whatif/{run.id}/").content.decode()
    assert '<span id="run-phase">trying each node</span>' in html
    assert '<progress id="run-progress" max="100" value="30">' in html
    assert "stopped while" not in html


def test_a_taint_impact_answer_becomes_the_start_of_a_draft(operator_client: Client) -> None:
    o.store(*o.small_cluster().values())
    operator_client.post(
        "/whatif/",
        {"kind": "taint_impact", "driver": o.DRIVER, "pool": "node-a", "key": "example.com/fw", "value": "v2",
         "effect": "NoSchedule"},
    )  # fmt: skip
    run = WhatIfRun.objects.get()
    whatif_run_execute(run_id=str(run.id))
    page = operator_client.get(f"/whatif/{run.id}/").content.decode()
    link = re.search(r'<a class="btn primary" id="make-draft" href="([^"]+)"', page)
    assert link, "the answer offers a draft"
    url = link.group(1).replace("&amp;", "&")
    assert url == f"/maintenance/new/?from_whatif={run.id}&driver={o.DRIVER}&pool=node-a"

    # The inventory's devices of that pool (the mirror's rows), one more than the answer selected.
    f.write(("resourceslices", f.resource_slice("s-a", pool="node-a", node="node-a",
                                               devices=[f.gpu("gpu-0"), f.gpu("gpu-1")])),
            ("resourceslices", f.resource_slice("s-b", pool="node-b", node="node-b", devices=[f.gpu("gpu-0")])))  # fmt: skip
    new = operator_client.get(url).content.decode()
    assert 'id="from-whatif"' in new
    ticked = re.findall(r'name="device" value="([^"]+)"[^>]*checked', new)
    assert sorted(ticked) == [f"{o.DRIVER}|node-a|gpu-0", f"{o.DRIVER}|node-a|gpu-1"]
    assert 'name="key" required value="example.com/fw"' in new
    assert 'name="value" value="v2"' in new
    assert re.search(r'<option value="NoSchedule" selected>', new)
    assert not Maintenance.objects.exists()  # nothing is stored before the operator creates the draft


def test_a_viewer_is_not_offered_a_draft(client: Client) -> None:
    o.store(*o.small_cluster().values())
    client.force_login(User.objects.create_user("vic"))
    client.post(
        "/whatif/",
        {"kind": "taint_impact", "pool": "node-a", "key": "example.com/fw", "effect": "NoSchedule"},
    )
    run = WhatIfRun.objects.get()
    whatif_run_execute(run_id=str(run.id))
    assert 'id="make-draft"' not in client.get(f"/whatif/{run.id}/").content.decode()


def test_an_unknown_or_unfinished_run_prefills_nothing(operator_client: Client) -> None:
    html = operator_client.get("/maintenance/new/?from_whatif=not-a-uuid").content.decode()
    assert 'id="from-whatif"' not in html and 'id="filter-errors"' not in html


@pytest.mark.parametrize("posted", [{"kind": "x"}, {}], ids=["unknown", "missing"])
def test_an_unknown_kind_is_named_with_the_known_ones_above_the_forms(
    operator_client: Client, posted: dict[str, str]
) -> None:
    response = operator_client.post("/whatif/", posted)
    assert response.status_code == 400
    html = response.content.decode()
    errors = html[html.index('id="form-errors"') : html.index("</div>", html.index('id="form-errors"'))]
    assert "<code>kind</code>" in errors
    assert "must be one of feasibility, headroom, taint_impact" in errors
    assert f"got {posted.get('kind', '')!r}".replace("'", "&#x27;") in errors
    assert not WhatIfRun.objects.exists()


def test_a_refused_plugin_removal_says_why_next_to_its_form(operator_client: Client) -> None:
    """The device-plugin-removal form showed no message at all on a 400: the page came back with the
    input kept and nothing saying what was wrong (every other what-if form says it under itself)."""
    o.store(*o.small_cluster().values())
    response = operator_client.post(
        "/whatif/", {"kind": "plugin_removal", "resource": "not a resource name!", "nodes": "node-a"}
    )
    assert response.status_code == 400
    html = response.content.decode()
    form = html[html.index('id="form-plugin_removal"') :]
    form = form[: form.index("</form>")]
    assert 'value="not a resource name!"' in form  # the input is kept ...
    error = form[form.index('id="plugin_removal-error"') :]
    assert "<strong>Extended resource</strong>" in error  # ... and the field is named beside it
    assert not WhatIfRun.objects.exists()
