"""A pasted object says which API version it is written for, and taints and tolerations follow the API
server's name rules: a question the cluster would refuse is refused here too, naming the field and the rule."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.allocation import whatif_objects as o
from tests.allocation.conftest import pasted, refused

pytestmark = pytest.mark.django_db
TOLERATION = "input.yaml.spec.devices.requests[0].exactly.tolerations[0]"


def _post(api: APIClient, kind: str, data: Any) -> Any:
    return api.post("/api/whatif/runs/", {"kind": kind, "input": data}, format="json")


def _tolerating(**toleration: Any) -> dict[str, Any]:
    return pasted(o.claim("asked", tolerations=[toleration]))


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (pasted(o.claim("c"), apiVersion="v9"), "must be resource.k8s.io/v1 for a ResourceClaim, got 'v9'"),
        (pasted(o.template("t"), apiVersion="resource.k8s.io/v2"), "must be resource.k8s.io/v1 for a ResourceClaimTemplate"),
        (pasted(o.claim("c"), apiVersion="resource.k8s.io/v1beta1"), "/migration/upgrade/"),
        (pasted(o.claim("c"), apiVersion=1), "must be resource.k8s.io/v1"),
        (pasted(o.pod("p"), apiVersion="resource.k8s.io/v1"), "must be v1 for a Pod, got 'resource.k8s.io/v1'"),
    ],
)  # fmt: skip
def test_it_refuses_an_api_version_it_does_not_read(api: APIClient, data: dict[str, Any], words: str) -> None:
    error = refused(api, "feasibility", data)
    assert error["field"] == "input.yaml.apiVersion"
    assert words in error["message"]


@pytest.mark.parametrize("obj", [o.claim("c"), o.template("t"), o.pod("p")], ids=["claim", "template", "pod"])
def test_it_accepts_the_current_api_version_or_none(api: APIClient, obj: dict[str, Any]) -> None:
    assert (
        _post(
            api, "headroom" if obj["kind"] == "ResourceClaimTemplate" else "feasibility", pasted(obj)
        ).status_code
        == 202
    )
    bare = {k: v for k, v in obj.items() if k != "apiVersion"}
    assert (
        _post(
            api, "headroom" if obj["kind"] == "ResourceClaimTemplate" else "feasibility", pasted(bare)
        ).status_code
        == 202
    )


@pytest.mark.parametrize(
    ("toleration", "field", "words"),
    [
        ({"key": "bad key", "operator": "Exists"}, f"{TOLERATION}.key", "name part must consist of alphanumeric"),
        ({"key": "a/b/c", "operator": "Exists"}, f"{TOLERATION}.key", "optional DNS subdomain prefix"),
        ({"key": "-x", "operator": "Exists"}, f"{TOLERATION}.key", "must start and end with an alphanumeric"),
        ({"key": "Example.com/x", "operator": "Exists"}, f"{TOLERATION}.key", "prefix part a lowercase RFC 1123 subdomain"),
        ({"key": "example.com/" + "x" * 64, "operator": "Exists"}, f"{TOLERATION}.key", "no more than 63 bytes"),
        ({"key": "/x", "operator": "Exists"}, f"{TOLERATION}.key", "prefix part must be non-empty"),
        ({"key": "example.com/k", "value": "bad value"}, f"{TOLERATION}.value", "a valid label must be an empty string"),
        ({"key": "example.com/k", "value": "v" * 64}, f"{TOLERATION}.value", "no more than 63 bytes"),
        ({"key": "example.com/k", "operator": "In"}, f"{TOLERATION}.operator", "Equal, Exists"),
        ({"key": "example.com/k", "effect": "PreferNoSchedule"}, f"{TOLERATION}.effect", "NoExecute"),
    ],
)  # fmt: skip
def test_it_refuses_a_toleration_the_api_server_would(
    api: APIClient, toleration: dict[str, Any], field: str, words: str
) -> None:
    error = refused(api, "feasibility", _tolerating(**toleration))
    assert error["field"] == field
    assert words in error["message"]
    assert "Invalid value" in error["message"] or "must be" in error["message"]


def test_it_accepts_a_toleration_the_api_server_accepts(api: APIClient) -> None:
    toleration = {
        "key": "example.com/Maint_1.x",
        "operator": "Equal",
        "value": "v-2.a_b",
        "effect": "NoExecute",
    }
    assert _post(api, "feasibility", _tolerating(**toleration)).status_code == 202


def _taint(**taint: Any) -> dict[str, Any]:
    return {
        "selector": {"pool": "node-a"},
        "taint": {"key": "example.com/fw", "effect": "NoSchedule", **taint},
    }


@pytest.mark.parametrize(
    ("taint", "field", "words"),
    [
        ({"key": "-x"}, "input.taint.key", "must start and end with an alphanumeric"),
        ({"key": "Example.com/x"}, "input.taint.key", "prefix part a lowercase RFC 1123 subdomain"),
        ({"key": "x" * 100}, "input.taint.key", "no more than 63 bytes"),
        ({"key": "a/b/c"}, "input.taint.key", "optional DNS subdomain prefix"),
        ({"key": "bad key"}, "input.taint.key", "name part must consist of alphanumeric"),
        ({"value": "bad value"}, "input.taint.value", "a valid label must be an empty string"),
        ({"value": "-v"}, "input.taint.value", "a valid label must be an empty string"),
        ({"effect": "PreferNoSchedule"}, "input.taint.effect", "None, NoSchedule, NoExecute"),
    ],
)  # fmt: skip
def test_it_refuses_a_taint_the_api_server_would(
    api: APIClient, taint: dict[str, Any], field: str, words: str
) -> None:
    error = refused(api, "taint_impact", _taint(**taint))
    assert error["field"] == field
    assert words in error["message"]


def test_it_shows_a_non_ascii_taint_value_as_typed(api: APIClient) -> None:
    error = refused(api, "taint_impact", _taint(value="früh"))
    assert error["field"] == "input.taint.value"
    assert error["message"].startswith('Invalid value: "früh": ')
