"""Create, read, update, delete on every kind, over HTTP, with kube-apiserver semantics."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

from simcluster.resources import BY_PLURAL
from simcluster.testing import SimCluster
from tests.simcluster.conftest import Http
from tests.simcluster.samples import ALL_PLURALS, collection_path, object_path, sample


@pytest.mark.parametrize("plural", ALL_PLURALS)
def test_it_creates_reads_updates_patches_and_deletes_every_kind(http: Http, plural: str) -> None:
    resource = BY_PLURAL[plural]
    obj = sample(plural)
    name = obj["metadata"]["name"]

    status, _, created = http.request("POST", collection_path(resource), obj)
    assert status == 201, created
    assert created["kind"] == resource.kind
    assert created["apiVersion"] == resource.api_version
    assert created["metadata"]["uid"]
    assert created["metadata"]["creationTimestamp"].endswith("Z")
    assert int(created["metadata"]["resourceVersion"]) > 0

    status, _, fetched = http.get(object_path(resource, name))
    assert status == 200
    assert fetched == created

    status, _, listed = http.get(collection_path(resource))
    assert status == 200
    assert listed["kind"] == resource.list_kind
    assert name in [item["metadata"]["name"] for item in listed["items"]]
    assert all("kind" not in item and "apiVersion" not in item for item in listed["items"])  # as kube lists

    fetched["metadata"].setdefault("labels", {})["touched"] = "yes"
    status, _, updated = http.request("PUT", object_path(resource, name), fetched)
    assert status == 200, updated
    assert updated["metadata"]["labels"]["touched"] == "yes"
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])

    status, _, patched = http.request(
        "PATCH",
        object_path(resource, name),
        {"metadata": {"annotations": {"note": "patched"}}},
        content_type="application/merge-patch+json",
    )
    assert status == 200, patched
    assert patched["metadata"]["annotations"]["note"] == "patched"

    # A Job's (and a v1 ReplicationController's) registry orphans its pods unless told otherwise: that waits
    # for a garbage collector, which this cluster does not run; kubectl says Background.
    options = {"propagationPolicy": "Background"} if plural in ("jobs", "replicationcontrollers") else None
    status, _, _ = http.request("DELETE", object_path(resource, name), options)
    assert status == 200
    status, _, missing = http.get(object_path(resource, name))
    if plural == "namespaces":
        # emptied and let go by the namespace controller, which this cluster does not run
        assert (status, missing["status"]["phase"]) == (200, "Terminating")
        return
    if plural in ("persistentvolumeclaims", "persistentvolumes"):
        # held by the in-use protection finalizer until its controller, which this cluster does not run, lets go
        assert (status, bool(missing["metadata"]["deletionTimestamp"])) == (200, True)
        return
    assert status == 404
    assert missing["reason"] == "NotFound"


def test_it_answers_409_already_exists_in_the_upstream_words(http: Http) -> None:
    resource = BY_PLURAL["deviceclasses"]
    http.request("POST", collection_path(resource), sample("deviceclasses"))
    status, _, body = http.request("POST", collection_path(resource), sample("deviceclasses"))
    assert status == 409
    assert body["reason"] == "AlreadyExists"
    assert body["message"] == 'deviceclasses.resource.k8s.io "gpu.example.com" already exists'
    assert body["details"] == {"name": "gpu.example.com", "group": "resource.k8s.io", "kind": "deviceclasses"}


def test_it_answers_409_conflict_on_a_stale_resource_version(http: Http) -> None:
    resource = BY_PLURAL["devicetaintrules"]
    _, _, created = http.request("POST", collection_path(resource), sample("devicetaintrules"))
    first = dict(created, metadata=dict(created["metadata"], labels={"a": "1"}))
    assert http.request("PUT", object_path(resource, "drain-node-a"), first)[0] == 200
    stale = dict(created, metadata=dict(created["metadata"], labels={"a": "2"}))
    status, _, body = http.request("PUT", object_path(resource, "drain-node-a"), stale)
    assert status == 409
    assert body["reason"] == "Conflict"
    assert body["message"] == (
        'Operation cannot be fulfilled on devicetaintrules.resource.k8s.io "drain-node-a": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )


def test_it_generates_names_from_generate_name(http: Http) -> None:
    resource = BY_PLURAL["resourceclaims"]
    obj = sample("resourceclaims")
    del obj["metadata"]["name"]
    obj["metadata"]["generateName"] = "trainer-gpu-"
    status, _, created = http.request("POST", collection_path(resource), obj)
    assert status == 201
    name = created["metadata"]["name"]
    assert name.startswith("trainer-gpu-") and len(name) == len("trainer-gpu-") + 5


def _names_drawn_after(seed: int, prefix: str, count: int) -> list[str]:
    """The generated names a create with generateName draws after `store._RANDOM.seed(seed)`: the first
    name, then the uid (128 random bits), then each retry's name."""
    from simcluster import store

    store._RANDOM.seed(seed)
    names = [store._generated_name(prefix)]
    store._RANDOM.getrandbits(128)
    names += [store._generated_name(prefix) for _ in range(count - 1)]
    return names


