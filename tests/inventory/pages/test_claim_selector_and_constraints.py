"""A claim's page reads its allocation's node selector and its constraints as text, not JSON: each term a
line of `key operator (values)`, each constraint `matchAttribute: X across requests a, b`; escaped and
capped (the YAML view keeps all of it)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from inventory.selectors.claims import CONSTRAINTS_SHOWN, TERMS_SHOWN, VALUES_SHOWN
from tests.inventory import factories as f
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def client_in(client: Client) -> Client:
    client.force_login(make_user())
    return client


def claim_page(client: Client, *, node_selector: Any = None, constraints: Any = None) -> str:
    claim = f.claim("train", namespace="ml", results=[f.result("gpu-0")])
    if node_selector is not None:
        claim["status"]["allocation"]["nodeSelector"] = node_selector
    if constraints is not None:
        claim["spec"]["devices"]["constraints"] = constraints
    f.write(("resourceclaims", claim))
    response = client.get("/claims/ml/train/")
    assert response.status_code == 200
    return response.content.decode()


def section(page: str, marker: str) -> str:
    start = page.index(marker)
    return page[start : page.index("</ul>", start)]


def test_it_shows_a_node_selector_as_terms_of_requirements(client_in: Client) -> None:
    selector = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker-0006"]}]},
            {
                "matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a", "b"]},
                    {"key": "example.com/gpu", "operator": "Exists"},
                ]
            },
        ]
    }
    page = claim_page(client_in, node_selector=selector)
    shown = section(page, 'id="claim-node-selector"')
    assert "nodeSelectorTerms" not in page and "&quot;matchFields&quot;" not in page  # no JSON
    assert "{#" not in shown and "node_selector_view" not in shown  # no template text
    assert '<span class="muted">field</span> <code class="requirement">' in shown
    assert ">metadata.name</bdi> In (worker-0006)</code>" in shown
    assert '>topology.kubernetes.io/zone</bdi> In (a, b)</code> <span class="muted">and</span> ' in shown
    assert ">example.com/gpu</bdi> Exists</code>" in shown
    assert shown.count("<li>") == 2 and '<li><span class="muted">or</span> ' in shown


def test_it_escapes_and_caps_what_the_selector_says(client_in: Client) -> None:
    many = [f"v{i}" for i in range(VALUES_SHOWN + 3)]
    terms = [{"matchExpressions": [{"key": "<b>k</b>", "operator": "NotIn", "values": ["<i>x</i>", *many]}]}]
    terms += [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}] * TERMS_SHOWN
    page = claim_page(client_in, node_selector={"nodeSelectorTerms": terms})
    shown = section(page, 'id="claim-node-selector"')
    assert "<b>k</b>" not in shown and "&lt;b&gt;k&lt;/b&gt;" in shown
    assert "<i>x</i>" not in shown and "&lt;i&gt;x&lt;/i&gt;" in shown
    assert ", … 4 more)" in shown  # VALUES_SHOWN values, the list's first included
    assert "or 1 more term (<a href=" in shown


def test_it_shows_constraints_as_the_attribute_across_requests(client_in: Client) -> None:
    constraints = [
        {"requests": ["gpu", "nic"], "matchAttribute": "resource.kubernetes.io/pcieRoot"},
        {"distinctAttribute": "gpu.example.com/uuid"},
        {"requests": ["<script>"], "matchAttribute": "a/b"},
    ]
    page = claim_page(client_in, constraints=constraints)
    shown = section(page, 'id="claim-constraints"')
    assert "&quot;matchAttribute&quot;" not in page and '{"requests"' not in page
    text = " ".join(shown.split())
    assert (
        '<code>matchAttribute</code>: <code><bdi class="k8s">resource.kubernetes.io/pcieRoot</bdi></code> across '
        'requests <code><bdi class="k8s">gpu</bdi></code>, <code><bdi class="k8s">nic</bdi></code>'
    ) in text.replace(' class="k8s word"', ' class="k8s"')
    assert "every device given has the same value" in text
    assert "<code>distinctAttribute</code>" in text and "across all requests" in text
    assert "each device given has a different value" in text
    assert "<script>" not in shown and "&lt;script&gt;" in shown


def test_it_caps_the_constraints_it_lists(client_in: Client) -> None:
    constraints = [{"matchAttribute": f"a/x{i}"} for i in range(CONSTRAINTS_SHOWN + 2)]
    page = claim_page(client_in, constraints=constraints)
    shown = section(page, 'id="claim-constraints"')
    assert shown.count("<code>matchAttribute</code>") == CONSTRAINTS_SHOWN
    assert "and 2 more (<a href=" in shown


def test_it_shows_tolerations_as_operators_write_them_not_json(client_in: Client) -> None:
    tolerations = [
        {"key": "example.com/maint", "operator": "Equal", "value": "gpu", "effect": "NoExecute",
         "tolerationSeconds": 60},
        {"key": "example.com/<b>", "operator": "Exists", "effect": "NoSchedule"},
        {"operator": "Exists"},
    ]  # fmt: skip
    claim = f.claim("serve", namespace="ml", results=[f.result("gpu-0", tolerations=tolerations)])
    claim["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = tolerations
    f.write(("resourceclaims", claim))
    page = client_in.get("/claims/ml/serve/").content.decode()
    assert "tolerationSeconds" not in page and "&quot;operator&quot;" not in page  # no JSON
    # the request's and the allocation result's (copied by the scheduler)
    assert page.count("<div>example.com/maint=gpu:NoExecute for 60s</div>") == 2
    assert page.count("<div>example.com/&lt;b&gt;:NoSchedule</div>") == 2  # escaped
    assert page.count("<div>*:*</div>") == 2
