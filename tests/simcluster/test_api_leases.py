"""Leases as coordination.k8s.io's registry keeps them: an update must name the resourceVersion it read
(AllowUnconditionalUpdate is false), and a PUT to a Lease that does not exist creates it
(AllowCreateOnUpdate is true)."""

from __future__ import annotations

import json

import pytest
from kubernetes import client

from tests.simcluster.conftest import Http

PATH = "/apis/coordination.k8s.io/v1/namespaces/default/leases/leader"


def _lease(holder: str) -> client.V1Lease:
    return client.V1Lease(
        metadata=client.V1ObjectMeta(name="leader"),
        spec=client.V1LeaseSpec(holder_identity=holder, lease_duration_seconds=15),
    )


def test_it_refuses_a_lease_update_without_the_resource_version_it_read(api: client.ApiClient) -> None:
    leases = client.CoordinationV1Api(api)
    created = leases.create_namespaced_lease("default", _lease("candidate-a"))
    with pytest.raises(client.ApiException) as caught:
        leases.replace_namespaced_lease("leader", "default", _lease("candidate-b"))
    body = json.loads(caught.value.body)
    assert (caught.value.status, body["reason"], body["message"]) == (
        422,
        "Invalid",
        'leases.coordination.k8s.io "leader" is invalid: metadata.resourceVersion: '
        "Invalid value: 0x0: must be specified for an update",
    )
    assert body["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "metadata.resourceVersion",
                                          "message": "Invalid value: 0x0: must be specified for an update"}]  # fmt: skip
    assert leases.read_namespaced_lease("leader", "default").spec.holder_identity == "candidate-a"
    taken = _lease("candidate-b")
    taken.metadata.resource_version = created.metadata.resource_version
    assert leases.replace_namespaced_lease("leader", "default", taken).spec.holder_identity == "candidate-b"


def test_it_creates_the_lease_a_put_names_when_there_is_none(http: Http) -> None:
    body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "leader"},
            "spec": {"holderIdentity": "candidate-a"}}  # fmt: skip
    status, _, created = http.request("PUT", PATH, body)
    assert status == 201, created
    assert created["spec"] == {"holderIdentity": "candidate-a"}
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
    assert http.get(PATH)[2] == created
