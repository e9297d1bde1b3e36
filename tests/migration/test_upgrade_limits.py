"""The page and the API refuse manifests that would exhaust the converter (a 400 naming the rule, never a
500 or minutes of work): nesting too deep, aliases that expand too far, too many documents."""

from __future__ import annotations

import textwrap

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from dra.upgrade import MAX_DEPTH
from tests.dra.test_upgrade_limits import PREFIX, billion_laughs, deep_class

API = "/api/migration/upgrade/"
PAGE = "/migration/upgrade/"


def _api_error(client: Client, text: str) -> dict[str, str]:
    response = client.post(API, {"yaml": text}, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    (error,) = response.json()["errors"]
    return dict(error)


def _page_error(client: Client, text: str) -> str:
    upload = SimpleUploadedFile("deep.yaml", text.encode())
    response = client.post(PAGE, {"file": upload})
    assert response.status_code == 400, response.content[:300]
    html = response.content.decode()
    assert "<li><strong>Upload a file</strong> (<code>file</code>): " in html
    return html


DEEP = "[" * 5000 + "]" * 5000


def test_it_refuses_yaml_nested_too_deep_with_400(viewer_client: Client) -> None:
    error = _api_error(viewer_client, DEEP)
    assert error["field"] == "yaml"
    assert "nests more than 100 levels deep" in error["message"]
    assert "nests more than 100 levels deep" in _page_error(viewer_client, "a: 1\n---\n" + DEEP)


def test_it_converts_a_manifest_nested_to_the_limit(viewer_client: Client) -> None:
    response = viewer_client.post(API, {"yaml": deep_class(MAX_DEPTH)}, content_type="application/json")
    assert response.status_code == 200 and response.json()["documents"][1]["action"] == "converted"
    upload = SimpleUploadedFile("deep.yaml", deep_class(MAX_DEPTH).encode())
    assert viewer_client.post(PAGE, {"file": upload}).status_code == 200


def test_it_refuses_aliases_that_expand_too_far_with_400(viewer_client: Client) -> None:
    # a million nodes once expanded, from 600 bytes, in a DeviceClass's opaque parameters
    bomb = PREFIX + "\n" + textwrap.indent(billion_laughs(6), " " * 8)
    error = _api_error(viewer_client, bomb)
    assert error["field"] == "yaml"
    assert "aliases expand to more than 10000 nodes" in error["message"]
    assert "aliases expand to more than 10000 nodes" in _page_error(viewer_client, bomb)


def test_it_refuses_more_than_1000_documents_with_400_naming_the_limit(viewer_client: Client) -> None:
    error = _api_error(viewer_client, "a: 1\n---\n" * 5000)
    assert error == {"field": "yaml", "message": "too many documents: 5001; the limit is 1000 documents"}
    html = _page_error(viewer_client, "---\n" * 5000)
    assert "too many documents: 5000; the limit is 1000 documents" in html
    assert "up to 1.0\xa0MB and 1000 documents" in html
    kept = "apiVersion: v1\nkind: ConfigMap\n"
    fits = viewer_client.post(API, {"yaml": f"{kept}---\n" * 999 + kept}, content_type="application/json")
    assert fits.status_code == 200 and len(fits.json()["documents"]) == 1000
