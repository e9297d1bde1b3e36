"""list: selectors, pagination over a consistent snapshot, resourceVersion semantics, Table output."""

from __future__ import annotations

import base64
import urllib.parse

import pytest

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Http
from tests.simcluster.samples import sample

SLICES = "/apis/resource.k8s.io/v1/resourceslices"
PODS = "/api/v1/namespaces/default/pods"


def _slice(name: str, node: str, driver: str = "gpu.example.com", **labels: str) -> dict:
    obj = sample("resourceslices", name=name, labels=labels)
    obj["spec"]["nodeName"] = node
    obj["spec"]["driver"] = driver
    obj["spec"]["pool"]["name"] = node
    return obj


@pytest.fixture
def slices(cluster: SimCluster) -> None:
    cluster.store.create("resourceslices", _slice("a", "node-1", tier="gold", zone="z1"))
    cluster.store.create("resourceslices", _slice("b", "node-2", tier="silver", zone="z1"))
    cluster.store.create("resourceslices", _slice("c", "node-3", "nic.example.com", zone="z2"))
    cluster.store.create("resourceslices", _slice("d", "node-1", "nic.example.com"))


def _names(http: Http, path: str, **query: str) -> list[str]:
    status, _, body = http.get(f"{path}?{urllib.parse.urlencode(query)}")
    assert status == 200, body
    return [item["metadata"]["name"] for item in body["items"]]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("tier=gold", ["a"]),
        ("tier==gold", ["a"]),
        ("tier!=gold", ["b", "c", "d"]),
        ("tier in (gold,silver)", ["a", "b"]),
        ("tier notin (gold)", ["b", "c", "d"]),
        ("zone", ["a", "b", "c"]),
        ("!zone", ["d"]),
        ("zone=z1,tier=silver", ["b"]),
    ],
)
def test_it_filters_by_label_selector(http: Http, slices: None, selector: str, expected: list[str]) -> None:
    assert _names(http, SLICES, labelSelector=selector) == expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("spec.nodeName=node-1", ["a", "d"]),
        ("spec.driver=nic.example.com", ["c", "d"]),
        ("spec.driver!=nic.example.com,spec.nodeName=node-1", ["a"]),
        ("metadata.name=c", ["c"]),
    ],
)
def test_it_filters_resource_slices_by_field_selector(
    http: Http, slices: None, selector: str, expected: list[str]
) -> None:
    assert _names(http, SLICES, fieldSelector=selector) == expected


def test_it_filters_pods_by_node_and_phase(cluster: SimCluster, http: Http) -> None:
    pod = sample("pods", name="bound")
    pod["spec"]["nodeName"] = "node-1"
    cluster.store.create("pods", pod)
    cluster.store.create("pods", sample("pods", name="pending"))
    assert _names(http, PODS, fieldSelector="spec.nodeName=node-1") == ["bound"]
    assert _names(http, PODS, fieldSelector="status.phase=Pending") == ["bound", "pending"]
    assert _names(http, "/api/v1/pods", fieldSelector="spec.nodeName=") == ["pending"]


def test_it_rejects_a_malformed_label_selector_naming_the_rule(http: Http) -> None:
    status, _, body = http.get(f"{SLICES}?labelSelector=tier%3Dhas%40sign")
    assert status == 400
    assert body["reason"] == "BadRequest"
    assert body["message"].startswith(
        'unable to parse requirement: values[0][tier]: Invalid value: "has@sign": a valid label must be'
    )


def test_it_rejects_unsupported_field_labels(http: Http) -> None:
    status, _, body = http.get(f"{SLICES}?fieldSelector=spec.devices%3Dx")
    assert status == 400
    assert body["reason"] == "BadRequest"
    assert (
        body["message"]
        == "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.devices"
    )


def test_it_pages_through_a_consistent_snapshot(cluster: SimCluster, http: Http, slices: None) -> None:
    status, _, first = http.get(f"{SLICES}?limit=2")
    assert status == 200
    assert [i["metadata"]["name"] for i in first["items"]] == ["a", "b"]
    assert first["metadata"]["remainingItemCount"] == 2
    token = first["metadata"]["continue"]
    cluster.store.delete("resourceslices", "c")
    cluster.store.create("resourceslices", _slice("bb", "node-9"))
    _, _, second = http.get(f"{SLICES}?limit=2&continue={token}")
    assert [i["metadata"]["name"] for i in second["items"]] == ["c", "d"]
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert "continue" not in second["metadata"]


def test_it_expires_continue_tokens_after_compaction(cluster: SimCluster, http: Http, slices: None) -> None:
    _, _, first = http.get(f"{SLICES}?limit=1")
    cluster.store.create("resourceslices", _slice("e", "node-5"))
    cluster.faults.compact_history()
    status, _, body = http.get(f"{SLICES}?limit=1&continue={first['metadata']['continue']}")
    assert status == 410
    assert body["reason"] == "Expired"
    assert body["metadata"]["continue"]
    _, _, rest = http.get(f"{SLICES}?continue={body['metadata']['continue']}")
    assert [i["metadata"]["name"] for i in rest["items"]] == ["b", "c", "d", "e"]


