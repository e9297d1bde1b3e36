"""The kinds simcluster serves: `dra.kinds.KINDS`, each with what only an API server adds (its verbs).

Where a kind lives (group, version, plural, scope), its short names, categories, `/status` and field
selectors come from the one table in `dra.kinds`; routing, discovery, OpenAPI and field selectors here are
all driven from it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from dra.kinds import KINDS, RESOURCE_GROUP, Kind

__all__ = [
    "DEPRECATION_WARNINGS",
    "RESOURCES",
    "RESOURCE_GROUP",
    "RETURNS_DELETED_OBJECT",
    "ResourceDef",
    "Subresource",
    "lookup",
    "resource_for",
    "subresource",
]

STANDARD_VERBS: tuple[str, ...] = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)
#: Namespaces have no DeleteCollection: upstream's namespace storage is not a generic store.
NAMESPACE_VERBS: tuple[str, ...] = tuple(v for v in STANDARD_VERBS if v != "deletecollection")
STATUS_VERBS: tuple[str, ...] = ("get", "patch", "update")
REVIEW_VERBS: tuple[str, ...] = ("create",)

#: Resources whose registry sets `ReturnDeletedObject: true` (pkg/registry/<group>/<resource>/storage/storage.go):
#: a DELETE that removes the object answers the object. Every other generic store answers a Status naming
#: it (finalizeDelete), DeviceTaintRule included from resource.k8s.io/v1 on (NewRESTv1).
RETURNS_DELETED_OBJECT: frozenset[tuple[str, str]] = frozenset(
    {
        ("", "namespaces"),
        ("", "persistentvolumeclaims"),
        ("", "persistentvolumes"),
        ("", "pods"),
        ("", "serviceaccounts"),
        ("", "services"),
        (RESOURCE_GROUP, "deviceclasses"),
        (RESOURCE_GROUP, "resourceclaims"),
        (RESOURCE_GROUP, "resourceclaimtemplates"),
        (RESOURCE_GROUP, "resourceslices"),
        (RESOURCE_GROUP, "resourcepoolstatusrequests"),
    }
)


#: Resources every request to which the API server answers with a deprecation warning (a `Warning: 299` header),
#: whatever the verb: v1 Endpoints from v1.33 on (KEP-4974).
DEPRECATION_WARNINGS: dict[tuple[str, str], str] = {
    ("", "endpoints"): "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice",
}


@dataclass(frozen=True, slots=True)
class Subresource:
    """What discovery says of `<plural>/<name>`: the kind it takes and returns, where that kind lives, verbs."""

    name: str
    group: str
    version: str
    kind: str
    verbs: tuple[str, ...]


#: Subresources whose kind is not their parent's (upstream's discovery names the other kind's group/version).
_OTHER_KIND_SUBRESOURCES: dict[tuple[str, str], Subresource] = {
    ("pods", "binding"): Subresource("binding", "", "v1", "Binding", ("create",)),
    ("pods", "eviction"): Subresource("eviction", "policy", "v1", "Eviction", ("create",)),
    ("pods", "log"): Subresource("log", "", "v1", "Pod", ("get",)),
    ("serviceaccounts", "token"): Subresource(
        "token", "authentication.k8s.io", "v1", "TokenRequest", ("create",)
    ),
    ("deployments", "scale"): Subresource("scale", "autoscaling", "v1", "Scale", ("get", "patch", "update")),
    ("replicasets", "scale"): Subresource("scale", "autoscaling", "v1", "Scale", ("get", "patch", "update")),
    ("statefulsets", "scale"): Subresource("scale", "autoscaling", "v1", "Scale", ("get", "patch", "update")),
    ("replicationcontrollers", "scale"): Subresource(
        "scale", "autoscaling", "v1", "Scale", ("get", "patch", "update")
    ),
    # the namespace controller's way to take its finalizer off: an update only (FinalizeREST has no Get)
    ("namespaces", "finalize"): Subresource("finalize", "", "v1", "Namespace", ("update",)),
}


@dataclass(frozen=True, slots=True)
class ResourceDef(Kind):
    """A `dra.kinds.Kind` as simcluster serves it."""

    verbs: tuple[str, ...] = STANDARD_VERBS
    #: A DELETE that removes the object answers it (upstream's ReturnDeletedObject), else a Status.
    returns_deleted_object: bool = False
    #: The warning every request to this resource gets ("" for none): `DEPRECATION_WARNINGS`.
    deprecation_warning: str = ""

    @classmethod
    def serving(cls, kind: Kind) -> ResourceDef:
        values = {f.name: getattr(kind, f.name) for f in fields(Kind)}
        if kind.review:
            verbs = REVIEW_VERBS
        elif (kind.group, kind.plural) == ("", "namespaces"):
            verbs = NAMESPACE_VERBS
        else:
            verbs = STANDARD_VERBS
        returns = (kind.group, kind.plural) in RETURNS_DELETED_OBJECT
        warning = DEPRECATION_WARNINGS.get((kind.group, kind.plural), "")
        return cls(**values, verbs=verbs, returns_deleted_object=returns, deprecation_warning=warning)

    def subresource_specs(self) -> tuple[Subresource, ...]:
        return tuple(subresource(self, name) for name in self.subresources)

    def supports_field(self, label: str) -> bool:
        return label in self.field_labels


RESOURCES: tuple[ResourceDef, ...] = tuple(ResourceDef.serving(k) for k in KINDS)

BY_PLURAL: dict[str, ResourceDef] = {r.plural: r for r in RESOURCES}
BY_GVR: dict[tuple[str, str, str], ResourceDef] = {(r.group, r.version, r.plural): r for r in RESOURCES}

#: group -> versions in preference order (the first is the preferred version).
GROUP_VERSIONS: dict[str, list[str]] = {}
for _r in RESOURCES:
    _versions = GROUP_VERSIONS.setdefault(_r.group, [])
    if _r.version not in _versions:
        _versions.append(_r.version)


def subresource(resource: ResourceDef, name: str) -> Subresource:
    """The discovery facts of one of `resource`'s subresources (status: the parent's own kind)."""
    other = _OTHER_KIND_SUBRESOURCES.get((resource.plural, name))
    if other is not None:
        return other
    return Subresource(name, resource.group, resource.version, resource.kind, STATUS_VERBS)


def resource_for(plural: str) -> ResourceDef | None:
    return BY_PLURAL.get(plural)


def lookup(group: str, version: str, plural: str) -> ResourceDef | None:
    return BY_GVR.get((group, version, plural))
