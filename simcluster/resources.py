"""The table of kinds simcluster serves, one declaration per resource.

Everything else (routing, discovery, field selectors, status handling) is driven from this table.
Short names, categories and scopes are those of a v1.37 kube-apiserver: the DRA kinds have none.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
STATUS_VERBS: tuple[str, ...] = ("get", "patch", "update")
BASE_FIELD_SELECTORS: tuple[str, ...] = ("metadata.name",)
NAMESPACED_FIELD_SELECTORS: tuple[str, ...] = ("metadata.name", "metadata.namespace")


@dataclass(frozen=True, slots=True)
class ResourceDef:
    group: str
    version: str
    plural: str
    kind: str
    list_kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    verbs: tuple[str, ...] = STANDARD_VERBS
    singular: str = ""
    categories: tuple[str, ...] = ()
    field_selectors: tuple[str, ...] = field(default=())

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """`pods` or `deviceclasses.resource.k8s.io`, as error messages spell it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def qualified_kind(self) -> str:
        """`Pod` or `DeviceClass.resource.k8s.io`, as 422 messages spell it."""
        return f"{self.kind}.{self.group}" if self.group else self.kind

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    def supports_field(self, label: str) -> bool:
        base = NAMESPACED_FIELD_SELECTORS if self.namespaced else BASE_FIELD_SELECTORS
        return label in base or label in self.field_selectors


def _def(
    group: str,
    version: str,
    plural: str,
    kind: str,
    *,
    namespaced: bool,
    short_names: tuple[str, ...] = (),
    status: bool = False,
    categories: tuple[str, ...] = (),
    field_selectors: tuple[str, ...] = (),
) -> ResourceDef:
    return ResourceDef(
        group=group,
        version=version,
        plural=plural,
        kind=kind,
        list_kind=f"{kind}List",
        namespaced=namespaced,
        short_names=short_names,
        subresources=("status",) if status else (),
        singular=kind.lower(),
        categories=categories,
        field_selectors=field_selectors,
    )


RESOURCE_GROUP = "resource.k8s.io"

RESOURCES: tuple[ResourceDef, ...] = (
    _def("", "v1", "namespaces", "Namespace", namespaced=False, short_names=("ns",), status=True,
         field_selectors=("status.phase",)),
    _def("", "v1", "nodes", "Node", namespaced=False, short_names=("no",), status=True,
         field_selectors=("spec.unschedulable",)),
    _def("", "v1", "pods", "Pod", namespaced=True, short_names=("po",), status=True, categories=("all",),
         field_selectors=("spec.nodeName", "status.phase", "spec.schedulerName", "spec.restartPolicy",
                          "status.nominatedNodeName")),
    _def("", "v1", "services", "Service", namespaced=True, short_names=("svc",), status=True, categories=("all",),
         field_selectors=("spec.clusterIP", "spec.type")),
    _def("", "v1", "events", "Event", namespaced=True, short_names=("ev",),
         field_selectors=("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                          "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                          "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type")),
    _def("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", namespaced=True,
         short_names=("pdb",), status=True),
    _def("apps", "v1", "replicasets", "ReplicaSet", namespaced=True, short_names=("rs",), status=True,
         categories=("all",), field_selectors=("status.replicas",)),
    _def("batch", "v1", "jobs", "Job", namespaced=True, status=True, categories=("all",),
         field_selectors=("status.successful",)),
    _def(RESOURCE_GROUP, "v1", "deviceclasses", "DeviceClass", namespaced=False),
    _def(RESOURCE_GROUP, "v1", "resourceclaims", "ResourceClaim", namespaced=True, status=True),
    _def(RESOURCE_GROUP, "v1", "resourceclaimtemplates", "ResourceClaimTemplate", namespaced=True),
    _def(RESOURCE_GROUP, "v1", "resourceslices", "ResourceSlice", namespaced=False,
         field_selectors=("spec.nodeName", "spec.driver", "spec.pool.name")),
    _def(RESOURCE_GROUP, "v1", "devicetaintrules", "DeviceTaintRule", namespaced=False, status=True),
    _def(RESOURCE_GROUP, "v1alpha3", "resourcepoolstatusrequests", "ResourcePoolStatusRequest",
         namespaced=False, status=True),
)  # fmt: skip

BY_PLURAL: dict[str, ResourceDef] = {r.plural: r for r in RESOURCES}
BY_GVR: dict[tuple[str, str, str], ResourceDef] = {(r.group, r.version, r.plural): r for r in RESOURCES}

#: group -> versions in preference order (the first is the preferred version).
GROUP_VERSIONS: dict[str, list[str]] = {}
for _r in RESOURCES:
    _versions = GROUP_VERSIONS.setdefault(_r.group, [])
    if _r.version not in _versions:
        _versions.append(_r.version)


def resource_for(plural: str) -> ResourceDef | None:
    return BY_PLURAL.get(plural)


def lookup(group: str, version: str, plural: str) -> ResourceDef | None:
    return BY_GVR.get((group, version, plural))
