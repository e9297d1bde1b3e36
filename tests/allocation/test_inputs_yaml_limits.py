"""A paste that would cost the server a stack or its memory is refused before it is built: nesting deeper
than any Kubernetes object needs, and aliases that expand a small paste into a huge one ("billion laughs")."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from rest_framework.test import APIClient

from allocation.models import WhatIfRun
from allocation.whatif.base import WhatIfInputError
from allocation.whatif.inputs import parse_yaml_subject
from dra.yamlshape import MAX_ALIAS_NODES, MAX_DEPTH
from tests.allocation.conftest import refused

pytestmark = pytest.mark.django_db

DEEP = {
    "lists": "kind: ResourceClaim\nspec: " + "[" * 5000 + "]" * 5000 + "\n",
    "flow mappings": "kind: ResourceClaim\nspec: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n",
    "block mappings": "".join(" " * i + "a:\n" for i in range(700)) + " " * 700 + "b: 1\n",
}
LAUGHS = "\n".join(
    ["kind: ResourceClaim", "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    + ["spec: {devices: *a8}"]
)


def _refused(api: APIClient, text: str) -> dict[str, str]:
    return refused(api, "feasibility", {"source": "yaml", "yaml": text})


@pytest.mark.parametrize("text", DEEP.values(), ids=DEEP.keys())
def test_it_refuses_a_paste_nested_too_deeply(api: APIClient, text: str) -> None:
    error = _refused(api, text)
    assert error["field"] == "input.yaml"
    assert re.match(f"line [0-9]+: nests more than {MAX_DEPTH} levels deep", error["message"])


def test_the_form_says_a_paste_is_nested_too_deeply(operator_client: Client) -> None:
    response = operator_client.post(
        "/whatif/", {"kind": "feasibility", "source": "yaml", "yaml": DEEP["lists"]}
    )
    assert response.status_code == 400
    assert "line 2: nests more than 100 levels deep" in response.content.decode()
    assert not WhatIfRun.objects.exists()


def test_it_accepts_nesting_as_deep_as_the_limit_and_no_deeper() -> None:
    def nested(lists: int) -> str:  # the document, spec and devices are three levels
        return "kind: ResourceClaim\nspec: {devices: {x: " + "[" * lists + "]" * lists + "}}\n"

    assert parse_yaml_subject(nested(MAX_DEPTH - 3))["spec"]["devices"]["x"]
    with pytest.raises(
        WhatIfInputError, match=f"^input.yaml: line 2: nests more than {MAX_DEPTH} levels deep"
    ):
        parse_yaml_subject(nested(MAX_DEPTH - 2))


def test_it_refuses_a_billion_laughs_at_once(api: APIClient) -> None:
    assert len(LAUGHS) < 1024
    error = _refused(api, LAUGHS)  # 9**9 nodes once expanded: refused from the parser's events
    assert error["field"] == "input.yaml"
    assert error["message"].startswith(f"line 6: aliases expand to more than {MAX_ALIAS_NODES} nodes")


def test_it_refuses_aliases_that_nest_too_deeply_once_expanded() -> None:
    levels = "\n".join(f"l{i}: &l{i} [*l{i - 1}]" for i in range(1, 120))
    with pytest.raises(
        WhatIfInputError, match=f"^input.yaml: line 101: nests more than {MAX_DEPTH} levels deep"
    ):
        parse_yaml_subject(f"kind: ResourceClaim\nl0: &l0 [x]\n{levels}\nspec: {{devices: {{x: *l119}}}}\n")


def test_it_accepts_a_small_alias() -> None:
    text = """\
kind: ResourceClaim
metadata: {name: shared, namespace: default}
spec:
  devices:
    requests:
    - name: a
      exactly: {deviceClassName: gpu.example.com, tolerations: &any [{operator: Exists}]}
    - name: b
      exactly: {deviceClassName: gpu.example.com, tolerations: *any}
"""
    requests = parse_yaml_subject(text)["spec"]["devices"]["requests"]
    assert requests[1]["exactly"]["tolerations"] == [{"operator": "Exists"}]
