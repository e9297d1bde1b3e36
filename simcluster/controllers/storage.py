"""Storage object in-use protection: kube-controller-manager's pvc-protection and pv-protection controllers.

kube-apiserver's StorageObjectInUseProtection admission plugin gives every new PersistentVolumeClaim the
finalizer `kubernetes.io/pvc-protection` and every new PersistentVolume `kubernetes.io/pv-protection`
(`simcluster.defaulting`). A deleted claim then stays, Terminating, while a pod scheduled to a node still
uses it (a volume naming it; a generic ephemeral volume whose claim it is, until the pod is shut down); a
deleted volume while it is Bound. Once nothing uses them these controllers take the finalizer off and the store lets them go.
Without controllers a deleted claim or volume stays Terminating, as on a cluster whose controller manager
is down.
"""

from __future__ import annotations

import copy
from typing import Any

from dra.pods import persistent_volume_claim_names
from simcluster.controllers.common import is_deleting, meta, name_of, namespace_of, read_all
from simcluster.errors import ApiError
from simcluster.store import Store

JSON = dict[str, Any]

PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
WATCHES = frozenset({"persistentvolumeclaims", "persistentvolumes", "pods"})


def _shut_down(pod: JSON) -> bool:
    """podIsShutDown: deleted with no grace left (the kubelet is done with it, or it was force-deleted); its
    generic ephemeral claims no longer count as used, its named ones still do."""
    return is_deleting(pod) and meta(pod).get("deletionGracePeriodSeconds") == 0


def _protected(obj: JSON, finalizer: str) -> bool:
    return is_deleting(obj) and finalizer in (meta(obj).get("finalizers") or ())


class StorageProtection:
    def __init__(self, store: Store) -> None:
        self.store = store

    @staticmethod
    def wants(plural: str, obj: JSON) -> bool:
        """A pod matters only when a volume of it names a claim (pod volumes never change)."""
        return plural != "pods" or bool(persistent_volume_claim_names(obj))

    def reconcile(self) -> float | None:
        again: float | None = None
        claims = [c for c in read_all(self.store, "persistentvolumeclaims") if _protected(c, PVC_PROTECTION)]
        in_use: set[tuple[str, str]] = set()
        if claims:
            for pod in read_all(self.store, "pods"):
                # the kubelet starts no pod on a claim being deleted: only scheduled pods hold one (podUsesPVC)
                if (pod.get("spec") or {}).get("nodeName"):
                    names = persistent_volume_claim_names(pod, ephemeral=not _shut_down(pod))
                    in_use.update((namespace_of(pod), name) for name in names)
        for claim in claims:
            if (namespace_of(claim), name_of(claim)) not in in_use:
                again = self._release("persistentvolumeclaims", claim, PVC_PROTECTION) or again
        for volume in read_all(self.store, "persistentvolumes"):
            if _protected(volume, PV_PROTECTION) and (volume.get("status") or {}).get("phase") != "Bound":
                again = self._release("persistentvolumes", volume, PV_PROTECTION) or again
        return again

    def _release(self, plural: str, obj: JSON, finalizer: str) -> float | None:
        """Take `finalizer` off; a conflict (changed meanwhile) is looked at again soon."""
        updated = copy.deepcopy(obj)
        updated["metadata"]["finalizers"] = [f for f in meta(obj).get("finalizers") or () if f != finalizer]
        try:
            self.store.update(plural, updated)
        except ApiError as error:
            if error.status == 409:
                return 0.05
            if error.status != 404:
                raise
        return None
