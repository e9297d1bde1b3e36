"""Query strings and bodies that no view can use are refused up front with a 400 that names the field:
NUL characters (PostgreSQL cannot store them; no Kubernetes string holds one) and more parameters than
Django will parse. The API answers in its JSON error shape, pages with the error page."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from dradash.models import ApiToken

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator() -> Client:
    user = User.objects.create_user("olga", password="correct-horse-battery-staple-7")
    user.groups.add(Group.objects.get(name="operator"))
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("path", ["/api/maintenance/audit/", "/api/devices/", "/api/claims/"])
def test_it_refuses_a_nul_character_in_an_api_query_parameter_naming_it(operator: Client, path: str) -> None:
    response = operator.get(path, {"actor" if "audit" in path else "q": "ad\x00a"})
    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert error["field"] in {"actor", "q"} and "NUL" in error["message"]


def test_it_refuses_a_nul_character_in_a_page_query_parameter_with_the_error_page(operator: Client) -> None:
    response = operator.get("/maintenance/audit/", {"subject": "gpu\x00-1"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "<code>subject</code>" in page and "NUL" in page


def test_it_refuses_a_nul_character_in_a_form_field_and_stores_nothing(operator: Client) -> None:
    response = operator.post("/accounts/tokens/", {"name": "ci\x00pipeline"})
    assert response.status_code == 400
    assert "<code>name</code>" in response.content.decode()
    assert not ApiToken.objects.exists()


def test_it_refuses_a_nul_character_anywhere_in_a_json_body_naming_its_path(operator: Client) -> None:
    claim = {"kind": "ResourceClaim", "metadata": {"name": "a\x00b"}, "spec": {"devices": {}}}
    body = {"kind": "feasibility", "input": {"claims": [claim]}}
    response = operator.post("/api/whatif/runs/", json.dumps(body), content_type="application/json")
    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert error["field"] == "input.claims[0].metadata.name" and "NUL" in error["message"]


def test_it_answers_too_many_query_parameters_on_the_api_in_json(operator: Client, settings) -> None:
    query = "&".join(f"p{i}=1" for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1))
    response = operator.get(f"/api/devices/?{query}")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    error = response.json()["errors"][0]
    assert error["field"] == "query" and str(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS) in error["message"]


def test_it_names_the_limit_when_a_page_gets_too_many_query_parameters(operator: Client, settings) -> None:
    query = "&".join(f"p{i}=1" for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1))
    response = operator.get(f"/devices/?{query}")
    assert response.status_code == 400
    assert str(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS) in response.content.decode()


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/maintenance/", {"title": "t", "key": "\ud800"}, "key"),
        (
            "/api/whatif/runs/",
            {"kind": "headroom", "input": {"deviceClassName": "\udfff"}},
            "input.deviceClassName",
        ),
        ("/api/migration/upgrade/", {"yaml": "kind: \ud800"}, "yaml"),
    ],
)
def test_it_refuses_a_lone_surrogate_in_a_json_body_naming_its_path(
    operator: Client, path: str, body: dict[str, object], field: str
) -> None:
    # json.dumps writes a lone surrogate as the escape "\ud800": valid JSON, but no UTF-8 text
    response = operator.post(path, json.dumps(body), content_type="application/json")
    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert error["field"] == field and "surrogate" in error["message"]


@pytest.mark.parametrize("path", ["/api/whatif/runs/", "/api/migration/upgrade/"])
def test_it_answers_a_multipart_body_without_a_boundary_in_json_naming_the_body(
    operator: Client, path: str
) -> None:
    response = operator.post(path, b"--x\r\n", content_type="multipart/form-data")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["errors"][0]["field"] == "body"


def test_a_page_names_a_multipart_body_without_a_boundary(operator: Client) -> None:
    response = operator.post("/migration/upgrade/", b"--x\r\n", content_type="multipart/form-data")
    assert response.status_code == 400
    assert "<code>body</code>" in response.content.decode()
