"""The watch wire protocol as the Python client and client-go see it."""

from __future__ import annotations

import json
import urllib.request

import pytest
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Http
from tests.simcluster.samples import sample

CLASSES = "/apis/resource.k8s.io/v1/deviceclasses"


def _events(lines: list[bytes]) -> list[dict]:
    return [json.loads(line) for line in lines if line]


def test_it_sends_one_json_event_per_line_and_never_a_blank_line(cluster: SimCluster, http: Http) -> None:
    start = cluster.store.resource_version
    cluster.store.create("deviceclasses", sample("deviceclasses"))
    cluster.store.patch("deviceclasses", "gpu.example.com", {"metadata": {"labels": {"tier": "a"}}})
    cluster.store.delete("deviceclasses", "gpu.example.com")
    lines = http.lines(f"{CLASSES}?watch=true&resourceVersion={start}&timeoutSeconds=1")
    assert lines[-1] == b""  # the stream ends with a newline ...
    assert all(lines[:-1])  # ... and has no blank keep-alive lines
    events = _events(lines)
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and rvs[-1] == cluster.store.resource_version


def test_it_resumes_a_python_client_watch_from_a_resource_version(
    cluster: SimCluster, api: client.ApiClient
) -> None:
    resource_api = client.ResourceV1Api(api)
    cluster.store.create("deviceclasses", sample("deviceclasses", name="before"))
    listed = resource_api.list_device_class()
    cluster.store.create("deviceclasses", sample("deviceclasses", name="after"))
    seen = [
        (event["type"], event["object"].metadata.name)
        for event in watch.Watch().stream(
            resource_api.list_device_class,
            resource_version=listed.metadata.resource_version,
            timeout_seconds=1,
        )
    ]
    assert seen == [("ADDED", "after")]


def test_it_delivers_changes_made_while_the_watch_is_open(cluster: SimCluster, api: client.ApiClient) -> None:
    resource_api = client.ResourceV1Api(api)
    cluster.store.create("deviceclasses", sample("deviceclasses", name="first"))
    stream = watch.Watch()
    seen = []
    for event in stream.stream(resource_api.list_device_class, timeout_seconds=20):
        seen.append((event["type"], event["object"].metadata.name))
        if event["object"].metadata.name == "first":
            cluster.store.create("deviceclasses", sample("deviceclasses", name="second"))
        else:
            stream.stop()
    assert seen == [("ADDED", "first"), ("ADDED", "second")]


def test_it_sends_bookmarks_with_only_the_resource_version(cluster: SimCluster, http: Http) -> None:
    cluster.store.create("deviceclasses", sample("deviceclasses"))
    rv = cluster.store.resource_version
    lines = http.lines(f"{CLASSES}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=1")
    events = _events(lines)
    assert events, "a bookmark is sent at least before the stream closes"
    assert {e["type"] for e in events} == {"BOOKMARK"}
    assert events[-1]["object"] == {
        "kind": "DeviceClass",
        "apiVersion": "resource.k8s.io/v1",
        "metadata": {"resourceVersion": str(rv)},
    }


def test_it_streams_initial_events_then_the_initial_events_end_bookmark(
    cluster: SimCluster, http: Http
) -> None:
    for name in ("a", "b"):
        cluster.store.create("deviceclasses", sample("deviceclasses", name=name))
    rv = cluster.store.resource_version
    lines = http.lines(
        f"{CLASSES}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
        "&timeoutSeconds=1"
    )
    events = _events(lines)
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in events[:3]] == [
        ("ADDED", "a"),
        ("ADDED", "b"),
        ("BOOKMARK", None),
    ]
    assert events[2]["object"]["metadata"] == {
        "resourceVersion": str(rv),
        "annotations": {"k8s.io/initial-events-end": "true"},
    }


def test_it_rejects_send_initial_events_without_not_older_than(http: Http) -> None:
    status, _, body = http.get(f"{CLASSES}?watch=true&sendInitialEvents=true")
    assert status == 422
    assert body["reason"] == "Invalid"


def test_it_answers_a_too_old_resource_version_with_a_410_error_event(
    cluster: SimCluster, http: Http
) -> None:
    cluster.store.create("deviceclasses", sample("deviceclasses"))
    old = cluster.store.resource_version
    cluster.store.create("deviceclasses", sample("deviceclasses", name="newer"))
    cluster.faults.compact_history()
    lines = http.lines(f"{CLASSES}?watch=true&resourceVersion={old - 1}")
    events = _events(lines)
    assert len(events) == 1
    assert events[0]["type"] == "ERROR"
    error = events[0]["object"]
    assert (error["kind"], error["code"], error["reason"]) == ("Status", 410, "Expired")
    assert error["message"].startswith(f"too old resource version: {old - 1} (")


