"""A question that cannot be answered is refused when it is asked: 400 naming the field and the rule,
no run stored — never accepted and then "succeeded" with an error on every node."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from dra.allocator.cel import BACKEND_NAMES, default_backend_name, set_default_backend
from tests.allocation import whatif_objects as o
from tests.allocation.conftest import pasted, refused

pytestmark = pytest.mark.django_db
EXACT = "input.yaml.spec.devices.requests[0].exactly"


def claim_with(**exactly: Any) -> dict[str, Any]:
    claim = o.claim("asked")
    claim["spec"]["devices"]["requests"][0]["exactly"].update(exactly)
    return claim


def selector(expression: str) -> list[dict[str, Any]]:
    return [{"cel": {"expression": expression}}]


def too_many_requests() -> dict[str, Any]:
    claim = o.claim("many")
    claim["spec"]["devices"]["requests"] = [
        {"name": f"r{i}", "exactly": {"deviceClassName": o.DRIVER}} for i in range(33)
    ]
    return claim


def pod_with_limits_as_a_list() -> dict[str, Any]:
    """Once answered "internal error: TypeError" from the worker."""
    pod = o.pod("typo")
    pod["spec"]["containers"][0]["resources"] = {"limits": ["example.com/gpu: 1"]}
    return pod


def with_devices(**devices: Any) -> dict[str, Any]:
    claim = o.claim("asked")
    claim["spec"]["devices"].update(devices)
    return claim


@pytest.mark.parametrize(
    ("obj", "field", "words"),
    [
        (claim_with(selectors=selector("device.driver ==")), f"{EXACT}.selectors[0].cel.expression", "invalid CEL"),
        (claim_with(selectors=selector('1 + "a" == 2')), f"{EXACT}.selectors[0].cel.expression", "overload"),
        (claim_with(selectors=selector('"not a bool"')), f"{EXACT}.selectors[0].cel.expression", "bool"),
        (claim_with(selectors=selector("device.nope == 1")), f"{EXACT}.selectors[0].cel.expression", "nope"),
        (claim_with(selectors=[{"cel": {}}]), f"{EXACT}.selectors[0].cel.expression", "required"),
        (claim_with(deviceClassName="no-such-class"), f"{EXACT}.deviceClassName", "not in the inventory"),
        (claim_with(count="two"), f"{EXACT}.count", "must be an integer"),
        (claim_with(count=0), f"{EXACT}.count", "from 1 to 32"),
        (claim_with(allocationMode="Some"), f"{EXACT}.allocationMode", "ExactCount, All"),
        (claim_with(adminAccess="yes"), f"{EXACT}.adminAccess", "true or false"),
        (claim_with(tolerations=[{"key": "k", "operator": "In"}]), f"{EXACT}.tolerations[0].operator", "Equal"),
        (claim_with(tolerations=[{"key": "k", "effect": "None"}]), f"{EXACT}.tolerations[0].effect", "NoExecute"),
        (claim_with(capacity={"requests": {"memory": "lots"}}), f"{EXACT}.capacity.requests[memory]", "quantity"),
        (claim_with(colour="red"), EXACT, "colour"),
        (too_many_requests(), "input.yaml.spec.devices.requests", "at most 32"),
        (with_devices(constraints=[{"matchAttribute": "model"}]), "input.yaml.spec.devices.constraints[0].matchAttribute", "domain/name"),
        (with_devices(constraints=[{"requests": ["nic"], "matchAttribute": "gpu.example.com/model"}]),
         "input.yaml.spec.devices.constraints[0].requests[0]", "names no request"),
        (with_devices(requests=[{"name": "gpu"}]), "input.yaml.spec.devices.requests[0]", "exactly one of"),
        (with_devices(requests={"gpu": {}}), "input.yaml.spec.devices.requests", "must be a list"),
        (o.pod("p", claims=[{"name": "gpu", "resourceClaimName": "missing"}]),
         "input.yaml.spec.resourceClaims[0].resourceClaimName", "ResourceClaim default/missing is not in the inventory"),
        (o.pod("p", claims=[{"name": "gpu", "resourceClaimTemplateName": "gone"}]),
         "input.yaml.spec.resourceClaims[0].resourceClaimTemplateName", "is not in the inventory"),
        (o.pod("p", claims=[{"name": "gpu"}]), "input.yaml.spec.resourceClaims[0]", "exactly one of"),
        (o.pod("p", resources={"example.com/gpu": "one"}), "input.yaml.spec.containers[0].resources.limits[example.com/gpu]", "quantity"),
        (pod_with_limits_as_a_list(), "input.yaml.spec.containers[0].resources.limits", "must be a mapping"),
        ({"kind": "ConfigMap", "spec": {}}, "input.yaml.kind", "must be one of"),
        ({"kind": "ResourceClaim", "spec": {}}, "input.yaml.spec.devices", "required"),
    ],
)  # fmt: skip
def test_it_refuses_a_pasted_object_naming_the_field_and_the_rule(
    api: APIClient, obj: dict[str, Any], field: str, words: str
) -> None:
    error = refused(api, "feasibility", pasted(obj))
    assert error["field"] == field
    assert words in error["message"]


def test_it_refuses_a_template_whose_request_cel_does_not_compile(api: APIClient) -> None:
    template = o.template("bad", selector="device.attributes[")
    error = refused(api, "headroom", pasted(template))
    assert error["field"] == "input.yaml.spec.spec.devices.requests[0].exactly.selectors[0].cel.expression"


def test_it_refuses_a_subrequest_with_bad_cel(api: APIClient) -> None:
    claim = o.claim("prioritized")
    claim["spec"]["devices"]["requests"] = [
        {
            "name": "gpu",
            "firstAvailable": [
                {"name": "big", "deviceClassName": o.DRIVER, "selectors": selector("device.capacity[")}
            ],
        }
    ]
    error = refused(api, "feasibility", pasted(claim))
    assert (
        error["field"] == "input.yaml.spec.devices.requests[0].firstAvailable[0].selectors[0].cel.expression"
    )


@pytest.mark.parametrize(
    ("kind", "data", "field", "words"),
    [
        ("headroom", {"source": "class", "deviceClassName": "no-such-class"}, "input.deviceClassName", "not in the inventory"),
        ("headroom", {"source": "class", "deviceClassName": o.DRIVER, "count": 99}, "input.count", "1 to 32"),
        ("headroom", {"source": "class", "deviceClassName": o.DRIVER, "max_per_node": "x"}, "input.max_per_node", "integer"),
        ("feasibility", {**pasted(o.claim("c")), "node": "node-z"}, "input.node", "no node named node-z"),
        ("feasibility", {"source": "pick", "kind": "Pod", "namespace": "default", "name": "nope"}, "input.name", "not in the inventory"),
        ("feasibility", {"source": "pick", "kind": "Pod", "name": "x"}, "input.namespace", "required"),
        ("feasibility", {"source": "url"}, "input.source", "yaml, pick"),
        ("feasibility", {"source": "yaml", "yaml": "a: [unclosed"}, "input.yaml", "not valid YAML"),
        ("feasibility", {**pasted(o.claim("c")), "colour": "red"}, "input.colour", "not a field"),
        ("taint_impact", {"selector": {"pool": "p"}, "taint": {"key": "k", "effect": "Evict"}}, "input.taint.effect", "NoExecute"),
        ("taint_impact", {"selector": {"pool": 7}, "taint": {"key": "k", "effect": "None"}}, "input.selector.pool", "string"),
        ("feasibility", "not an object", "input", "object"),
    ],
)  # fmt: skip
def test_it_refuses_bad_input_of_every_kind_naming_the_field(
    api: APIClient, kind: str, data: Any, field: str, words: str
) -> None:
    error = refused(api, kind, data)
    assert error["field"] == field
    assert words in error["message"]


@pytest.mark.parametrize("kind", ["fortune", "x", "", 7, ["feasibility"]])
def test_it_refuses_an_unknown_kind_naming_the_known_ones(api: APIClient, kind: Any) -> None:
    error = refused(api, kind, {})
    assert error["field"] == "kind"
    assert error["message"].startswith(
        "must be one of feasibility, headroom, taint_impact, plugin_removal, got"
    )


def test_it_refuses_a_device_class_whose_own_selectors_this_engine_cannot_compile(api: APIClient) -> None:
    broken = o.device_class("broken.example.com", extended=None)
    broken["spec"]["selectors"] = selector("device.driver ==")
    o.store(broken)
    error = refused(api, "headroom", {"source": "class", "deviceClassName": "broken.example.com"})
    assert error["field"] == "input.deviceClassName"
    assert "cannot be used" in error["message"]


def test_it_refuses_a_picked_pod_whose_claim_is_not_in_the_inventory(api: APIClient) -> None:
    o.store(o.pod("orphan", claims=[{"name": "gpu", "resourceClaimName": "missing"}]))
    error = refused(
        api, "feasibility", {"source": "pick", "kind": "Pod", "namespace": "default", "name": "orphan"}
    )
    assert error == {
        "field": "input.name.spec.resourceClaims[0].resourceClaimName",
        "message": "ResourceClaim default/missing is not in the inventory",
    }


def test_it_refuses_a_picked_template_whose_class_is_gone(api: APIClient) -> None:
    template = o.template("old-class")
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "retired.example.com"
    o.store(template)
    error = refused(
        api,
        "headroom",
        {"source": "pick", "kind": "ResourceClaimTemplate", "namespace": "default", "name": "old-class"},
    )
    assert error["field"] == "input.name"
    assert "DeviceClass retired.example.com is not in the inventory" in error["message"]


def test_it_refuses_a_paste_over_the_size_limit_naming_the_limit(api: APIClient) -> None:
    claim = copy.deepcopy(o.claim("big"))
    claim["metadata"]["annotations"] = {"padding": "x" * (300 * 1024)}
    error = refused(api, "feasibility", pasted(claim))
    assert error["field"] == "input.yaml"
    assert "at most 256 KiB" in error["message"]


def test_it_answers_413_for_a_request_body_too_big_to_read(api: APIClient, settings: Any) -> None:
    body = {"kind": "feasibility", "input": {"source": "yaml", "yaml": "x" * (6 * 1024 * 1024)}}
    response = api.post("/api/whatif/runs/", body, format="json")
    assert response.status_code == 413
    (error,) = response.json()["errors"]
    assert error["field"] == "body"
    assert f"limit of {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes" in error["message"]


@pytest.fixture(params=BACKEND_NAMES)
def cel_backend(request: pytest.FixtureRequest) -> Iterator[str]:
    before = default_backend_name()
    set_default_backend(request.param)
    yield request.param
    set_default_backend(before)


@pytest.mark.parametrize(
    ("expression", "result"),
    [
        ("device.driver", "string"),
        ("device.attributes", "map(string, map(string, dyn))"),
        ('device.attributes["gpu.example.com"]', "map(string, dyn)"),
        ('device.capacity["gpu.example.com"]', "map(string, kubernetes.Quantity)"),
        ('device.capacity["gpu.example.com"].memory', "kubernetes.Quantity"),
        ('device.capacity["gpu.example.com"]["memory"]', "kubernetes.Quantity"),
        ('true ? device.driver : "x"', "string"),
        ("cel.bind(d, device.driver, d)", "string"),
        ('cel.bind(c, device.capacity, c["gpu.example.com"].memory)', "kubernetes.Quantity"),
    ],
)
def test_it_refuses_a_selector_that_does_not_evaluate_to_bool_on_either_backend(
    api: APIClient, cel_backend: str, expression: str, result: str
) -> None:
    """Upstream's checker knows `device.driver` is a string, `device.capacity[d].x` a Quantity: "must evaluate
    to bool" at validation, where a map<string, dyn> declaration would only find out on every device."""
    error = refused(api, "feasibility", pasted(claim_with(selectors=selector(expression))))
    assert error["field"] == f"{EXACT}.selectors[0].cel.expression"
    assert error["message"].endswith(f"must evaluate to bool or the unknown type, not {result}")


@pytest.mark.parametrize(
    "expression",
    [
        "device.allowMultipleAllocations",
        'device.attributes["gpu.example.com"].healthy',  # an attribute: any type, checked when evaluated
        'has(device.attributes["gpu.example.com"].model)',
        "dyn(device.driver)",
        '[1].exists(device, device == 1) || device.driver == "x"',
    ],
)
def test_it_accepts_a_selector_upstream_accepts_on_either_backend(
    api: APIClient, cel_backend: str, expression: str
) -> None:
    response = api.post(
        "/api/whatif/runs/",
        {"kind": "feasibility", "input": pasted(claim_with(selectors=selector(expression)))},
        format="json",
    )
    assert response.status_code == 202, response.content
