"""Object metadata, as kube-apiserver's ValidateObjectMeta checks it for every kind: names, namespace,
labels, annotations, finalizers, owner references, and what an update may not change."""

from __future__ import annotations

import json
from typing import Any, Final

from simcluster.jsondata import same_json
from simcluster.schema import Causes, ResourceDef, child
from simcluster.validation.names import dns_label, dns_subdomain, label_value, qualified_name
from simcluster.validation.shared import as_list, as_map, hashable

ANNOTATIONS_MAX_BYTES: Final = 256 * 1024

# Kinds whose names are DNS labels rather than DNS subdomains (a StatefulSet's pods are named after it and
# carry their name as a hostname).
_LABEL_NAMED: Final = {("", "Namespace"), ("apps", "StatefulSet")}
# Kinds whose names are only path segments (RBAC's `system:discovery`, `impersonate:node`).
_PATH_SEGMENT_NAMED: Final = {"rbac.authorization.k8s.io"}


def check_metadata(
    causes: Causes,
    resource: ResourceDef,
    obj: dict[str, Any],
    old: dict[str, Any] | None,
    *,
    old_is_stored: bool = False,
) -> None:
    """``old_is_stored``: ``old`` passed this check when it was stored, so what is the same JSON as in its
    metadata (labels, annotations, finalizers, owner references) is not judged again."""
    meta = as_map(obj.get("metadata"))
    checked = as_map(old.get("metadata")) if old is not None and old_is_stored else {}

    def unchanged(field: str) -> bool:
        return field in checked and field in meta and same_json(meta[field], checked[field])

    name = meta.get("name")
    if not name:
        if not meta.get("generateName"):
            causes.required("metadata.name", "name or generateName is required")
        else:
            # generateName is a prefix: check it as a name with a trailing character appended.
            _check_name(causes, resource, "metadata.generateName", str(meta["generateName"]) + "x")
    elif not unchanged("name"):
        _check_name(causes, resource, "metadata.name", name)
    namespace = meta.get("namespace")
    if resource.namespaced:
        if namespace and not unchanged("namespace"):
            dns_label(causes, "metadata.namespace", namespace)
    elif namespace:
        causes.forbidden("metadata.namespace", "not allowed on this type")

    # kube reports label keys and values (and finalizers) at the map's path, not per key.
    if not unchanged("labels"):
        for key, value in as_map(meta.get("labels")).items():
            qualified_name(causes, "metadata.labels", key)
            label_value(causes, "metadata.labels", value)
    if not unchanged("annotations"):
        total = 0
        for key, value in as_map(meta.get("annotations")).items():
            qualified_name(causes, "metadata.annotations", key.lower())
            total += len(key) + len(value if isinstance(value, str) else "")
        if total > ANNOTATIONS_MAX_BYTES:
            causes.too_long("metadata.annotations", ANNOTATIONS_MAX_BYTES)
    if not unchanged("finalizers"):
        finalizers: set[Any] = set()
        for finalizer in as_list(meta.get("finalizers")):
            qualified_name(causes, "metadata.finalizers", finalizer)
            if hashable(finalizer) in finalizers:
                causes.duplicate("metadata.finalizers", finalizer)
            finalizers.add(hashable(finalizer))
    owners = [] if unchanged("ownerReferences") else as_list(meta.get("ownerReferences"))
    for index, owner in enumerate(owners):
        entry = f"metadata.ownerReferences[{index}]"
        for field in ("apiVersion", "kind", "name", "uid"):
            if not as_map(owner).get(field):
                causes.required(child(entry, field))
    controllers = [as_map(o) for o in owners if as_map(o).get("controller") is True]
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
        old_meta = as_map(old.get("metadata"))
        for field in ("name", "namespace", "uid", "creationTimestamp"):
            if field in meta and field in old_meta and meta[field] != old_meta[field]:
                causes.immutable(f"metadata.{field}", meta[field])
        if old_meta.get("deletionTimestamp"):
            held = {str(f) for f in as_list(old_meta.get("finalizers"))}
            extra = sorted({str(f) for f in as_list(meta.get("finalizers"))} - held)
            if extra:
                shown = ", ".join(json.dumps(f) for f in extra)  # Go's %#v of a []string
                causes.forbidden(
                    "metadata.finalizers",
                    "no new finalizers can be added if the object is being deleted, "
                    f"found new finalizers []string{{{shown}}}",
                )


def _check_name(causes: Causes, resource: ResourceDef, path: str, name: Any) -> None:
    if not isinstance(name, str):
        return
    if (resource.group, resource.kind) in _LABEL_NAMED:
        dns_label(causes, path, name)
    elif resource.group in _PATH_SEGMENT_NAMED:
        if name in (".", ".."):
            causes.invalid(path, name, f"may not be '{name}'")
        for bad in ("/", "%"):
            if bad in name:
                causes.invalid(path, name, f"may not contain '{bad}'")
    elif (resource.group, resource.kind) == ("", "Event"):
        # Event names embed a timestamp suffix (``pod.17f3a...``); kube only checks them loosely.
        if "/" in name or name in (".", ".."):
            causes.invalid(path, name, "may not contain '/'")
    else:
        dns_subdomain(causes, path, name)
