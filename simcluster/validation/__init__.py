"""Validation of every write to the simulated API server: schema, object metadata, then per-kind rules.

``validate`` answers as kube-apiserver does in its 422 ``Status``: a list of causes (reason, message,
field) plus warnings for ``Warning`` headers.  The server owns defaulting and the spec/status split; this
package only judges the object it is given (and the stored one, on update). One module per subject:
`metadata`, `core` (Pod, Node, PodDisruptionBudget), `apps` (Deployment, ReplicaSet, DaemonSet, StatefulSet,
ControllerRevision, ReplicationController), `batch` (CronJob), `networking` (Ingress), `volumes` (PersistentVolumeClaim,
PersistentVolume), `slices`, `claims`, `admin` (DeviceClass, DeviceTaintRule, ResourcePoolStatusRequest), and
the parts they share (`names`, `capacity`, `cel`, `shared`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dra.allocator.features import DEFAULT_FEATURES
from simcluster.schema import Causes, ResourceDef, schema_causes
from simcluster.validation.admin import check_device_class, check_device_taint_rule, check_pool_status_request
from simcluster.validation.apps import (
    check_controller_revision,
    check_daemon_set,
    check_deployment,
    check_replica_set,
    check_replication_controller,
    check_stateful_set,
)
from simcluster.validation.batch import check_cron_job
from simcluster.validation.claims import check_resource_claim, check_resource_claim_template
from simcluster.validation.core import check_namespace, check_node, check_pdb, check_pod
from simcluster.validation.metadata import check_metadata
from simcluster.validation.networking import check_ingress
from simcluster.validation.shared import FEATURES
from simcluster.validation.slices import check_resource_slice
from simcluster.validation.volumes import check_persistent_volume, check_persistent_volume_claim

__all__ = ["validate"]

#: Kinds judged by (causes, obj, old, subresource) alone.
_WORKLOADS: dict[
    tuple[str, str], Callable[[Causes, dict[str, Any], dict[str, Any] | None, str | None], list[str]]
] = {
    ("apps", "DaemonSet"): check_daemon_set,
    ("apps", "StatefulSet"): check_stateful_set,
    ("apps", "ControllerRevision"): check_controller_revision,
    ("", "ReplicationController"): check_replication_controller,
    ("batch", "CronJob"): check_cron_job,
    ("networking.k8s.io", "Ingress"): check_ingress,
    ("", "PersistentVolumeClaim"): check_persistent_volume_claim,
    ("", "PersistentVolume"): check_persistent_volume,
}


def validate(
    resource: ResourceDef,
    obj: dict[str, Any],
    old: dict[str, Any] | None,
    *,
    subresource: str | None = None,
    features: frozenset[str] = DEFAULT_FEATURES,
    old_is_stored: bool = False,
) -> tuple[list[dict[str, str]], list[str]]:
    """Return ``(causes, warnings)``; no causes means the write is valid. ``features``: the DRA feature
    gates on (`dra.allocator.features` names), as the server was started with. ``old_is_stored``: ``old``
    is the stored object, which passed this validation when it was written, so the schema check walks only
    what differs from it."""
    causes = Causes()
    checked = old if old_is_stored else None
    causes.items.extend(schema_causes(resource.group, resource.version, resource.kind, obj, checked))
    check_metadata(causes, resource, obj, old, old_is_stored=old_is_stored)
    general = _dedupe(causes.items)
    kind_causes = Causes()
    token = FEATURES.set(features)
    try:
        warnings = _check_kind(kind_causes, resource, obj, old, subresource)
    finally:
        FEATURES.reset(token)
    # What the schema already said is not said twice; the kind's own rules may repeat an error, as
    # upstream does (a pool name with two bad parts gets the same error twice).
    said = {_key(item) for item in general}
    return general + [item for item in kind_causes.items if _key(item) not in said], warnings


def _key(item: dict[str, str]) -> tuple[str, str, str]:
    return (item["reason"], item["field"], item["message"])


def _dedupe(items: list[dict[str, str]]) -> list[dict[str, str]]:
    seen: set[tuple[str, str, str]] = set()
    unique: list[dict[str, str]] = []
    for item in items:
        key = _key(item)
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique


def _check_kind(
    causes: Causes,
    resource: ResourceDef,
    obj: dict[str, Any],
    old: dict[str, Any] | None,
    subresource: str | None,
) -> list[str]:
    key = (resource.group, resource.kind)
    if key == ("resource.k8s.io", "ResourceSlice"):
        return check_resource_slice(causes, obj, old)
    if key == ("resource.k8s.io", "DeviceClass"):
        return check_device_class(causes, obj, old)
    if key == ("resource.k8s.io", "ResourceClaim"):
        return check_resource_claim(causes, obj, old, subresource)
    if key == ("resource.k8s.io", "ResourceClaimTemplate"):
        return check_resource_claim_template(causes, obj, old)
    if key == ("resource.k8s.io", "DeviceTaintRule"):
        return check_device_taint_rule(causes, obj, old, subresource)
    if key == ("resource.k8s.io", "ResourcePoolStatusRequest"):
        return check_pool_status_request(causes, obj, old, subresource)
    if key == ("", "Pod"):
        return check_pod(causes, obj, old, subresource)
    if key == ("", "Node"):
        return check_node(causes, obj)
    if key == ("", "Namespace"):
        return check_namespace(causes, obj, old, subresource)
    if key == ("apps", "Deployment"):
        return check_deployment(causes, obj, old, subresource)
    if key == ("apps", "ReplicaSet"):
        return check_replica_set(causes, obj, old, subresource)
    if key == ("policy", "PodDisruptionBudget"):
        return check_pdb(causes, obj)
    workload = _WORKLOADS.get(key)
    if workload is not None:
        return workload(causes, obj, old, subresource)
    bindings = (
        ("rbac.authorization.k8s.io", "RoleBinding"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    )
    if key in bindings and old is not None and obj.get("roleRef") != old.get("roleRef"):
        causes.invalid("roleRef", obj.get("roleRef"), "cannot change roleRef")
    return []
