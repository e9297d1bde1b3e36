"""Validation of every write to the simulated API server: schema, object metadata, then per-kind rules.

``validate`` answers as kube-apiserver does in its 422 ``Status``: a list of causes (reason, message,
field) plus warnings for ``Warning`` headers.  The server owns defaulting and the spec/status split; this
module only judges the object it is given (and the stored one, on update).
"""

from __future__ import annotations

from typing import Any, Final

from simcluster.schema import Causes, ResourceDef, child, schema_causes
from simcluster.validation_admin import check_device_class, check_device_taint_rule, check_pool_status_request
from simcluster.validation_claims import check_resource_claim, check_resource_claim_template
from simcluster.validation_names import dns_label, dns_subdomain, label_value, qualified_name
from simcluster.validation_shared import hashable
from simcluster.validation_slices import check_resource_slice

ANNOTATIONS_MAX_BYTES: Final = 256 * 1024

# Kinds whose names are DNS labels rather than DNS subdomains.
_LABEL_NAMED: Final = {("", "Namespace")}


def validate(
    resource: ResourceDef, obj: dict[str, Any], old: dict[str, Any] | None, *, subresource: str | None = None
) -> tuple[list[dict[str, str]], list[str]]:
    """Return ``(causes, warnings)``; no causes means the write is valid."""
    causes = Causes()
    causes.items.extend(schema_causes(resource.group, resource.version, resource.kind, obj))
    _check_metadata(causes, resource, obj, old)
    warnings = _check_kind(causes, resource, obj, old, subresource)
    return _dedupe(causes.items), warnings


def _dedupe(items: list[dict[str, str]]) -> list[dict[str, str]]:
    seen: set[tuple[str, str, str]] = set()
    unique: list[dict[str, str]] = []
    for item in items:
        key = (item["reason"], item["field"], item["message"])
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# ---------------------------------------------------------------------------------------------------------
# metadata


def _check_metadata(
    causes: Causes, resource: ResourceDef, obj: dict[str, Any], old: dict[str, Any] | None
) -> None:
    meta = _map(obj.get("metadata"))
    name = meta.get("name")
    if not name:
        if not meta.get("generateName"):
            causes.required("metadata.name", "name or generateName is required")
        else:
            # generateName is a prefix: check it as a name with a trailing character appended.
            _check_name(causes, resource, "metadata.generateName", str(meta["generateName"]) + "x")
    else:
        _check_name(causes, resource, "metadata.name", name)
    namespace = meta.get("namespace")
    if resource.namespaced:
        if namespace:
            dns_label(causes, "metadata.namespace", namespace)
    elif namespace:
        causes.forbidden("metadata.namespace", "not allowed on this type")

    # kube reports label keys and values (and finalizers) at the map's path, not per key.
    for key, value in _map(meta.get("labels")).items():
        qualified_name(causes, "metadata.labels", key)
        label_value(causes, "metadata.labels", value)
    annotations = _map(meta.get("annotations"))
    total = 0
    for key, value in annotations.items():
        qualified_name(causes, "metadata.annotations", key.lower())
        total += len(key) + len(value if isinstance(value, str) else "")
    if total > ANNOTATIONS_MAX_BYTES:
        causes.too_long("metadata.annotations", ANNOTATIONS_MAX_BYTES)
    finalizers: set[Any] = set()
    for finalizer in _items(meta.get("finalizers")):
        qualified_name(causes, "metadata.finalizers", finalizer)
        if hashable(finalizer) in finalizers:
            causes.duplicate("metadata.finalizers", finalizer)
        finalizers.add(hashable(finalizer))
    owners = _items(meta.get("ownerReferences"))
    for index, owner in enumerate(owners):
        entry = f"metadata.ownerReferences[{index}]"
        for field in ("apiVersion", "kind", "name", "uid"):
            if not _map(owner).get(field):
                causes.required(child(entry, field))
    controllers = [_map(o) for o in owners if _map(o).get("controller") is True]
    if len(controllers) > 1:
        named = ", ".join(f"{o.get('kind')}/{o.get('name')}" for o in controllers)
        causes.invalid(
            "metadata.ownerReferences",
            "array",
            f'Only one reference can have Controller set to true. Found "true" in references for {named}',
        )
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        causes.invalid("metadata.generation", generation, "must be greater than or equal to 0")

    if old is not None:
        old_meta = _map(old.get("metadata"))
        for field in ("name", "namespace", "uid", "creationTimestamp"):
            if field in meta and field in old_meta and meta[field] != old_meta[field]:
                causes.immutable(f"metadata.{field}", meta[field])


def _check_name(causes: Causes, resource: ResourceDef, path: str, name: Any) -> None:
    if not isinstance(name, str):
        return
    if (resource.group, resource.kind) in _LABEL_NAMED:
        dns_label(causes, path, name)
    elif (resource.group, resource.kind) == ("", "Event"):
        # Event names embed a timestamp suffix (``pod.17f3a...``); kube only checks them loosely.
        if "/" in name or name in (".", ".."):
            causes.invalid(path, name, "may not contain '/'")
    else:
        dns_subdomain(causes, path, name)