def test_it_lists_at_an_exact_older_resource_version(cluster: SimCluster, http: Http, slices: None) -> None:
    rv = cluster.store.resource_version
    cluster.store.delete("resourceslices", "a")
    cluster.store.create("resourceslices", _slice("z", "node-7"))
    assert _names(http, SLICES, resourceVersion=str(rv), resourceVersionMatch="Exact") == ["a", "b", "c", "d"]
    assert _names(http, SLICES) == ["b", "c", "d", "z"]
    status, _, _ = http.get(f"{SLICES}?resourceVersionMatch=Exact")
    assert status == 422


def test_it_prints_tables_for_kubectl(cluster: SimCluster, http: Http, slices: None) -> None:
    status, _, table = http.get(SLICES, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert status == 200
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Node", "Driver", "Pool", "Age"]
    assert table["rows"][0]["cells"][:4] == ["a", "node-1", "gpu.example.com", "node-1"]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_it_serves_a_large_list_from_cached_bytes(cluster: SimCluster, http: Http) -> None:
    devices = [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(8)]
    for n in range(300):
        obj = _slice(f"node-{n:04d}-gpu", f"node-{n:04d}")
        obj["spec"]["devices"] = devices
        cluster.store.create("resourceslices", obj)
    _, _, body = http.get(SLICES)
    assert len(body["items"]) == 300
    assert sum(len(i["spec"]["devices"]) for i in body["items"]) == 2400


def test_it_selects_pods_by_ip_host_network_and_the_old_host_name(cluster: SimCluster, http: Http) -> None:
    for name, ip in (("first", "10.244.0.7"), ("second", "10.244.0.8")):
        pod = sample("pods", name=name)
        pod["spec"]["nodeName"] = "node-1"
        pod["spec"]["hostNetwork"] = name == "second"
        cluster.store.create("pods", pod)
        cluster.store.patch(
            "pods",
            name,
            {"status": {"podIP": ip, "podIPs": [{"ip": ip}]}},
            namespace="default",
            subresource="status",
        )
    assert _names(http, PODS, fieldSelector="status.podIP=10.244.0.8") == ["second"]
    assert _names(http, PODS, fieldSelector="spec.hostNetwork=false") == ["first"]
    assert _names(http, PODS, fieldSelector="spec.host=node-1") == ["first", "second"]
    assert _names(http, PODS, fieldSelector="status.podIPs=") == ["first", "second"]


def _continue_token(http: Http, path: str) -> bytes:
    status, _, body = http.get(f"{path}?limit=1")
    assert status == 200, body
    token = body["metadata"]["continue"]
    return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))


def test_it_encodes_continue_tokens_as_the_storage_layer_does(
    cluster: SimCluster, http: Http, slices: None
) -> None:
    for name, namespace in (("a", "default"), ("b", "default"), ("c", "kube-system")):
        cluster.store.create("resourceclaims", sample("resourceclaims", name=name, namespace=namespace))
    # Go's json.Marshal of the key past the list's prefix: a namespaced list's prefix ends in its namespace
    assert _continue_token(http, SLICES).endswith(b',"start":"a\\u0000"}')
    claims = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
    assert _continue_token(http, claims).endswith(b',"start":"a\\u0000"}')
    every = _continue_token(http, "/apis/resource.k8s.io/v1/resourceclaims")
    assert every.startswith(b'{"v":"meta.k8s.io/v1","rv":') and every.endswith(
        b',"start":"default/a\\u0000"}'
    )
    for path, rest in (
        (SLICES, ["b", "c", "d"]),
        (claims, ["b"]),
        ("/apis/resource.k8s.io/v1/resourceclaims", ["b", "c"]),
    ):
        _, _, first = http.get(f"{path}?limit=1")
        assert _names(http, path, **{"continue": first["metadata"]["continue"]}) == rest


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("resourceVersionMatch=Exact",
         "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"),
        ("resourceVersion=0&resourceVersionMatch=Exact",
         'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
        ("resourceVersion=1&resourceVersionMatch=Newest",
         'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""'),
        ("sendInitialEvents=true", "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"),
        ("watch=true&sendInitialEvents=true",
         "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
        ("watch=true&resourceVersionMatch=NotOlderThan",
         "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"),
    ],
)  # fmt: skip
def test_it_refuses_list_options_as_invalid_list_options_not_as_the_listed_kind(
    http: Http, query: str, message: str
) -> None:
    status, _, body = http.get(f"{SLICES}?{query}")
    assert (status, body["reason"], body["message"]) == (
        422,
        "Invalid",
        f'ListOptions.meta.k8s.io "" is invalid: {message}',
    )
    # StatusDetails: no name (omitempty), the group and kind of ListOptions
    assert {k: v for k, v in body["details"].items() if k != "causes"} == {
        "group": "meta.k8s.io",
        "kind": "ListOptions",
    }
    assert [f"{c['field']}: {c['message']}" for c in body["details"]["causes"]] == [message]
