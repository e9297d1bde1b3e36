"""Rules of PersistentVolumeClaim and PersistentVolume beyond the schema (upstream's
ValidatePersistentVolumeClaimSpec and ValidatePersistentVolumeSpec, in part): access modes given and known, a
claim's storage request, a volume's storage capacity, reclaim policy and exactly a volume source; a claim's
spec fixed once created (no claim is ever bound here, so not even its request may grow)."""

from __future__ import annotations

from typing import Any, Final

from dra.quantity import Quantity, QuantityError
from simcluster.schema import Causes, definitions
from simcluster.validation.shared import as_list, as_map, hashable

JSON = dict[str, Any]

ACCESS_MODES: Final = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
RECLAIM_POLICIES: Final = ["Delete", "Recycle", "Retain"]
#: PersistentVolumeSpec fields that are not a volume source.
_NOT_SOURCES: Final = frozenset({
    "accessModes", "capacity", "claimRef", "mountOptions", "nodeAffinity", "persistentVolumeReclaimPolicy",
    "storageClassName", "volumeAttributesClassName", "volumeMode",
})  # fmt: skip


def _access_modes(causes: Causes, spec: JSON, detail: str) -> None:
    modes = as_list(spec.get("accessModes"))
    if not modes:
        causes.required("spec.accessModes", detail)
    for mode in modes:
        if hashable(mode) not in ACCESS_MODES:
            causes.not_supported("spec.accessModes", mode, ACCESS_MODES)


def check_persistent_volume_claim(
    causes: Causes, obj: JSON, old: JSON | None, subresource: str | None
) -> list[str]:
    if subresource is not None:
        return []
    spec = as_map(obj.get("spec"))
    if old is not None:
        if spec != as_map(old.get("spec")):
            causes.forbidden(
                "spec",
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for "
                "bound claims",
            )
        return []
    _access_modes(causes, spec, "at least 1 access mode is required")
    requests = as_map(as_map(spec.get("resources")).get("requests"))
    storage = requests.get("storage")
    if storage is None:
        causes.required("spec.resources[storage]")
    elif isinstance(storage, str) and _parses(storage) and Quantity.parse(storage).sign() <= 0:
        causes.invalid("spec.resources[storage]", storage, "must be greater than zero")
    return []


def _parses(text: str) -> bool:
    """Whether `text` is a quantity (one that is not was reported by the schema check)."""
    try:
        Quantity.parse(text)
    except QuantityError:
        return False
    return True


def _sources() -> list[str]:
    spec = definitions()["io.k8s.api.core.v1.PersistentVolumeSpec"]
    return [name for name in spec["properties"] if name not in _NOT_SOURCES]


def check_persistent_volume(
    causes: Causes, obj: JSON, old: JSON | None, subresource: str | None
) -> list[str]:
    if subresource is not None:
        return []
    spec = as_map(obj.get("spec"))
    _access_modes(causes, spec, "")
    capacity = spec.get("capacity")
    if not capacity:
        causes.required("spec.capacity")
    elif not isinstance(capacity, dict) or "storage" not in capacity or len(capacity) > 1:
        causes.not_supported("spec.capacity", capacity, ["storage"])
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy is not None and policy not in RECLAIM_POLICIES:
        causes.not_supported("spec.persistentVolumeReclaimPolicy", policy, RECLAIM_POLICIES)
    if not any(spec.get(source) is not None for source in _sources()):
        causes.required("spec", "must specify a volume type")
    return []