def _take(http: Http, names: list[str]) -> None:
    for name in names:
        claim = sample("resourceclaims")
        claim["metadata"]["name"] = name
        assert http.request("POST", collection_path(BY_PLURAL["resourceclaims"]), claim)[0] == 201


def _create_generated(http: Http, prefix: str) -> tuple[int, Any, Any]:
    claim = sample("resourceclaims")
    del claim["metadata"]["name"]
    claim["metadata"]["generateName"] = prefix
    return http.request("POST", collection_path(BY_PLURAL["resourceclaims"]), claim)


def test_a_generated_name_that_is_taken_is_drawn_again(http: Http) -> None:
    """RetryGenerateName (GA in v1.32): a ReplicaSet of thousands of pods hits a taken 5-character suffix
    now and then; kube-apiserver draws another instead of failing the create with AlreadyExists."""
    from simcluster import store

    taken, retried = _names_drawn_after(7, "trainer-gpu-", 2)
    _take(http, [taken])
    store._RANDOM.seed(7)  # the next draw is the taken name
    status, _, created = _create_generated(http, "trainer-gpu-")
    assert status == 201, created
    assert created["metadata"]["name"] == retried != taken


def test_a_generated_name_gives_up_after_eight_taken_draws(http: Http) -> None:
    from simcluster import store

    names = _names_drawn_after(11, "trainer-gpu-", 8)
    _take(http, names)
    store._RANDOM.seed(11)
    status, _, body = _create_generated(http, "trainer-gpu-")
    assert status == 409
    assert body["reason"] == "AlreadyExists"
    assert body["message"] == f'resourceclaims.resource.k8s.io "{names[-1]}" already exists'


def test_a_taken_name_asked_for_by_name_is_not_drawn_again(http: Http) -> None:
    resource = BY_PLURAL["resourceclaims"]
    obj = sample("resourceclaims")
    obj["metadata"]["generateName"] = "trainer-gpu-"  # ignored: the name is given
    assert http.request("POST", collection_path(resource), obj)[0] == 201
    status, _, body = http.request("POST", collection_path(resource), obj)
    assert status == 409
    assert body["reason"] == "AlreadyExists"


def test_it_needs_an_existing_namespace_for_namespaced_kinds(http: Http) -> None:
    resource = BY_PLURAL["resourceclaims"]
    status, _, body = http.request("POST", collection_path(resource, "nowhere"), sample("resourceclaims"))
    assert status == 404
    assert body["message"] == 'namespaces "nowhere" not found'


def test_it_bumps_generation_on_spec_changes_only(http: Http) -> None:
    resource = BY_PLURAL["devicetaintrules"]
    path = object_path(resource, "drain-node-a")
    http.request("POST", collection_path(resource), sample("devicetaintrules"))
    merge = "application/merge-patch+json"
    _, _, labelled = http.request("PATCH", path, {"metadata": {"labels": {"a": "b"}}}, content_type=merge)
    assert labelled["metadata"]["generation"] == 1
    _, _, changed = http.request(
        "PATCH", path, {"spec": {"taint": {"effect": "NoSchedule"}}}, content_type=merge
    )
    assert changed["metadata"]["generation"] == 2


def test_it_splits_spec_and_status_writes(http: Http) -> None:
    resource = BY_PLURAL["devicetaintrules"]
    path = object_path(resource, "drain-node-a")
    merge = "application/merge-patch+json"
    condition = {
        "type": "EvictionInProgress",
        "status": "False",
        "reason": "NoEffect",
        "message": "no pods",
        "lastTransitionTime": "2026-09-01T10:00:00Z",
        "observedGeneration": 1,
    }
    http.request("POST", collection_path(resource), sample("devicetaintrules"))
    _, _, ignored = http.request("PATCH", path, {"status": {"conditions": [condition]}}, content_type=merge)
    assert ignored["status"] == {}
    status, _, written = http.request(
        "PATCH", path + "/status", {"status": {"conditions": [condition]}, "spec": {"taint": {"effect": "NoExecute"}}},
        content_type=merge,
    )  # fmt: skip
    assert status == 200, written
    assert written["status"]["conditions"][0]["type"] == "EvictionInProgress"
    assert written["spec"]["taint"]["effect"] == "None"
    assert written["metadata"]["generation"] == 1
    status, _, via_status_get = http.get(path + "/status")
    assert status == 200 and via_status_get["status"] == written["status"]


