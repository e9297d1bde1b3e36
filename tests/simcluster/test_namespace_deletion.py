"""Deleting a namespace through the official Python client, as kube-apiserver and kube-controller-manager do it:
the registry marks it Terminating, NamespaceLifecycle refuses new content, the namespace controller empties it
(reporting what remains in the status conditions) and takes its `kubernetes` finalizer off, and the namespace
goes once no finalizer is left."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Http, raw_json
from tests.simcluster.sim_helpers import running, settle

JSON = dict[str, Any]
HOLD = "example.com/hold"
OK_CONDITIONS = {
    "NamespaceDeletionDiscoveryFailure": ("False", "ResourcesDiscovered", "All resources successfully discovered"),
    "NamespaceDeletionGroupVersionParsingFailure": (
        "False", "ParsedGroupVersions", "All legacy kube types successfully parsed",
    ),
    "NamespaceDeletionContentFailure": (
        "False", "ContentDeleted", "All content successfully deleted, may be waiting on finalization",
    ),
    "NamespaceContentRemaining": ("False", "ContentRemoved", "All content successfully removed"),
    "NamespaceFinalizersRemaining": ("False", "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
}  # fmt: skip


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[SimCluster, client.ApiClient]]:
    """The tiny topology (namespace `ml` runs a trainer ReplicaSet whose pods hold GPU claims) with every
    controller running, and the official client on it."""
    with running(kubeconfig_path=tmp_path / "kubeconfig") as (cluster, _, _):
        api = config.new_client_from_config(str(tmp_path / "kubeconfig"))
        try:
            yield cluster, api
        finally:
            api.close()


@pytest.fixture
def stalled(tmp_path: Path) -> Iterator[tuple[SimCluster, client.ApiClient]]:
    """Every controller but the namespace controller: a deleted namespace stays Terminating."""
    with running(topology=None, kubeconfig_path=tmp_path / "kubeconfig", disable=("namespaces",)) as (
        cluster, _, _,
    ):  # fmt: skip
        api = config.new_client_from_config(str(tmp_path / "kubeconfig"))
        try:
            yield cluster, api
        finally:
            api.close()


def _namespace(name: str, **meta: Any) -> JSON:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, **meta}}


def _held_config_map(name: str = "held") -> JSON:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "finalizers": [HOLD]}}


def _delete_namespace(core: client.CoreV1Api, name: str, **options: Any) -> JSON:
    body: JSON = raw_json(core.delete_namespace(name, _preload_content=False, **options))
    return body


def _conditions(namespace: JSON) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in namespace["status"]["conditions"]}


def _release(cluster: SimCluster, namespace: str, name: str = "held") -> None:
    cluster.store.patch("configmaps", name, {"metadata": {"finalizers": None}}, namespace=namespace)


def test_it_answers_the_first_delete_with_the_namespace_marked_terminating(
    live: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, api = live
    core = client.CoreV1Api(api)
    created = core.create_namespace(_namespace("team"))
    core.create_namespaced_config_map("team", _held_config_map())

    answer = _delete_namespace(core, "team")

    assert answer["kind"] == "Namespace"
    assert answer["metadata"]["uid"] == created.metadata.uid
    assert answer["metadata"]["deletionTimestamp"]
    assert "deletionGracePeriodSeconds" not in answer["metadata"]
    assert answer["spec"] == {"finalizers": ["kubernetes"]}
    assert answer["status"] == {"phase": "Terminating"}
    settle(cluster)
    assert core.read_namespace("team").status.phase == "Terminating"


def test_it_answers_a_delete_of_a_terminating_namespace_with_it_as_it_is(
    stalled: tuple[SimCluster, client.ApiClient],
) -> None:
    _, api = stalled
    core = client.CoreV1Api(api)
    core.create_namespace(_namespace("team"))
    first = _delete_namespace(core, "team")
    again = _delete_namespace(core, "team", propagation_policy="Background")
    assert again == first


def test_it_empties_the_namespace_and_reports_what_remains_in_upstream_words(
    live: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, api = live
    core = client.CoreV1Api(api)
    core.create_namespace(_namespace("team"))
    core.create_namespaced_config_map("team", _held_config_map())
    core.create_namespaced_config_map("team", {"metadata": {"name": "plain"}, "data": {"a": "1"}})

    _delete_namespace(core, "team")
    settle(cluster)

    left = core.list_namespaced_config_map("team").items
    assert [(c.metadata.name, bool(c.metadata.deletion_timestamp)) for c in left] == [("held", True)]
    assert core.list_namespaced_service_account("team").items == []  # `default` went, and stays gone
    conditions = _conditions(raw_json(core.read_namespace("team", _preload_content=False)))
    assert conditions == {
        **OK_CONDITIONS,
        "NamespaceContentRemaining": (
            "True", "SomeResourcesRemain", "Some resources are remaining: configmaps. has 1 resource instances",
        ),
        "NamespaceFinalizersRemaining": (
            "True", "SomeFinalizersRemain",
            "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances",
        ),
    }  # fmt: skip

    _release(cluster, "team")
    settle(cluster)
    with pytest.raises(ApiException) as gone:
        core.read_namespace("team")
    assert gone.value.status == 404


def test_it_refuses_new_content_in_a_terminating_namespace_in_namespace_lifecycles_words(
    stalled: tuple[SimCluster, client.ApiClient],
) -> None:
    _, api = stalled
    core = client.CoreV1Api(api)
    core.create_namespace(_namespace("team"))
    _delete_namespace(core, "team")

    with pytest.raises(ApiException) as refused:
        core.create_namespaced_config_map("team", {"metadata": {"name": "late"}})

    assert refused.value.status == 403
    assert json.loads(refused.value.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'configmaps "late" is forbidden: unable to create new content in namespace team because it is '
                   "being terminated",
        "reason": "Forbidden",
        "details": {"name": "late", "kind": "configmaps", "causes": [
            {"reason": "NamespaceTerminating", "message": "namespace team is being terminated",
             "field": "metadata.namespace"},
        ]},
        "code": 403,
    }  # fmt: skip
    # an admission plugin, before validation: an invalid object is refused the same, named as it came
    with pytest.raises(ApiException) as generated:
        core.create_namespaced_config_map("team", {"metadata": {"generateName": "Bad_"}})
    assert generated.value.status == 403
    assert json.loads(generated.value.body)["message"].startswith('configmaps "Bad_" is forbidden: unable to')


def test_it_deletes_every_object_stops_pods_and_releases_their_claims_before_the_namespace_goes(
    live: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, api = live
    core = client.CoreV1Api(api)
    pods = core.list_namespaced_pod("ml").items
    assert [p.status.phase for p in pods] == ["Running", "Running"]
    since = core.list_namespace().metadata.resource_version
    pods_since = core.list_namespaced_pod("ml").metadata.resource_version

    _delete_namespace(core, "ml", propagation_policy="Background")
    settle(cluster)

    for plural in ("pods", "replicasets", "resourceclaims", "resourceclaimtemplates", "configmaps"):
        assert cluster.store.list(plural, namespace="ml") == [], plural
    events = [
        (e["type"], e["raw_object"])
        for e in watch.Watch().stream(core.list_namespace, resource_version=since, timeout_seconds=1)
        if e["raw_object"]["metadata"]["name"] == "ml"
    ]
    assert [kind for kind, _ in events][0] == "MODIFIED" and [kind for kind, _ in events][-1] == "DELETED"
    last = events[-1][1]
    # the last stored state, at the deletion's resourceVersion
    assert last["status"]["phase"] == "Terminating" and last["spec"] == {"finalizers": ["kubernetes"]}
    assert int(last["metadata"]["resourceVersion"]) > int(events[-2][1]["metadata"]["resourceVersion"])
    # a pod on a node was deleted gracefully and stopped by its kubelet before it went
    stopped = [
        e["raw_object"]
        for e in watch.Watch().stream(
            core.list_namespaced_pod, "ml", resource_version=pods_since, timeout_seconds=1
        )
        if e["type"] == "MODIFIED" and e["raw_object"]["metadata"].get("deletionTimestamp")
    ]
    assert {p["metadata"]["name"] for p in stopped} == {p.metadata.name for p in pods}
    assert all(p["metadata"]["deletionGracePeriodSeconds"] == 30 for p in stopped)
    with pytest.raises(ApiException) as gone:
        core.read_namespace("ml")
    assert gone.value.status == 404


def test_it_keeps_a_finalized_namespace_until_its_metadata_finalizers_are_gone(
    live: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, api = live
    core = client.CoreV1Api(api)
    core.create_namespace(_namespace("team", finalizers=[HOLD]))

    _delete_namespace(core, "team")
    settle(cluster)

    finalized = core.read_namespace("team")
    assert (finalized.status.phase, finalized.spec.finalizers, finalized.metadata.finalizers) == (
        "Terminating", None, [HOLD],
    )  # fmt: skip
    core.patch_namespace("team", {"metadata": {"finalizers": None}})
    with pytest.raises(ApiException) as gone:
        core.read_namespace("team")
    assert gone.value.status == 404


@pytest.mark.parametrize(
    ("options", "finalizers", "code"),
    [
        ({"propagation_policy": "Foreground"}, ["foregroundDeletion"], 200),
        ({"propagation_policy": "Orphan"}, ["orphan"], 200),
        ({"propagation_policy": "Background"}, None, 200),
        # unlike other kinds', the namespace registry reads orphanDependents=false as foreground deletion
        ({"orphan_dependents": False}, ["foregroundDeletion"], 202),
    ],
)
def test_it_leaves_the_garbage_collectors_finalizer_as_the_propagation_policy_asks(
    stalled: tuple[SimCluster, client.ApiClient], options: JSON, finalizers: list[str] | None, code: int
) -> None:
    _, api = stalled
    core = client.CoreV1Api(api)
    core.create_namespace(_namespace("team"))
    response = core.delete_namespace("team", _preload_content=False, **options)
    assert response.status == code
    assert raw_json(response)["metadata"].get("finalizers") == finalizers


def test_it_takes_spec_finalizers_only_through_the_finalize_subresource(
    stalled: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, api = stalled
    core = client.CoreV1Api(api)
    core.create_namespace(_namespace("team"))
    core.create_namespaced_config_map("team", {"metadata": {"name": "left"}})
    _delete_namespace(core, "team")

    current = core.read_namespace("team")
    current.spec.finalizers = []
    assert core.replace_namespace("team", current).spec.finalizers == ["kubernetes"]
    with pytest.raises(ApiException) as bad:
        core.replace_namespace_finalize("team", {**_namespace("team"), "spec": {"finalizers": ["cleanup"]}})
    assert (bad.value.status, json.loads(bad.value.body)["message"]) == (
        422,
        'Namespace "team" is invalid: spec.finalizers[0]: Invalid value: "cleanup": name is neither a standard '
        "finalizer name nor is it fully qualified",
    )
    http = Http(cluster.url, cluster.ssl_context())
    assert http.get("/api/v1/namespaces/team/finalize")[0] == 405  # served for update alone

    # what `kubectl replace --raw .../finalize` recipes do to a stuck namespace: it goes, its content stays
    core.replace_namespace_finalize("team", {**_namespace("team"), "spec": {"finalizers": []}})
    with pytest.raises(ApiException) as gone:
        core.read_namespace("team")
    assert gone.value.status == 404
    assert [c["metadata"]["name"] for c in cluster.store.list("configmaps", namespace="team")] == [
        "kube-root-ca.crt",
        "left",
    ]


def test_it_keeps_the_spec_finalizers_a_namespace_was_created_with_and_waits_for_them(
    live: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, api = live
    core = client.CoreV1Api(api)
    created = core.create_namespace({**_namespace("team"), "spec": {"finalizers": ["example.com/cleanup"]}})
    assert created.spec.finalizers == ["example.com/cleanup", "kubernetes"]
    with pytest.raises(ApiException) as bad:
        core.create_namespace({**_namespace("other"), "spec": {"finalizers": ["cleanup"]}})
    assert json.loads(bad.value.body)["message"] == (
        'Namespace "other" is invalid: spec.finalizers: Invalid value: "cleanup": name is neither a standard '
        "finalizer name nor is it fully qualified"
    )

    _delete_namespace(core, "team")
    settle(cluster)

    # emptied, and only the namespace controller's own finalizer taken off
    waiting = core.read_namespace("team")
    assert (waiting.status.phase, waiting.spec.finalizers) == ("Terminating", ["example.com/cleanup"])
    assert core.list_namespaced_config_map("team").items == []
