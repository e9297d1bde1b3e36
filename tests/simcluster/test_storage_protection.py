"""In-use protection of PersistentVolumeClaims and PersistentVolumes: the admission finalizers every new one
gets, and the pvc-protection / pv-protection controllers that let a deleted one go once nothing uses it."""

from __future__ import annotations

from simcluster.errors import ApiError
from tests.simcluster.samples import sample
from tests.simcluster.sim_helpers import running, settle


def _gone(store: object, plural: str, name: str, namespace: str | None = None) -> bool:
    try:
        store.get(plural, name, namespace=namespace)  # type: ignore[attr-defined]
    except ApiError as error:
        return error.status == 404
    return False


def test_it_gives_new_claims_and_volumes_their_protection_finalizers() -> None:
    with running(topology=None) as (cluster, _, _):
        claim = cluster.store.create("persistentvolumeclaims", sample("persistentvolumeclaims"))
        volume = cluster.store.create("persistentvolumes", sample("persistentvolumes"))
        assert claim["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
        assert volume["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
        assert (volume["status"]["phase"], claim["status"]["phase"]) == ("Pending", "Pending")


def test_it_keeps_a_deleted_claim_while_a_scheduled_pod_uses_it() -> None:
    with running(topology="tiny") as (cluster, _, _):
        store = cluster.store
        store.create("persistentvolumeclaims", sample("persistentvolumeclaims"))
        node = store.list("nodes")[0]["metadata"]["name"]
        pod = sample("pods")
        pod["spec"]["nodeName"] = node
        pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
        store.create("pods", pod)
        settle(cluster)
        store.delete("persistentvolumeclaims", "data", namespace="default")
        settle(cluster)
        held = store.get("persistentvolumeclaims", "data", namespace="default")
        assert held["metadata"]["deletionTimestamp"]
        assert held["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
        store.delete("pods", "web", namespace="default", grace_period_seconds=0)
        settle(cluster)
        assert _gone(store, "persistentvolumeclaims", "data", "default")


def test_it_lets_a_deleted_volume_go_unless_it_is_bound() -> None:
    with running(topology=None) as (cluster, _, _):
        store = cluster.store
        store.create("persistentvolumes", sample("persistentvolumes"))
        bound = sample("persistentvolumes")
        bound["metadata"]["name"] = "pv-bound"
        store.create("persistentvolumes", bound)
        status = store.get("persistentvolumes", "pv-bound")
        status["status"] = {"phase": "Bound"}
        store.update("persistentvolumes", status, subresource="status")
        store.delete("persistentvolumes", "pv-a")
        store.delete("persistentvolumes", "pv-bound")
        settle(cluster)
        assert _gone(store, "persistentvolumes", "pv-a")
        assert store.get("persistentvolumes", "pv-bound")["metadata"]["finalizers"] == [
            "kubernetes.io/pv-protection"
        ]
