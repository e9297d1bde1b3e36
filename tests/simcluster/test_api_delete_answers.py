"""What a DELETE answers, kind by kind, as kube-apiserver's generic registry does.

A registry with `ReturnDeletedObject: true` answers the object it removed; the others answer a Status naming
it (`finalizeDelete`). An object only marked (finalizers, a grace period) comes back itself, 202 when the
deprecated orphanDependents said false. A DeleteCollection answers the list it deleted from, as listed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

from simcluster.resources import BY_PLURAL
from simcluster.testing import SimCluster
from tests.simcluster.conftest import Http, Kubectl
from tests.simcluster.samples import ALL_PLURALS, collection_path, object_path, sample

#: upstream's ReturnDeletedObject, from pkg/registry/<group>/<resource>/storage/storage.go (v1.37)
UPSTREAM_RETURNS_OBJECT = {
    "namespaces": True,
    "pods": True,
    "deviceclasses": True,
    "resourceclaims": True,
    "resourceclaimtemplates": True,
    "resourceslices": True,
    "resourcepoolstatusrequests": True,
    "nodes": False,
    "events": False,
    "poddisruptionbudgets": False,
    "replicasets": False,
    "jobs": False,
    "devicetaintrules": False,  # NewRESTv1; only the v1alpha3/v1beta2 storages return the object
    "persistentvolumeclaims": True,
    "persistentvolumes": True,
    "replicationcontrollers": False,
    "endpoints": False,
    "endpointslices": False,
    "daemonsets": False,
    "statefulsets": False,
    "controllerrevisions": False,
    "cronjobs": False,
    "ingresses": False,
}

CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"a": "1"}}
ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "Role",
    "metadata": {"name": "reader"},
    "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
}
CONFIG_MAPS = "/api/v1/namespaces/default/configmaps"


def _status(name: str, kind: str, uid: str, group: str | None = None) -> dict[str, object]:
    details: dict[str, object] = {"name": name, "kind": kind, "uid": uid}
    if group:
        details["group"] = group
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


@pytest.mark.parametrize("plural", ALL_PLURALS)
def test_it_answers_a_delete_with_the_object_or_a_status_as_the_kinds_registry_does(
    http: Http, plural: str
) -> None:
    resource = BY_PLURAL[plural]
    obj = sample(plural)
    name = obj["metadata"]["name"]
    status, _, created = http.request("POST", collection_path(resource), obj)
    assert status == 201, created
    options = {"propagationPolicy": "Background"} if plural in ("jobs", "replicationcontrollers") else None
    status, _, body = http.request("DELETE", object_path(resource, name), options)
    assert status == 200, body
    if UPSTREAM_RETURNS_OBJECT[plural]:
        assert (body["kind"], body["metadata"]["uid"]) == (resource.kind, created["metadata"]["uid"])
    else:
        assert body == _status(name, plural, created["metadata"]["uid"], resource.group)


def test_it_answers_a_config_map_delete_with_a_status_and_a_pod_delete_with_the_pod(http: Http) -> None:
    status, _, created = http.request("POST", CONFIG_MAPS, CONFIG_MAP)
    assert status == 201, created
    status, _, body = http.request("DELETE", f"{CONFIG_MAPS}/settings")
    # the core group is no group: StatusDetails.group is omitempty
    assert (status, body) == (200, _status("settings", "configmaps", created["metadata"]["uid"]))
    status, _, role = http.request(
        "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", ROLE
    )
    assert status == 201, role
    status, _, body = http.request(
        "DELETE", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/reader"
    )
    assert (status, body) == (
        200,
        _status("reader", "roles", role["metadata"]["uid"], "rbac.authorization.k8s.io"),
    )
    pods = BY_PLURAL["pods"]
    status, _, pod = http.request("POST", collection_path(pods), sample("pods"))
    assert status == 201, pod
    status, _, body = http.request("DELETE", object_path(pods, "web"))
    assert (status, body["kind"], body["metadata"]["name"]) == (200, "Pod", "web")


def test_the_official_client_gets_a_status_for_a_config_map_and_the_pod_for_a_pod(
    api: client.ApiClient,
) -> None:
    core = client.CoreV1Api(api)
    created = core.create_namespaced_config_map("default", CONFIG_MAP)
    # kubernetes 37 types this answer "object" (the OpenAPI's Status is not its model): it hands the dict back
    answer = core.delete_namespaced_config_map("settings", "default")
    assert answer == _status("settings", "configmaps", created.metadata.uid)
    core.create_namespaced_pod("default", sample("pods"))
    pod = core.delete_namespaced_pod("web", "default")
    assert isinstance(pod, client.V1Pod)
    assert pod.metadata.name == "web"


def test_it_answers_the_object_it_only_marked_and_202_when_orphan_dependents_is_false(
    http: Http, cluster: SimCluster
) -> None:
    held = {**CONFIG_MAP, "metadata": {"name": "settings", "finalizers": ["example.com/hold"]}}
    status, _, created = http.request("POST", CONFIG_MAPS, held)
    assert status == 201, created
    status, _, body = http.request("DELETE", f"{CONFIG_MAPS}/settings")
    assert (status, body["kind"]) == (200, "ConfigMap")
    assert body["metadata"]["deletionTimestamp"]
    status, _, body = http.request("DELETE", f"{CONFIG_MAPS}/settings", {"orphanDependents": False})
    assert (status, body["kind"]) == (202, "ConfigMap")
    cluster.store.patch(
        "configmaps", "settings", {"metadata": {"finalizers": None}}, namespace="default",
        content_type="application/merge-patch+json",
    )  # fmt: skip
    assert http.get(f"{CONFIG_MAPS}/settings")[0] == 404


def test_a_delete_collection_answers_the_list_it_deleted_from_as_listed(
    http: Http, cluster: SimCluster
) -> None:
    labels = {"set": "x"}
    plain = cluster.store.create(
        "configmaps", {**CONFIG_MAP, "metadata": {"name": "a", "labels": labels}}, namespace="default"
    )
    held = cluster.store.create(
        "configmaps",
        {**CONFIG_MAP, "metadata": {"name": "b", "labels": labels, "finalizers": ["example.com/hold"]}},
        namespace="default",
    )
    listed_rv = cluster.store.resource_version
    status, _, body = http.request("DELETE", f"{CONFIG_MAPS}?labelSelector=set%3Dx")
    assert status == 200, body
    assert (body["kind"], body["apiVersion"]) == ("ConfigMapList", "v1")
    assert body["metadata"]["resourceVersion"] == str(listed_rv)
    assert [item["metadata"] for item in body["items"]] == [plain["metadata"], held["metadata"]]
    left = cluster.store.list("configmaps", namespace="default")
    assert [c["metadata"]["name"] for c in left] == ["b", "kube-root-ca.crt"]
    assert left[0]["metadata"]["deletionTimestamp"]


def test_kubectl_says_deleted_for_either_answer(kubectl: Kubectl, http: Http) -> None:
    assert http.request("POST", CONFIG_MAPS, CONFIG_MAP)[0] == 201
    assert http.request("POST", collection_path(BY_PLURAL["pods"]), sample("pods"))[0] == 201
    deleted = kubectl("delete", "configmap", "settings")
    assert (deleted.returncode, deleted.stdout) == (
        0,
        'configmap "settings" deleted from default namespace\n',
    ), deleted.stderr
    deleted = kubectl("delete", "pod", "web")
    assert (deleted.returncode, deleted.stdout) == (0, 'pod "web" deleted from default namespace\n'), (
        deleted.stderr
    )


def _watched(http: Http, path: str, since: str) -> list[tuple[str, dict[str, Any]]]:
    lines = http.lines(f"{path}?watch=true&resourceVersion={since}&timeoutSeconds=1")
    return [(event["type"], event["object"]) for event in map(json.loads, filter(None, lines))]


def test_a_removed_objects_answer_and_deleted_event_carry_the_deletions_resource_version(http: Http) -> None:
    # etcd3's store decodes the last stored state with the delete transaction's revision (conditionalDelete),
    # and its watcher sends that state with the same revision
    pods = BY_PLURAL["pods"]
    _, _, created = http.request("POST", collection_path(pods), sample("pods"))
    stored = created["metadata"]["resourceVersion"]
    _, _, answer = http.request("DELETE", object_path(pods, "web"))

    [(kind, event)] = _watched(http, collection_path(pods), stored)
    assert kind == "DELETED"
    assert int(answer["metadata"]["resourceVersion"]) > int(stored)
    assert answer == event


def test_an_update_that_drops_the_last_finalizer_answers_its_object_and_watchers_get_the_stored_one(
    http: Http,
) -> None:
    # the registry does not write that update: it deletes what is stored (deleteWithoutFinalizers) and
    # answers the request's object, at the resourceVersion it was written against
    held = {**CONFIG_MAP, "metadata": {"name": "settings", "finalizers": ["example.com/hold"]}}
    http.request("POST", CONFIG_MAPS, held)
    _, _, marked = http.request("DELETE", f"{CONFIG_MAPS}/settings")
    stored = marked["metadata"]["resourceVersion"]

    status, _, answer = http.request(
        "PATCH", f"{CONFIG_MAPS}/settings", {"metadata": {"finalizers": None}},
        content_type="application/merge-patch+json",
    )  # fmt: skip

    assert status == 200
    assert "finalizers" not in answer["metadata"]
    assert answer["metadata"]["resourceVersion"] == stored
    [(kind, event)] = _watched(http, CONFIG_MAPS, stored)
    assert kind == "DELETED"
    assert event["metadata"]["finalizers"] == ["example.com/hold"]
    assert int(event["metadata"]["resourceVersion"]) > int(stored)
    assert http.get(f"{CONFIG_MAPS}/settings")[0] == 404