def test_it_refuses_to_change_a_resource_claim_spec(http: Http) -> None:
    resource = BY_PLURAL["resourceclaims"]
    http.request("POST", collection_path(resource), sample("resourceclaims"))
    status, _, body = http.request(
        "PATCH",
        object_path(resource, "gpu-claim"),
        {
            "spec": {
                "devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": "nic.example.com"}}]}
            }
        },
        content_type="application/merge-patch+json",
    )
    assert status == 422
    assert body["reason"] == "Invalid"
    assert body["details"]["causes"][0]["field"] == "spec"
    assert "immutable" in body["message"]


def test_it_keeps_objects_with_finalizers_until_the_last_finalizer_is_removed(http: Http) -> None:
    resource = BY_PLURAL["resourceclaims"]
    path = object_path(resource, "gpu-claim")
    http.request(
        "POST", collection_path(resource),
        sample("resourceclaims", finalizers=["resource.kubernetes.io/delete-protection"]),
    )  # fmt: skip
    status, _, deleting = http.request("DELETE", path)
    assert status == 200
    assert deleting["metadata"]["deletionTimestamp"]
    assert http.get(path)[0] == 200
    _, _, after = http.request(
        "PATCH", path, {"metadata": {"finalizers": None}}, content_type="application/merge-patch+json"
    )
    assert after["metadata"].get("finalizers") is None
    assert http.get(path)[0] == 404


def test_it_checks_delete_preconditions(http: Http) -> None:
    resource = BY_PLURAL["deviceclasses"]
    path = object_path(resource, "gpu.example.com")
    _, _, created = http.request("POST", collection_path(resource), sample("deviceclasses"))
    status, _, body = http.request("DELETE", path, {"preconditions": {"uid": "not-the-uid"}})
    assert status == 409
    assert "Precondition failed: UID in precondition: not-the-uid" in body["message"]
    stale = {"preconditions": {"resourceVersion": str(int(created["metadata"]["resourceVersion"]) - 1)}}
    assert http.request("DELETE", path, stale)[0] == 409
    exact = {
        "preconditions": {
            "uid": created["metadata"]["uid"],
            "resourceVersion": created["metadata"]["resourceVersion"],
        }
    }
    assert http.request("DELETE", path, exact)[0] == 200


def test_it_stores_nothing_on_dry_run(http: Http, cluster: SimCluster) -> None:
    resource = BY_PLURAL["devicetaintrules"]
    before = cluster.store.resource_version
    status, _, body = http.request(
        "POST", collection_path(resource) + "?dryRun=All", sample("devicetaintrules")
    )
    assert status == 201
    assert body["metadata"]["name"] == "drain-node-a"
    assert body["spec"]["taint"]["timeAdded"]
    assert http.get(object_path(resource, "drain-node-a"))[0] == 404
    assert cluster.store.resource_version == before


def test_it_defaults_taint_time_added_and_restarts_it_when_the_effect_changes(cluster: SimCluster) -> None:
    store = cluster.store
    rule = store.create("devicetaintrules", sample("devicetaintrules"))
    first = rule["spec"]["taint"]["timeAdded"]
    assert first
    pinned = store.patch(
        "devicetaintrules", "drain-node-a", {"spec": {"taint": {"timeAdded": "2026-01-01T00:00:00Z"}}}
    )
    assert pinned["spec"]["taint"]["timeAdded"] == "2026-01-01T00:00:00Z"
    switched = store.patch("devicetaintrules", "drain-node-a", {"spec": {"taint": {"effect": "NoExecute"}}})
    assert switched["spec"]["taint"]["timeAdded"] != "2026-01-01T00:00:00Z"
    sliced = store.create("resourceslices", sample("resourceslices"))
    assert "taints" not in sliced["spec"]["devices"][0]
    tainted = sample("resourceslices", name="tainted")
    tainted["spec"]["devices"][0]["taints"] = [{"key": "example.com/ecc", "effect": "NoSchedule"}]
    created = store.create("resourceslices", tainted)
    assert created["spec"]["devices"][0]["taints"][0]["timeAdded"]