def test_it_lets_the_python_client_recover_from_410_by_listing_again(
    cluster: SimCluster, api: client.ApiClient
) -> None:
    resource_api = client.ResourceV1Api(api)
    old = resource_api.list_device_class().metadata.resource_version
    cluster.store.create("deviceclasses", sample("deviceclasses"))
    cluster.faults.compact_history()
    with pytest.raises(ApiException) as raised:
        list(watch.Watch().stream(resource_api.list_device_class, resource_version=old, timeout_seconds=1))
    assert raised.value.status == 410
    relisted = resource_api.list_device_class()
    assert [c.metadata.name for c in relisted.items] == ["gpu.example.com"]
    cluster.store.create("deviceclasses", sample("deviceclasses", name="later"))
    seen = [
        e["object"].metadata.name
        for e in watch.Watch().stream(
            resource_api.list_device_class,
            resource_version=relisted.metadata.resource_version,
            timeout_seconds=1,
        )
    ]
    assert seen == ["later"]


def test_it_turns_objects_that_stop_matching_the_selector_into_deleted(
    cluster: SimCluster, http: Http
) -> None:
    start = cluster.store.resource_version
    cluster.store.create("deviceclasses", sample("deviceclasses", labels={"tier": "gold"}))
    cluster.store.patch("deviceclasses", "gpu.example.com", {"metadata": {"labels": {"tier": "silver"}}})
    cluster.store.patch("deviceclasses", "gpu.example.com", {"metadata": {"labels": {"tier": "gold"}}})
    lines = http.lines(
        f"{CLASSES}?watch=true&resourceVersion={start}&labelSelector=tier%3Dgold&timeoutSeconds=1"
    )
    assert [e["type"] for e in _events(lines)] == ["ADDED", "DELETED", "ADDED"]


def test_it_watches_resource_claims_with_the_python_client(
    cluster: SimCluster, api: client.ApiClient
) -> None:
    resource_api = client.ResourceV1Api(api)
    cluster.store.create("resourceclaims", sample("resourceclaims"))
    stream = watch.Watch(return_type=client.ResourceV1ResourceClaim)
    events = list(stream.stream(resource_api.list_namespaced_resource_claim, "default", timeout_seconds=1))
    assert [(e["type"], e["object"].metadata.name) for e in events] == [("ADDED", "gpu-claim")]
    assert events[0]["object"].spec.devices.requests[0].exactly.device_class_name == "gpu.example.com"


def test_it_filters_watches_by_field_and_namespace(cluster: SimCluster, http: Http) -> None:
    cluster.store.create("namespaces", sample("namespaces"))
    start = cluster.store.resource_version
    cluster.store.create("resourceclaims", sample("resourceclaims"), namespace="team-a")
    cluster.store.create("resourceclaims", sample("resourceclaims", name="other"), namespace="team-a")
    cluster.store.create("resourceclaims", sample("resourceclaims"), namespace="default")
    lines = http.lines(
        f"/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims?watch=true&resourceVersion={start}"
        "&fieldSelector=metadata.name%3Dgpu-claim&timeoutSeconds=1"
    )
    events = _events(lines)
    assert [(e["object"]["metadata"]["namespace"], e["object"]["metadata"]["name"]) for e in events] == [
        ("team-a", "gpu-claim")
    ]


def test_it_sends_periodic_bookmarks_while_the_watch_stays_open(cluster: SimCluster) -> None:
    cluster.store.create("deviceclasses", sample("deviceclasses"))
    rv = cluster.store.resource_version
    url = f"{cluster.url}{CLASSES}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true"  # no timeoutSeconds
    # the fixture's interval is 0.3 s
    with urllib.request.urlopen(url, timeout=30, context=cluster.ssl_context()) as response:
        first = json.loads(response.readline())
    assert first["type"] == "BOOKMARK"
    assert first["object"]["metadata"]["resourceVersion"] == str(rv)


def test_it_watches_a_single_object_by_its_path(cluster: SimCluster, http: Http) -> None:
    start = cluster.store.resource_version
    cluster.store.create("deviceclasses", sample("deviceclasses", name="mine"))
    cluster.store.create("deviceclasses", sample("deviceclasses", name="other"))
    lines = http.lines(f"{CLASSES}/mine?watch=true&resourceVersion={start}&timeoutSeconds=1")
    assert [e["object"]["metadata"]["name"] for e in _events(lines)] == ["mine"]


def test_it_sends_initial_events_without_the_end_bookmark_to_a_watch_without_bookmarks(
    cluster: SimCluster, http: Http
) -> None:
    # validateWatchOptions does not ask for allowWatchBookmarks; the cacher then sends no bookmark at all
    cluster.store.create("deviceclasses", sample("deviceclasses"))
    lines = http.lines(
        f"{CLASSES}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1"
    )
    assert [json.loads(line)["type"] for line in lines if line] == ["ADDED"]
