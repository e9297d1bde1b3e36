"""POST /api/migration/upgrade/: JSON or a file in, the per-document report, the new stream and its diff out."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from dra.upgrade import load_documents
from migration.upgrade import MAX_UPLOAD_BYTES
from tests.dra.test_upgrade_yaml import MISCOUNTED_CLAIM
from tests.migration.conftest import FIXTURES

URL = "/api/migration/upgrade/"


def test_it_converts_a_pasted_stream_for_a_viewer(viewer_client: Client) -> None:
    text = (FIXTURES / "mixed.yaml").read_text()
    response = viewer_client.post(URL, {"yaml": text}, content_type="application/json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["changed"] is True and body["failed"] is False
    assert [
        (d["index"], d["kind"], d["name"], d["from"], d["to"], d["action"]) for d in body["documents"]
    ] == [
        (1, "Namespace", "ml", "v1", "v1", "kept"),
        (
            2,
            "ResourceClaimTemplate",
            "single-h100",
            "resource.k8s.io/v1beta1",
            "resource.k8s.io/v1",
            "converted",
        ),
        (3, "Pod", "trainer", "v1", "v1", "kept"),
    ]
    assert body["documents"][1]["notes"][1] == "request 'gpu': deviceClassName moved under exactly"
    assert load_documents(body["yaml"])[1]["spec"]["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "h100.example.com",
        "allocationMode": "ExactCount",
        "count": 1,
    }
    assert "+apiVersion: resource.k8s.io/v1\n" in body["diff"]


def test_it_takes_an_uploaded_file(viewer_client: Client) -> None:
    upload = SimpleUploadedFile("claims.yaml", (FIXTURES / "v1beta2-claims.yaml").read_bytes())
    response = viewer_client.post(URL, {"file": upload})
    assert response.status_code == 200
    assert response.json()["diff"].startswith("--- a/claims.yaml\n")


def test_it_answers_422_naming_the_document_and_field_it_cannot_convert(viewer_client: Client) -> None:
    text = (FIXTURES / "v1alpha3-taintrules.yaml").read_text()
    response = viewer_client.post(URL, {"yaml": text}, content_type="application/json")
    assert response.status_code == 422
    body = response.json()
    assert body["yaml"] is None and body["diff"] is None and body["failed"] is True
    (error,) = body["errors"]
    assert (error["field"], error["document"], error["path"]) == (
        "yaml",
        2,
        "spec.deviceSelector.deviceClassName",
    )
    assert body["documents"][1]["errors"][0]["field"] == "spec.deviceSelector.deviceClassName"
    assert body["detail"].startswith("yaml: ")


def test_a_refused_field_is_named_as_the_manifest_has_it_and_as_v1_has_it(viewer_client: Client) -> None:
    response = viewer_client.post(URL, {"yaml": MISCOUNTED_CLAIM}, content_type="application/json")
    assert response.status_code == 422
    (error,) = response.json()["errors"]
    assert (error["path"], error["converted_path"]) == (
        "spec.devices.requests[0].count",
        "spec.devices.requests[0].exactly.count",
    )
    (document,) = response.json()["documents"]
    assert [(e["field"], e["converted_path"]) for e in document["errors"]] == [
        ("spec.devices.requests[0].count", "spec.devices.requests[0].exactly.count")
    ]


@pytest.mark.parametrize(
    ("payload", "field", "words"),
    [
        ({}, "yaml", "Required value"),
        ({"yaml": "   "}, "yaml", "Required value"),
        ({"yaml": ["a"]}, "yaml", "must be a string"),
        ({"yaml": "a: 1", "inventory": "maybe"}, "inventory", "true or false"),
    ],
)
def test_it_answers_400_naming_the_field(viewer_client: Client, payload: Any, field: str, words: str) -> None:
    response = viewer_client.post(URL, payload, content_type="application/json")
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error["field"] == field and words in error["message"]


def test_it_refuses_a_json_field_it_does_not_know_naming_it(viewer_client: Client) -> None:
    for payload, field in (
        ({"yaml": "a: 1", "inventroy": False}, "inventroy"),  # misspelt: inventory would silently stay on
        ({"file": "a: 1"}, "file"),  # a JSON body carries `yaml`; `file` is multipart's
    ):
        response = viewer_client.post(URL, payload, content_type="application/json")
        assert response.status_code == 400, response.content
        assert response.json()["errors"] == [
            {"field": field, "message": "is not a field (known: inventory, yaml)"}
        ]


def test_it_refuses_form_fields_and_files_it_does_not_know_naming_them(viewer_client: Client) -> None:
    def upload(name: str = "claims.yaml") -> SimpleUploadedFile:
        return SimpleUploadedFile(name, (FIXTURES / "v1beta2-claims.yaml").read_bytes())

    for payload, field, message in (
        (
            {"file": upload(), "invenotry": "false"},
            "invenotry",
            "is not a field (known: file, inventory, yaml)",
        ),
        (
            {"file": upload(), "file2": upload("more.yaml")},
            "file2",
            "is not a field (known: file, inventory, yaml)",
        ),
        ({"file": [upload(), upload("more.yaml")]}, "file", "one file per request, got 2"),
    ):
        response = viewer_client.post(URL, payload)
        assert response.status_code == 400, response.content
        assert response.json()["errors"] == [{"field": field, "message": message}]


def test_it_refuses_a_json_array(viewer_client: Client) -> None:
    response = viewer_client.post(URL, ["a: 1"], content_type="application/json")
    assert response.status_code == 400
    body = response.json()
    assert body["errors"][0]["field"] == "body" and "JSON object" in body["errors"][0]["message"]
    assert body["detail"] == "body: must be a JSON object, got a list"


def test_it_refuses_json_nested_too_deep_with_400(viewer_client: Client) -> None:
    response = viewer_client.post(URL, "[" * 5000 + "]" * 5000, content_type="application/json")
    assert response.status_code == 400 and "nested" in response.json()["detail"]


def test_it_answers_413_naming_the_limit(viewer_client: Client) -> None:
    big = "# " + "x" * MAX_UPLOAD_BYTES + "\n"
    response = viewer_client.post(URL, {"yaml": big}, content_type="application/json")
    assert response.status_code == 413
    assert f"the limit is {MAX_UPLOAD_BYTES} bytes (1 MiB)" in response.json()["errors"][0]["message"]
    huge = "x" * (3 * MAX_UPLOAD_BYTES)  # past the body limit: refused before the body is parsed
    response = viewer_client.post(URL, {"yaml": huge}, content_type="application/json")
    assert response.status_code == 413
    upload = SimpleUploadedFile("big.yaml", big.encode())
    response = viewer_client.post(URL, {"file": upload})
    assert response.status_code == 413 and response.json()["errors"][0]["field"] == "file"


def test_it_refuses_a_file_that_is_not_utf8(viewer_client: Client) -> None:
    upload = SimpleUploadedFile("latin1.yaml", "name: caf\xe9\n".encode("latin-1"))
    response = viewer_client.post(URL, {"file": upload})
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "file", "message": "not UTF-8 text (byte 9)"}]


def test_it_requires_a_login(db: Any) -> None:
    response = Client().post(URL, {"yaml": "a: 1"}, content_type="application/json")
    assert response.status_code in (401, 403)


def test_it_answers_422_naming_a_pasted_text_that_is_no_kubernetes_object(viewer_client: Client) -> None:
    response = viewer_client.post(URL, {"yaml": "just a string"}, content_type="application/json")
    assert response.status_code == 422
    assert "is a string, not a Kubernetes object" in json.dumps(response.json())


def test_it_refuses_a_pasted_text_and_a_file_together_naming_both(viewer_client: Client) -> None:
    """As the page does: neither silently wins."""
    upload = SimpleUploadedFile("claims.yaml", (FIXTURES / "v1beta2-claims.yaml").read_bytes())
    response = viewer_client.post(URL, {"yaml": (FIXTURES / "mixed.yaml").read_text(), "file": upload})
    assert response.status_code == 400, response.content
    (error,) = response.json()["errors"]
    assert error["field"] == "yaml"
    assert error["message"].startswith("both yaml and file were given")