def test_it_answers_unknown_paths_like_kube(http: Http) -> None:
    for path in ("/apis/resource.k8s.io/v1/gadgets", "/apis/nothing.example.com/v1", "/nope", "/api/v2/pods"):
        status, _, body = http.get(path)
        assert status == 404, path
        assert body["message"] == "the server could not find the requested resource"
        assert body["reason"] == "NotFound"


def test_it_lists_namespaced_kinds_across_namespaces(http: Http) -> None:
    http.request("POST", "/api/v1/namespaces", sample("namespaces"))
    claims = BY_PLURAL["resourceclaims"]
    http.request("POST", collection_path(claims, "default"), sample("resourceclaims"))
    http.request("POST", collection_path(claims, "team-a"), sample("resourceclaims"))
    _, _, listed = http.get("/apis/resource.k8s.io/v1/resourceclaims")
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in listed["items"]] == [
        ("default", "gpu-claim"),
        ("team-a", "gpu-claim"),
    ]


@pytest.mark.parametrize(
    "body",
    [b"", b"null", b"[]", b'"x"', b"{", b'{"metadata":"x"}', b'{"metadata":{"name":"web"},"spec":"x"}',
     b'{"metadata":{"name":"web","labels":"x"}}', b'{"metadata":{"name":"web","finalizers":"x"}}'],
)  # fmt: skip
def test_it_answers_malformed_bodies_with_a_client_error(http: Http, body: bytes) -> None:
    status, _, answer = http.request("POST", "/api/v1/namespaces/default/pods", body)
    assert 400 <= status < 500, answer
    assert answer["kind"] == "Status"


def test_it_writes_a_new_replica_sets_replica_count_which_the_official_client_requires(
    api: client.ApiClient,
) -> None:
    # ReplicaSetStatus.replicas has no omitempty: a real server writes `status: {replicas: 0}` before the
    # controller does; the client's model refuses a ReplicaSet without it.
    body = {
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}},
    }  # fmt: skip
    created = client.AppsV1Api(api).create_namespaced_replica_set("default", body)
    assert created.status.to_dict()["replicas"] == 0


def test_it_refuses_an_update_whose_object_names_no_object_as_check_name_does(http: Http) -> None:
    path = "/apis/resource.k8s.io/v1/deviceclasses"
    assert http.request("POST", path, sample("deviceclasses"))[0] == 201
    for body in ({}, {"metadata": {}}, {"metadata": {"name": None}}):
        status, _, answer = http.request("PUT", f"{path}/gpu.example.com", body)
        assert (status, answer["reason"], answer["message"]) == (
            400,
            "BadRequest",
            "the name of the object () does not match the name on the URL (gpu.example.com)",
        )
    _, _, kept = http.get(f"{path}/gpu.example.com")
    assert kept["spec"] == sample("deviceclasses")["spec"]
    # a server-side apply that would create the object under another name
    status, _, answer = http.request(
        "PATCH",
        f"{path}/other?fieldManager=me",
        {**sample("deviceclasses"), "metadata": {"name": "gpu.example.com"}},
        content_type="application/apply-patch+yaml",
    )
    assert (status, answer["message"]) == (
        400,
        "the name of the object (gpu.example.com) does not match the name on the URL (other)",
    )


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "text/yaml"])
def test_it_answers_a_body_in_an_unknown_media_type_with_415(http: Http, content_type: str) -> None:
    # what `curl -d` sends: NegotiateInputSerializer knows JSON, YAML and protobuf only
    body = json.dumps(sample("deviceclasses")).encode()
    status, _, answer = http.request(
        "POST", "/apis/resource.k8s.io/v1/deviceclasses", body, content_type=content_type
    )
    assert (status, answer["reason"], answer["message"]) == (
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf",
    )
    assert http.get("/apis/resource.k8s.io/v1/deviceclasses/gpu.example.com")[0] == 404


def test_it_leaves_the_empty_name_out_of_the_status_details(http: Http) -> None:
    status, _, answer = http.request("POST", "/apis/resource.k8s.io/v1/deviceclasses", {"spec": {}})
    assert status == 422
    # StatusDetails.Name is omitempty: an object without a name has none in the details
    assert "name" not in answer["details"]
    assert (answer["details"]["group"], answer["details"]["kind"]) == ("resource.k8s.io", "DeviceClass")
