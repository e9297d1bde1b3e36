"""An update is judged in full wherever it differs from the stored object, however little it changes.

simcluster does not walk again the parts of a write that are the same JSON as the stored object's (they
passed when stored), so a status update or a binding costs what it changes. These writes change one small
thing deep inside an otherwise unchanged object, through the API as a client would: each must still be
refused, in kube-apiserver's words, or normalized as kube writes it.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.simcluster.conftest import Http

PODS = "/api/v1/namespaces/default/pods"
JSON = dict[str, Any]


@pytest.fixture
def stored_pod(http: Http) -> JSON:
    """A pod whose status already lists a running container, as a kubelet writes it."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
    }
    status, _, created = http.request("POST", PODS, pod)
    assert status == 201, created
    created["status"]["containerStatuses"] = [
        {
            "name": "web",
            "image": "docker.io/library/nginx:1.27",
            "imageID": "",
            "ready": True,
            "started": True,
            "restartCount": 0,
            "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
        }
    ]
    status, _, running = http.request("PUT", f"{PODS}/web/status", created)
    assert status == 200, running
    stored: JSON = running
    return stored


def refusal(body: JSON) -> list[tuple[str, str, str]]:
    assert body["reason"] == "Invalid", body
    return [(c["reason"], c["field"], c["message"]) for c in body["details"]["causes"]]


def test_it_refuses_a_status_update_that_only_turns_a_count_into_a_boolean(
    http: Http, stored_pod: JSON
) -> None:
    # false == 0 in Python: the comparison with the stored object must tell JSON types apart.
    update = copy.deepcopy(stored_pod)
    update["status"]["containerStatuses"][0]["restartCount"] = False
    status, _, body = http.request("PUT", f"{PODS}/web/status", update)
    assert status == 422
    assert refusal(body) == [
        (
            "FieldValueTypeInvalid",
            "status.containerStatuses[0].restartCount",
            "Invalid value: false: must be of type integer",
        )
    ]
    assert body["message"] == (
        'Pod "web" is invalid: status.containerStatuses[0].restartCount: '
        "Invalid value: false: must be of type integer"
    )


def test_it_refuses_a_wrong_type_deep_inside_an_otherwise_unchanged_pod(http: Http, stored_pod: JSON) -> None:
    update = copy.deepcopy(stored_pod)
    update["spec"]["containers"][0]["image"] = 5
    status, _, body = http.request("PUT", f"{PODS}/web", update)
    assert status == 422
    assert refusal(body) == [
        ("FieldValueTypeInvalid", "spec.containers[0].image", "Invalid value: 5: must be of type string")
    ]


def test_it_refuses_a_toleration_second_count_turned_boolean_in_a_pod_update(
    http: Http, stored_pod: JSON
) -> None:
    update = copy.deepcopy(stored_pod)
    update["spec"]["tolerations"][0]["tolerationSeconds"] = True  # was 300; True == 1, not 300, but a type
    status, _, body = http.request("PUT", f"{PODS}/web", update)
    assert status == 422
    assert (
        "FieldValueTypeInvalid",
        "spec.tolerations[0].tolerationSeconds",
        "Invalid value: true: must be of type integer",
    ) in refusal(body)


def test_it_refuses_a_change_to_the_token_volume_as_a_forbidden_pod_update(
    http: Http, stored_pod: JSON
) -> None:
    update = copy.deepcopy(stored_pod)
    update["spec"]["volumes"][0]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"] = 7200
    status, _, body = http.request("PUT", f"{PODS}/web", update)
    assert status == 422
    [(reason, field, message)] = refusal(body)
    assert (reason, field) == ("FieldValueForbidden", "spec")
    assert message.startswith(
        "Forbidden: pod updates may not change fields other than `spec.containers[*].image`"
    )


def test_it_refuses_a_bad_label_added_to_a_stored_pod(http: Http, stored_pod: JSON) -> None:
    update = copy.deepcopy(stored_pod)
    update["metadata"]["labels"]["bad key!"] = "web"
    status, _, body = http.request("PUT", f"{PODS}/web", update)
    assert status == 422
    assert [field for _, field, _ in refusal(body)] == ["metadata.labels"]
    assert "name part must consist of alphanumeric characters" in refusal(body)[0][2]


def test_it_keeps_the_stored_spec_when_a_status_update_carries_another(http: Http, stored_pod: JSON) -> None:
    update = copy.deepcopy(stored_pod)
    update["spec"]["containers"][0]["image"] = 5
    update["spec"]["nodeName"] = "elsewhere"
    update["status"]["containerStatuses"][0]["restartCount"] = 1
    status, _, body = http.request("PUT", f"{PODS}/web/status", update)
    assert status == 200, body
    assert body["spec"] == stored_pod["spec"]
    assert body["status"]["containerStatuses"][0]["restartCount"] == 1


def test_it_writes_a_changed_time_in_an_otherwise_unchanged_status_as_kube_does(
    http: Http, stored_pod: JSON
) -> None:
    update = copy.deepcopy(stored_pod)
    update["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] = "2026-01-01T01:30:00.25+01:00"
    status, _, body = http.request("PUT", f"{PODS}/web/status", update)
    assert status == 200, body
    assert body["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] == "2026-01-01T00:30:00Z"


SLICES = "/apis/resource.k8s.io/v1/resourceslices"


@pytest.fixture
def stored_slice(http: Http) -> JSON:
    slice_obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "node-a-gpus"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "node-a",
            "devices": [{"name": f"gpu-{i}", "capacity": {"memory": {"value": "80Gi"}}} for i in range(3)],
        },
    }
    status, _, stored = http.request("POST", SLICES, slice_obj)
    assert status == 201, stored
    result: JSON = stored
    return result


def test_an_update_that_changes_only_a_quantity_deep_inside_stores_it_in_canonical_form(
    http: Http, stored_slice: JSON
) -> None:
    update = copy.deepcopy(stored_slice)
    update["spec"]["devices"][2]["capacity"]["memory"]["value"] = "1024Mi"
    update["spec"]["devices"][1]["capacity"]["cores"] = {"value": 0.5}
    status, _, updated = http.request("PUT", f"{SLICES}/node-a-gpus", update)
    assert status == 200, updated
    assert [d["capacity"] for d in updated["spec"]["devices"]] == [
        {"memory": {"value": "80Gi"}},
        {"memory": {"value": "80Gi"}, "cores": {"value": "500m"}},
        {"memory": {"value": "1Gi"}},
    ]


def test_an_update_that_adds_only_an_empty_optional_list_deep_inside_does_not_store_it(
    http: Http, stored_slice: JSON
) -> None:
    update = copy.deepcopy(stored_slice)
    update["spec"]["devices"][1]["taints"] = []
    update["spec"]["devices"][2]["attributes"] = {}
    status, _, updated = http.request("PUT", f"{SLICES}/node-a-gpus", update)
    assert status == 200, updated
    assert updated["spec"]["devices"] == stored_slice["spec"]["devices"]
    status, _, read = http.request("GET", f"{SLICES}/node-a-gpus")
    assert read["spec"]["devices"] == stored_slice["spec"]["devices"]
