"""A pasted object of the wrong shape anywhere (a string, list or number where the API has an object, or the
other way round) is refused with a 400 naming where it is: never a 500 from code that assumed a mapping."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from allocation.models import WhatIfRun
from allocation.services import whatif_input_normalize
from allocation.whatif.base import WhatIfInputError
from tests.allocation import whatif_objects as o

pytestmark = pytest.mark.django_db
MALFORMED: tuple[Any, ...] = ("x", ["x"], 7, True, {"x": 1})


@pytest.fixture
def cluster() -> None:
    o.store(*o.small_cluster().values())


def _subjects() -> list[tuple[str, dict[str, Any]]]:
    claim = o.claim(
        "asked", selector='device.driver == "gpu.example.com"', tolerations=[{"operator": "Exists"}]
    )
    claim["spec"]["devices"]["constraints"] = [
        {"requests": ["gpu"], "matchAttribute": "gpu.example.com/model"}
    ]
    claim["spec"]["devices"]["config"] = [
        {"requests": ["gpu"], "opaque": {"driver": o.DRIVER, "parameters": {}}}
    ]
    pod = o.pod("asked", claims=[{"name": "gpu", "resourceClaimName": "train-0"}], resources={"cpu": "1"})
    pod["spec"]["nodeSelector"] = {"zone": "a"}
    return [("claim", claim), ("template", o.template("asked", selector="device.driver != ''")), ("pod", pod)]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a nested object (keys and list positions), outermost first."""
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, child in items:
        yield (*path, key)
        yield from _paths(child, (*path, key))


def _replaced(obj: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    target: Any = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return out


CASES = [
    pytest.param(obj, path, bad, id=f"{name}:{'.'.join(map(str, path))}={bad!r}")
    for name, obj in _subjects()
    for path in _paths(obj)
    if path[0] in ("spec", "metadata", "apiVersion", "kind")
    for bad in MALFORMED
]


@pytest.mark.parametrize(("obj", "path", "bad"), CASES)
def test_it_refuses_or_accepts_every_malformed_shape_but_never_crashes(
    cluster: None, obj: dict[str, Any], path: tuple[Any, ...], bad: Any
) -> None:
    pasted = {"source": "yaml", "yaml": yaml.safe_dump(_replaced(obj, path, bad))}
    for kind in ("feasibility", "headroom"):
        try:
            whatif_input_normalize(kind=kind, input=pasted)
        except WhatIfInputError as exc:
            assert exc.field.startswith("input.yaml"), exc


@pytest.mark.parametrize("bad", MALFORMED[:4], ids=repr)
def test_it_names_a_template_spec_that_is_not_an_object(bad: Any) -> None:
    client = APIClient()
    client.force_authenticate(User.objects.create_user("ines"))
    o.store(*o.small_cluster().values())
    template = o.template("asked")
    template["spec"]["spec"] = bad
    response = client.post(
        "/api/whatif/runs/",
        {"kind": "headroom", "input": {"source": "yaml", "yaml": yaml.safe_dump(template)}},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert response.json()["errors"] == [{"field": "input.yaml.spec.spec", "message": "must be a mapping"}]
    assert not WhatIfRun.objects.exists()


def _class_with(spec: Any) -> dict[str, Any]:
    device_class = o.device_class("odd.example.com", extended=None)
    device_class["spec"] = spec
    return device_class


def _claim_of_class(name: str) -> dict[str, Any]:
    claim = o.claim(name)
    claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "odd.example.com"
    return claim


@pytest.mark.parametrize(
    ("stored", "kind"),
    [
        pytest.param([_replaced(o.claim("odd"), ("spec",), "x")], "ResourceClaim", id="claim-spec"),
        pytest.param([_replaced(o.claim("odd"), ("status",), "x")], "ResourceClaim", id="claim-status"),
        pytest.param([_replaced(o.claim("odd"), ("spec", "devices"), ["x"])], "ResourceClaim", id="claim-devices"),
        pytest.param([_replaced(o.claim("odd"), ("spec", "devices", "requests", 0, "exactly"), "x")], "ResourceClaim", id="claim-exactly"),
        pytest.param([_replaced(o.template("odd"), ("spec",), "x")], "ResourceClaimTemplate", id="template-spec"),
        pytest.param([_replaced(o.template("odd"), ("spec", "spec"), ["x"])], "ResourceClaimTemplate", id="template-spec-spec"),
        pytest.param([_class_with("x"), _claim_of_class("odd")], "ResourceClaim", id="class-spec"),
        pytest.param([_class_with({"selectors": "x"}), _claim_of_class("odd")], "ResourceClaim", id="class-selectors"),
        pytest.param([_class_with({"selectors": ["x"]}), _claim_of_class("odd")], "ResourceClaim", id="class-selector"),
        pytest.param([_class_with({"selectors": [{"cel": "x"}]}), _claim_of_class("odd")], "ResourceClaim", id="class-selector-cel"),
    ],
)  # fmt: skip
def test_it_refuses_a_picked_object_of_the_wrong_shape_naming_the_pick(
    cluster: None, stored: list[dict[str, Any]], kind: str
) -> None:
    """The API server never stores such an object, but the mirror's rows are only JSON: no 500 either way."""
    o.store(*stored)
    with pytest.raises(WhatIfInputError) as refused:
        whatif_input_normalize(
            kind="feasibility", input={"source": "pick", "kind": kind, "namespace": "default", "name": "odd"}
        )
    assert refused.value.field.startswith("input.name"), refused.value
