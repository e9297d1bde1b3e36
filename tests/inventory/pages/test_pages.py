"""The inventory pages, rendered against a small mirrored world."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from tests.inventory.pages_support import DRIVER, make_user, small_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world() -> dict[str, Any]:
    return small_world()


@pytest.fixture
def client_in(client: Client) -> Client:
    client.force_login(make_user())
    return client


def test_it_shows_per_class_totals_and_watch_health_on_the_overview(
    client_in: Client, world: dict[str, Any]
) -> None:
    html = client_in.get(reverse("inventory:overview")).content.decode()
    assert "gpu.example.com" in html
    assert 'data-testid="total-devices">6<' in html
    assert "resourceslices" in html and "synced" in html.lower()


def test_it_lists_devices_with_effective_taints_and_claim_in_the_table_data(
    client_in: Client, world: dict[str, Any]
) -> None:
    data = client_in.get(reverse("inventory:devices-data"), {"node": "node-1", "driver": DRIVER}).json()
    rows = {r["device"]: r for r in data["data"]}
    assert set(rows) == {"gpu-0", "gpu-1"}
    assert rows["gpu-0"]["claims"] == ["ml/train"] and rows["gpu-0"]["pods"] == ["ml/trainer-0"]
    assert rows["gpu-1"]["taints"][0]["effect"] == "NoExecute"
    assert rows["gpu-1"]["taints"][0]["rule"] == "drain-gpu-1"
    assert data["last_row"] == 2


def test_it_filters_devices_by_taint_effect_and_allocation_state(
    client_in: Client, world: dict[str, Any]
) -> None:
    tainted = client_in.get(reverse("inventory:devices-data"), {"taint": "NoSchedule"}).json()
    assert [(r["node"], r["device"]) for r in tainted["data"]] == [("node-2", "gpu-0")]
    allocated = client_in.get(reverse("inventory:devices-data"), {"state": "allocated"}).json()
    assert [r["device"] for r in allocated["data"]] == ["gpu-0"]


def test_it_paginates_devices_on_the_server(client_in: Client, world: dict[str, Any]) -> None:
    first = client_in.get(reverse("inventory:devices-data"), {"size": 4, "page": 1}).json()
    second = client_in.get(reverse("inventory:devices-data"), {"size": 4, "page": 2}).json()
    assert first["last_page"] == 2 and len(first["data"]) == 4 and len(second["data"]) == 2


def test_it_rejects_a_bad_page_size_naming_the_parameter(client_in: Client, world: dict[str, Any]) -> None:
    response = client_in.get(reverse("inventory:devices-data"), {"size": "9999"})
    assert response.status_code == 400
    assert "size must be between 1 and 500" in response.content.decode()


def test_it_keeps_filters_in_the_url_of_the_devices_page(client_in: Client, world: dict[str, Any]) -> None:
    html = client_in.get(
        reverse("inventory:devices"), {"taint": "NoExecute", "node": "node-1"}
    ).content.decode()
    assert 'data-url="/devices/data/?taint=NoExecute&amp;node=node-1"' in html
    assert '<option value="NoExecute" selected>' in html
    assert "/devices/export.csv?taint=NoExecute&amp;node=node-1" in html


def test_it_exports_filtered_devices_as_csv_and_json(client_in: Client, world: dict[str, Any]) -> None:
    csv_text = b"".join(
        client_in.get(reverse("inventory:devices-export-csv"), {"taint": "any"}).streaming_content
    )
    lines = csv_text.decode().strip().splitlines()
    assert lines[0].startswith("driver,pool,device,node")
    assert len(lines) == 3
    assert "example.com/maintenance=drain:NoExecute" in csv_text.decode()
    body = b"".join(
        client_in.get(reverse("inventory:devices-export-json"), {"state": "allocated"}).streaming_content
    )
    import json

    rows = json.loads(body)
    assert [r["device"] for r in rows] == ["gpu-0"]


def test_it_shows_taint_provenance_claim_pods_and_device_status_on_device_detail(
    client_in: Client, world: dict[str, Any]
) -> None:
    html = client_in.get(
        reverse("inventory:device-detail", args=[DRIVER, "node-1", "gpu-1"])
    ).content.decode()
    assert "DeviceTaintRule" in html and "drain-gpu-1" in html and "NoExecute" in html
    html0 = client_in.get(
        reverse("inventory:device-detail", args=[DRIVER, "node-1", "gpu-0"])
    ).content.decode()
    assert "ml/train" in html0 and "trainer-0" in html0
    shown = re.sub(r"</?bdi[^>]*>", "", html0)  # the cluster's strings, each in its own <bdi>
    assert "eth1" in shown and "10.0.0.5/24" in shown and "Ready=True" in shown


def test_it_returns_404_for_a_device_that_is_gone(client_in: Client, world: dict[str, Any]) -> None:
    assert (
        client_in.get(reverse("inventory:device-detail", args=[DRIVER, "node-9", "gpu-7"])).status_code == 404
    )


def test_a_misspelt_filter_is_named_and_lists_nothing_instead_of_everything(
    client_in: Client, world: dict[str, Any]
) -> None:
    html = client_in.get(reverse("inventory:devices"), {"nodee": "node-1", "sort": "pool"}).content.decode()
    assert "<li><code>nodee</code>: not a filter of this page</li>" in html
    assert "This page's filters: <strong>Search</strong> (<code>q</code>), <strong>Driver</strong>" in html
    assert 'data-invalid="true"' in html  # the table fetches nothing
    assert "sort:" not in html  # paging and sorting are not filters, and not refused
    assert 'id="export-csv"' not in html and 'id="export-json"' not in html  # they would answer 400
    assert (
        'id="export-csv"' in client_in.get(reverse("inventory:devices"), {"node": "node-1"}).content.decode()
    )

    claims = client_in.get(reverse("inventory:claims"), {"stat": "pending"}).content.decode()
    assert "<code>stat</code>: not a filter of this page" in claims
    assert "train" not in claims.split("<code>stat</code>: not a filter", 1)[1]
    assert "train" in client_in.get(reverse("inventory:claims")).content.decode()


def test_it_lists_claims_and_shows_a_claims_results_and_consumers(
    client_in: Client, world: dict[str, Any]
) -> None:
    html = client_in.get(reverse("inventory:claims")).content.decode()
    assert "train" in html and "reserved" in html
    detail = client_in.get(reverse("inventory:claim-detail", args=["ml", "train"])).content.decode()
    assert "gpu-0" in detail and "trainer-0" in detail and "Running" in detail
    # The consumer's YAML is a button of its own: two plain links side by side read as one name.
    yaml = r'</a> <a class="btn small" href="/objects/pods/[^"]+/yaml/">YAML</a>'
    assert re.search(r"pods/<a [^>]*>[^<]*(<bdi[^>]*>)?trainer-0(</bdi>)?" + yaml, detail)


def test_it_shows_classes_with_their_implicit_extended_resource_name(
    client_in: Client, world: dict[str, Any]
) -> None:
    html = client_in.get(reverse("inventory:classes")).content.decode()
    assert "deviceclass.resource.kubernetes.io/gpu.example.com" in html


def test_every_column_of_the_classes_table_is_named_for_a_screen_reader(
    client_in: Client, world: dict[str, Any]
) -> None:
    """The last column (each class's YAML link) had an empty header cell: a screen reader announced it as
    nothing."""
    html = client_in.get(reverse("inventory:classes")).content.decode()
    head = html.split("<thead>")[1].split("</thead>")[0]
    names = [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<th[^>]*>(.*?)</th>", head)]
    assert names[-1] == "Manifest" and all(names), names


def test_it_shows_taint_rules_with_matched_devices_and_eviction_condition(
    client_in: Client, world: dict[str, Any]
) -> None:
    html = client_in.get(reverse("inventory:taint-rules")).content.decode()
    assert "drain-gpu-1" in html and "EvictionInProgress=True" in html
    detail = client_in.get(reverse("inventory:taint-rule-detail", args=["drain-gpu-1"])).content.decode()
    assert "Matched devices (1)" in detail and "gpu-1" in detail


def test_it_lists_nodes_as_a_table_with_counts_per_driver_linking_to_the_node_page(
    client_in: Client, world: dict[str, Any]
) -> None:
    html = client_in.get(reverse("inventory:nodes")).content.decode()
    row = html.split('<tr data-node="node-1">')[1].split("</tr>")[0]
    assert f'href="{reverse("inventory:node-detail", args=["node-1"])}"' in row
    gpu = row.split(f'data-driver="{DRIVER}">')[1].split("</td>")[0]
    assert "1 / 1</a>" in gpu and "1 tainted" in gpu  # gpu-0 allocated, gpu-1 free and tainted
    assert 'data-pods="1"' in row


def test_it_groups_a_nodes_devices_by_numa_node(client_in: Client, world: dict[str, Any]) -> None:
    html = client_in.get(reverse("inventory:node-detail", args=["node-1"])).content.decode()
    numa0 = html.split('data-numa="0"')[1].split('data-numa="1"')[0]
    assert "gpu-0" in numa0 and "nic-0" in numa0 and "gpu-1" not in numa0
    assert '<span data-count="allocated">1 allocated</span>' in numa0


def test_it_shows_an_object_as_yaml(client_in: Client, world: dict[str, Any]) -> None:
    rule = world["rule"]
    html = client_in.get(
        reverse("inventory:object-yaml", args=["devicetaintrules", rule.uid])
    ).content.decode()
    assert "deviceSelector:" in html and "example.com/maintenance" in html


def test_it_renders_only_the_asked_fragment(client_in: Client, world: dict[str, Any]) -> None:
    html = client_in.get(reverse("inventory:taint-rules"), {"fragment": "body"}).content.decode()
    assert html.lstrip().startswith('<div id="taint-rules-body"') and "<html" not in html
    bad = client_in.get(reverse("inventory:taint-rules"), {"fragment": "<script>x</script>"})
    assert bad.status_code == 400 and bad["Content-Type"].startswith("text/plain")


def _query_count(client: Client, url: str, params: dict[str, Any]) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url, params).status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.parametrize(
    "name",
    [
        "inventory:devices-data",
        "inventory:claims",
        "inventory:taint-rules",
        "inventory:overview",
        "inventory:nodes",
    ],
)
def test_it_uses_as_many_queries_for_many_rows_as_for_few(
    client_in: Client, world: dict[str, Any], name: str
) -> None:
    from tests.inventory.pages_support import device

    url = reverse(name)
    few = _query_count(client_in, url, {"size": 100})
    from inventory.models import Claim

    for i in range(40):
        device(f"gpu-{i + 10}", node=f"node-{3 + i % 5}", numa=i % 2)
        Claim.objects.create(uid=f"uid-c{i}", namespace="ml", name=f"c{i}", state="pending")
    assert _query_count(client_in, url, {"size": 100}) == few


def test_it_explains_an_invalid_filter_naming_the_field(client_in: Client, world: dict[str, Any]) -> None:
    response = client_in.get(reverse("inventory:devices-data"), {"taint": "Sometimes"})
    assert response.status_code == 400
    assert "taint" in response.json()["errors"]
    page = client_in.get(reverse("inventory:devices"), {"taint": "Sometimes"}).content.decode()
    assert "<strong>Taint</strong> (<code>taint</code>): Select a valid choice" in page


def test_it_filters_devices_by_attribute(client_in: Client, world: dict[str, Any]) -> None:
    from tests.inventory.pages_support import device

    device("gpu-9", node="node-3", attributes={"model": {"string": "b200"}})
    data = client_in.get(reverse("inventory:devices-data"), {"attribute": "model=b200"}).json()
    assert [r["device"] for r in data["data"]] == ["gpu-9"]


def test_it_escapes_and_caps_what_the_cluster_says(
    client_in: Client, world: dict[str, Any], settings: Any
) -> None:
    from tests.inventory.pages_support import device, taint, taint_fields

    settings.DRADASH_MAX_STRING = 100
    hostile = taint("<script>alert(1)</script>", "NoSchedule", value="x" * 5000)
    device("gpu-7", node="node-3", **taint_fields(hostile))
    html = client_in.get(
        reverse("inventory:device-detail", args=[DRIVER, "node-3", "gpu-7"])
    ).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "x" * 200 not in html and "x" * 99 + "…" in html


def test_it_links_a_device_whose_pool_name_has_slashes(client_in: Client, world: dict[str, Any]) -> None:
    from tests.inventory.pages_support import device

    device("gpu-0", node="node-4", pool="rack-1/node-4")
    url = reverse("inventory:device-detail", args=[DRIVER, "rack-1/node-4", "gpu-0"])
    assert client_in.get(url).status_code == 200
    row = client_in.get(reverse("inventory:devices-data"), {"pool": "rack-1/node-4"}).json()["data"][0]
    assert row["url"] == url


def test_it_warns_when_two_classes_claim_the_same_extended_resource(
    client_in: Client, world: dict[str, Any]
) -> None:
    from tests.inventory.pages_support import kube

    for name, created in (("gpu-old", "2026-11-01T10:00:00Z"), ("gpu-new", "2026-11-05T10:00:00Z")):
        kube(
            "deviceclasses",
            name,
            {"metadata": {"creationTimestamp": created}, "spec": {"extendedResourceName": "example.com/gpu"}},
        )
    html = client_in.get(reverse("inventory:classes")).content.decode()
    assert 'data-testid="class-conflict"' in html
    warning = html.split('data-testid="class-conflict"')[1].split("</div>")[0]
    assert "gpu-new wins" in warning and "gpu-old" in warning
    assert "lost conflict" in html


def test_it_shows_free_devices_what_fits_together_and_why_the_rest_does_not_on_the_overview(
    client_in: Client,
) -> None:
    from tests.inventory import factories as f

    f.partitionable_pool()  # one 40Gi GPU, three 20Gi partitions
    f.write(("resourceclaims", f.claim("mig", results=[f.result("gpu-0-mig-0")])))

    def row(html: str) -> str:
        return html.split('<tr data-class="gpu.example.com">')[1].split("</tr>")[0]

    overview = row(client_in.get(reverse("inventory:overview")).content.decode())
    # Two partitions would each fit on their own; only one fits beside the other.
    assert (
        'data-testid="free"><a href="/devices/?device_class=gpu.example.com&allocatable=yes"><b>2</b>'
        in overview
    )
    assert 'data-testid="headroom"><b>1</b>' in overview

    f.write(("resourceclaims", f.claim("mig-2", results=[f.result("gpu-0-mig-1")])))
    overview = row(client_in.get(reverse("inventory:overview")).content.decode())
    assert "<b>0</b>" in overview.split('data-testid="free"')[1]
    assert "1 counters used" in overview
    assert "state=free&allocatable=counters" in overview
    classes = row(client_in.get(reverse("inventory:classes")).content.decode())
    assert 'data-testid="headroom">0<' in classes


def test_it_counts_the_devices_each_rule_selects(world: dict[str, Any]) -> None:
    from inventory.selectors.rules import taint_rule_list
    from tests.inventory.pages_support import kube

    taint = {"key": "k", "effect": "None"}
    kube("devicetaintrules", "all", {"spec": {"deviceSelector": {}, "taint": taint}})
    kube("devicetaintrules", "none", {"spec": {"taint": taint}})
    kube(
        "devicetaintrules",
        "nics",
        {"spec": {"deviceSelector": {"driver": "nic.example.com"}, "taint": taint}},
    )
    kube(
        "devicetaintrules",
        "pool",
        {"spec": {"deviceSelector": {"driver": DRIVER, "pool": "node-2"}, "taint": taint}},
    )

    def counts(rows: Any) -> dict[str, int]:
        return {r.name: r.matched_devices for r in rows}

    assert counts(taint_rule_list()) == {"all": 6, "drain-gpu-1": 1, "nics": 2, "none": 0, "pool": 2}


def test_it_explains_an_invalid_claim_filter(client_in: Client, world: dict[str, Any]) -> None:
    html = client_in.get(reverse("inventory:claims"), {"state": "exploded"}).content.decode()
    assert "<strong>State</strong> (<code>state</code>): Select a valid choice" in html
    assert "Nothing is listed while the query above is refused." in html


def test_it_sorts_devices_by_taint_severity_on_the_server(client_in: Client, world: dict[str, Any]) -> None:
    data = client_in.get(reverse("inventory:devices-data"), {"sort": "taints", "dir": "desc"}).json()
    effects = [r["taints"][0]["effect"] if r["taints"] else "" for r in data["data"]]
    assert effects[:2] == ["NoExecute", "NoSchedule"] and set(effects[2:]) == {""}
    by_node = client_in.get(reverse("inventory:devices-data"), {"sort": "node", "dir": "desc"}).json()
    assert by_node["data"][0]["node"] == "node-2"


def test_it_rejects_an_unknown_sort_naming_the_choices(client_in: Client, world: dict[str, Any]) -> None:
    response = client_in.get(reverse("inventory:devices-data"), {"sort": "attributes"})
    assert response.status_code == 400
    assert (
        "sort must be one of age, allocatable, device, health, node, numa, pool, state, taints"
        in response.content.decode()
    )


def test_it_says_on_the_device_page_why_a_free_device_cannot_be_given_and_what_its_pool_offers(
    client_in: Client,
) -> None:
    from tests.inventory import factories as f

    f.partitionable_pool()
    f.write(("resourceclaims", f.claim("mig", results=[f.result("gpu-0-mig-0"), f.result("gpu-0-mig-1")])))
    html = client_in.get(
        reverse("inventory:device-detail", args=[DRIVER, "node-0", "gpu-0-mig-2"])
    ).content.decode()
    allocatable = html.split('data-testid="device-allocatable">')[1].split("</dd>")[0]
    assert "counters used" in allocatable
    assert "counter set gpu-0-slices used by gpu-0-mig-0, gpu-0-mig-1" in allocatable
    pool = html.split('data-testid="pool-availability">')[1].split("</div>")[0]
    assert "this pool: <b>0</b> free, <b>0</b> fit together" in pool and "all pools: 0 free, 0 fit" in pool


def test_the_pod_and_node_pages_refresh_their_live_body(client_in: Client, world: dict[str, Any]) -> None:
    pod = client_in.get(reverse("inventory:pod-detail", args=["ml", "trainer-0"]), {"fragment": "body"})
    assert pod.content.decode().lstrip().startswith('<div id="pod-body"')
    node = client_in.get(reverse("inventory:node-detail", args=["node-1"]), {"fragment": "body"})
    assert node.content.decode().lstrip().startswith('<div id="node-body"')
    assert client_in.get(reverse("inventory:node-detail", args=["node-9"])).status_code == 404
    assert client_in.post(reverse("inventory:node-detail", args=["node-1"])).status_code == 405


def test_free_only_ever_means_allocatable_now_unallocated_devices_say_unallocated(
    client_in: Client, world: dict[str, Any]
) -> None:
    """Overview and Classes say "free" for devices a claim could be given now; the devices no claim holds
    (some of them tainted, or their shared counters used up) are "unallocated" everywhere else."""
    devices = client_in.get(reverse("inventory:devices")).content.decode()
    assert '<option value="free">unallocated</option>' in devices
    assert ">free<" not in devices
    nodes = client_in.get(reverse("inventory:nodes")).content.decode()
    assert "allocated / unallocated · tainted" in nodes and "/ free" not in nodes
    node = client_in.get(reverse("inventory:node-detail", args=["node-1"])).content.decode()
    assert re.search(r'data-count="free"[^>]*>1 unallocated</span>', node)
    assert 'data-state="free">unallocated</span>' in node
    assert not re.search(r"\bfree\b", re.sub(r'data-[a-z-]+="free"', "", node.split("<main ")[1]))
    api = client_in.get(reverse("inventory:devices-data"), {"state": "free"}).json()
    assert api["data"] and {r["state"] for r in api["data"]} == {"free"}  # the data keeps its value