# ---------------------------------------------------------------------------------------------------------
# per kind


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
        return _check_pod(causes, obj, old, subresource)
    if key == ("", "Node"):
        return _check_node(causes, obj)
    if key == ("policy", "PodDisruptionBudget"):
        return _check_pdb(causes, obj)
    return []


# Pod spec fields an update may change (kube's ValidatePodUpdate, simplified).
_POD_MUTABLE: Final = {
    "activeDeadlineSeconds",
    "tolerations",
    "schedulingGates",
    "terminationGracePeriodSeconds",
}


def _check_pod(
    causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None, subresource: str | None
) -> list[str]:
    spec = _map(obj.get("spec"))
    containers = spec.get("containers")
    if not containers:
        causes.required("spec.containers")
    claims = _items(spec.get("resourceClaims"))
    claim_names: set[str] = set()
    for index, claim in enumerate(claims):
        entry = f"spec.resourceClaims[{index}]"
        name = _map(claim).get("name")
        dns_label(causes, child(entry, "name"), name)
        if isinstance(name, str) and name:
            if name in claim_names:
                causes.duplicate(child(entry, "name"), name)
            claim_names.add(name)
        sources = [f for f in ("resourceClaimName", "resourceClaimTemplateName") if _map(claim).get(f)]
        if not sources:
            causes.invalid(
                entry, "object", "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
            )
        elif len(sources) > 1:
            causes.invalid(
                entry,
                "object",
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
            )
        for source in sources:
            dns_subdomain(causes, child(entry, source), _map(claim)[source])

    container_names: set[str] = set()
    for field in ("initContainers", "containers"):
        for index, container in enumerate(_items(spec.get(field))):
            entry = f"spec.{field}[{index}]"
            name = _map(container).get("name")
            dns_label(causes, child(entry, "name"), name)
            if isinstance(name, str) and name:
                if name in container_names:
                    causes.duplicate(child(entry, "name"), name)
                container_names.add(name)
            if not _map(container).get("image"):
                causes.required(child(entry, "image"))
            for claim_index, claim in enumerate(_items(_map(_map(container).get("resources")).get("claims"))):
                claim_path = f"{entry}.resources.claims[{claim_index}].name"
                claim_name = _map(claim).get("name")
                if not claim_name:
                    causes.required(claim_path)
                elif hashable(claim_name) not in claim_names:
                    causes.not_supported(claim_path, claim_name, sorted(claim_names))
    if spec.get("nodeName"):
        dns_subdomain(causes, "spec.nodeName", spec["nodeName"])
    for index, toleration in enumerate(_items(spec.get("tolerations"))):
        operator = _map(toleration).get("operator") or "Equal"
        if operator not in ("Equal", "Exists"):
            causes.not_supported(f"spec.tolerations[{index}].operator", operator, ["Equal", "Exists"])

    if old is not None and subresource not in ("status", "binding", "ephemeralcontainers", "resize"):
        old_spec = _map(old.get("spec"))
        if _pod_spec_without_mutable(spec) != _pod_spec_without_mutable(old_spec):
            causes.forbidden(
                "spec",
                "pod updates may not change fields other than `spec.containers[*].image`, "
                "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` "
                "(only additions to existing tolerations) or `spec.terminationGracePeriodSeconds` "
                "(allow it to be set to 1 if it was previously negative)",
            )
        old_tolerations = _items(old_spec.get("tolerations"))
        new_tolerations = _items(spec.get("tolerations"))
        if new_tolerations[: len(old_tolerations)] != old_tolerations and any(
            t not in new_tolerations for t in old_tolerations
        ):
            causes.forbidden(
                "spec.tolerations", "existing toleration can not be modified except its tolerationSeconds"
            )
    return []


def _pod_spec_without_mutable(spec: dict[str, Any]) -> dict[str, Any]:
    stripped = {k: v for k, v in spec.items() if k not in _POD_MUTABLE}
    for field in ("containers", "initContainers"):
        if field in stripped:
            stripped[field] = [
                {k: v for k, v in _map(c).items() if k != "image"} for c in _items(stripped[field])
            ]
    return stripped


def _check_node(causes: Causes, obj: dict[str, Any]) -> list[str]:
    for index, taint in enumerate(_items(_map(obj.get("spec")).get("taints"))):
        entry = f"spec.taints[{index}]"
        qualified_name(causes, child(entry, "key"), _map(taint).get("key"))
        label_value(causes, child(entry, "value"), _map(taint).get("value"))
        effect = _map(taint).get("effect")
        supported = ["NoExecute", "NoSchedule", "PreferNoSchedule"]
        if not effect:
            causes.required(child(entry, "effect"))
        elif effect not in supported:
            causes.not_supported(child(entry, "effect"), effect, supported)
    return []


def _check_pdb(causes: Causes, obj: dict[str, Any]) -> list[str]:
    spec = _map(obj.get("spec"))
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        causes.invalid("spec", "object", "minAvailable and maxUnavailable cannot be both set")
    return []
