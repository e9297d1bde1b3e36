"""The Upgrade manifests page: paste or upload, per-document side-by-side diff, notes, errors, download."""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils.html import escape

from migration.upgrade import MAX_UPLOAD_BYTES
from tests.dra.test_upgrade_yaml import MISCOUNTED_CLAIM
from tests.migration.conftest import FIXTURES

URL = "/migration/upgrade/"


def test_it_sends_anonymous_visitors_to_the_login_page(db: Any) -> None:
    response = Client().get(URL)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_it_shows_the_form_under_the_migration_nav_entry(viewer_client: Client) -> None:
    html = viewer_client.get(URL).content.decode()
    assert re.search(r'<a href="/migration/upgrade/" class="active">Migration</a>', html)
    assert 'name="yaml"' in html and 'type="file"' in html
    assert viewer_client.get("/migration/")["Location"] == URL


def test_it_shows_each_converted_document_side_by_side(viewer_client: Client) -> None:
    text = (FIXTURES / "mixed.yaml").read_text()
    html = viewer_client.post(URL, {"yaml": text, "inventory": "on"}).content.decode()
    assert 'id="doc-2"' in html and 'id="doc-1"' not in html  # only the changed document gets a diff
    rows = re.findall(r'<tr class="(\w+)"><td class="no">(\d*)</td><td class="old">(.*?)</td>', html)
    kinds = [kind for kind, _, _ in rows]
    assert "changed" in kinds and "added" in kinds
    assert ("changed", "2", "apiVersion: resource.k8s.io/v1beta1") in rows  # line 1 is its `---`
    assert "deviceClassName moved under exactly" in html
    # the summary reads "N documents: 1 converted" (the colon with its count, not a flex item of its own)
    assert re.search(r"<strong>\d+ documents:</strong>\s*<span class=\"badge ok\">1 converted</span>", html)
    assert re.search(r'<span class="badge">1 · Namespace ml</span>', html)
    link = re.search(
        r'id="download" download="manifests.v1.yaml" href="data:application/yaml;charset=utf-8,([^"]*)"', html
    )
    assert link is not None
    downloaded = urllib.parse.unquote(link.group(1))
    assert "exactly:\n          deviceClassName: h100.example.com" in downloaded


def test_a_pasted_manifest_downloads_with_one_line_ending(viewer_client: Client) -> None:
    """A textarea posts CRLF; the converted documents are written with LF: the download must not mix them."""
    text = (FIXTURES / "mixed.yaml").read_text().replace("\n", "\r\n")
    for body in ({"yaml": text, "inventory": "on"},
                 {"file": SimpleUploadedFile("m.yaml", text.encode()), "inventory": "on"}):  # fmt: skip
        html = viewer_client.post(URL, body).content.decode()
        link = re.search(
            r'id="download" download="[^"]+" href="data:application/yaml;charset=utf-8,([^"]*)"', html
        )
        assert link is not None
        downloaded = urllib.parse.unquote(link.group(1))
        assert "exactly:" in downloaded
        assert "\r" not in downloaded


def test_it_escapes_everything_that_came_in(viewer_client: Client) -> None:
    text = (
        "apiVersion: resource.k8s.io/v1beta1\nkind: DeviceClass\nmetadata:\n"
        '  name: x\n  annotations: {note: "<script>alert(1)</script>"}\n# <img src=x onerror=alert(2)>\n'
    )
    html = viewer_client.post(URL, {"yaml": text}).content.decode()
    assert "<script>alert(1)" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_it_names_the_document_and_field_it_refuses(viewer_client: Client) -> None:
    upload = SimpleUploadedFile("rules.yaml", (FIXTURES / "v1alpha3-taintrules.yaml").read_bytes())
    response = viewer_client.post(URL, {"file": upload})
    html = response.content.decode()
    assert response.status_code == 200
    assert re.search(r'<article class="panel doc refused" id="doc-2">', html)
    assert "<code>spec.deviceSelector.deviceClassName</code>: v1 DeviceTaintRules select devices only" in html
    assert 'id="download"' not in html and "Fix the errors below" in html


def test_a_refused_field_is_named_as_the_manifest_has_it_then_as_v1_has_it(viewer_client: Client) -> None:
    html = viewer_client.post(URL, {"yaml": MISCOUNTED_CLAIM}).content.decode()
    assert (
        "<code>spec.devices.requests[0].count</code> (in v1: <code>spec.devices.requests[0].exactly.count</code>): "
        "Kubernetes 1.37.0 schema: &#x27;two&#x27; is not of type" in html
    )


def test_it_refuses_an_empty_or_oversized_manifest_with_the_limit(viewer_client: Client) -> None:
    response = viewer_client.post(URL, {"yaml": ""})
    assert response.status_code == 400
    assert "paste manifests or upload a file" in response.content.decode()
    upload = SimpleUploadedFile("big.yaml", b"#" * (MAX_UPLOAD_BYTES + 1))
    response = viewer_client.post(URL, {"file": upload})
    assert response.status_code == 413
    assert f"the limit is {MAX_UPLOAD_BYTES} bytes (1 MiB)" in response.content.decode()


def _textarea(html: str) -> str:
    match = re.search(r'<textarea id="upgrade-yaml"[^>]*>\n(.*?)</textarea>', html, re.S)
    assert match is not None, html[:2000]
    return match.group(1)


def test_a_refused_form_keeps_what_was_pasted_and_the_inventory_choice(viewer_client: Client) -> None:
    pasted = "# mine <b>\n" + "[" * 500 + "]" * 500  # nested past the converter's limit: a 400
    response = viewer_client.post(URL, {"yaml": pasted})
    html = response.content.decode()
    assert response.status_code == 400 and "nests more than 100 levels deep" in html
    assert _textarea(html) == "# mine &lt;b&gt;\n" + "[" * 500 + "]" * 500
    assert re.search(r'<input type="checkbox" name="inventory" >', html)  # it was sent unticked


def test_it_refuses_a_pasted_text_and_a_file_together_naming_both(viewer_client: Client) -> None:
    pasted = (FIXTURES / "mixed.yaml").read_text()
    upload = SimpleUploadedFile("claims.yaml", (FIXTURES / "v1beta2-claims.yaml").read_bytes())
    response = viewer_client.post(URL, {"yaml": pasted, "file": upload, "inventory": "on"})
    html = response.content.decode()
    assert response.status_code == 400
    assert "<li><strong>Paste manifests</strong> (<code>yaml</code>): both yaml and file were given" in html
    assert 'id="upgrade-result"' not in html
    assert _textarea(html) == escape(pasted)
    # an empty textarea beside a file is what a form sends when only the file is chosen
    upload = SimpleUploadedFile("claims.yaml", (FIXTURES / "v1beta2-claims.yaml").read_bytes())
    assert viewer_client.post(URL, {"yaml": "  \r\n", "file": upload}).status_code == 200


def test_it_refuses_a_form_field_it_does_not_know_like_the_api(viewer_client: Client) -> None:
    text = (FIXTURES / "mixed.yaml").read_text()
    response = viewer_client.post(URL, {"yaml": text, "invenotry": "on"})
    html = response.content.decode()
    assert response.status_code == 400
    assert "<code>invenotry</code>: is not a field (known: file, inventory, yaml)" in html
    upload = SimpleUploadedFile("more.yaml", text.encode())
    response = viewer_client.post(URL, {"yaml": text, "file2": upload})
    assert response.status_code == 400 and "<code>file2</code>: is not a field" in response.content.decode()
