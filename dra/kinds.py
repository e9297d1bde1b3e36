"""The one table of Kubernetes kinds dradash and simcluster know: where each lives in the API.

Group, version, plural, kind, scope, the `/status` subresource, short names, categories and the
field selectors a v1.37 kube-apiserver supports for it. The mirror, the what-if snapshot, the pages
and simcluster's router all read this table; none keeps a list of its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import quote

RESOURCE_GROUP = "resource.k8s.io"
RBAC_GROUP = "rbac.authorization.k8s.io"
AUTHORIZATION_GROUP = "authorization.k8s.io"
AUTHENTICATION_GROUP = "authentication.k8s.io"
NETWORKING_GROUP = "networking.k8s.io"


@dataclass(frozen=True, slots=True)
class Kind:
    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool
    status: bool = False
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    #: field selectors beyond metadata.name (and metadata.namespace for namespaced kinds)
    field_selectors: tuple[str, ...] = ()
    #: subresources other than status (eviction, binding, token …)
    extra_subresources: tuple[str, ...] = ()
    #: a review (SubjectAccessReview, SelfSubjectReview …): created and answered, never stored
    review: bool = False
    #: how the kind's own field-label conversion refuses a label ("{label}" stands for it); "" when upstream
    #: registers none and the generic one answers: it takes metadata.name and metadata.namespace, whatever the
    #: scope, and refuses the rest in words of its own
    field_label_error: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    group_version = api_version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def group_resource(self) -> str:
        """`pods` or `deviceclasses.resource.k8s.io`, as API error messages spell it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def qualified_kind(self) -> str:
        """`Pod` or `DeviceClass.resource.k8s.io`, as 422 messages spell it."""
        return f"{self.kind}.{self.group}" if self.group else self.kind

    @property
    def subresources(self) -> tuple[str, ...]:
        return (("status",) if self.status else ()) + self.extra_subresources

    @property
    def field_labels(self) -> tuple[str, ...]:
        """Every field a `?fieldSelector=` may name: metadata.name (and .namespace), then the kind's own.

        A kind with a conversion of its own takes metadata.namespace only when namespaced; the generic
        conversion takes it for every kind (on a cluster-scoped one it selects as the empty string).
        """
        if self.namespaced or not self.field_label_error:
            return ("metadata.name", "metadata.namespace") + self.field_selectors
        return ("metadata.name",) + self.field_selectors

    def unsupported_field_label(self, label: str) -> str:
        """The 400 message for a `?fieldSelector=` naming `label`, which `field_labels` lacks."""
        if self.field_label_error:
            return self.field_label_error.format(label=label)
        return (
            f'{json.dumps(label)} is not a known field selector: only "metadata.name", "metadata.namespace"'
        )

    def path(self, *, namespace: str | None = None, name: str | None = None, subresource: str = "") -> str:
        """The REST path: `/apis/resource.k8s.io/v1/resourceslices/<name>` and the like."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        base += f"/{self.plural}"
        if name is not None:
            base += f"/{quote(name, safe='')}"
        if subresource:
            base += f"/{subresource}"
        return base


def _k(
    group: str,
    version: str,
    plural: str,
    kind: str,
    *,
    namespaced: bool,
    status: bool = False,
    short_names: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
    field_selectors: tuple[str, ...] = (),
    extra_subresources: tuple[str, ...] = (),
    review: bool = False,
    field_label_error: str = "",
) -> Kind:
    return Kind(
        group, version, plural, kind, namespaced, status, short_names, categories, field_selectors,
        extra_subresources, review, field_label_error,
    )  # fmt: skip


#: How the core group's conversions (Pod, Node, ReplicationController, Namespace, Event, Secret, Service) refuse a
#: label. Endpoints, PersistentVolume(Claim), DaemonSet, StatefulSet,
#: ControllerRevision, CronJob and Ingress register none.
_CORE_FIELD_LABEL_ERROR = "field label not supported: {label}"


KINDS: tuple[Kind, ...] = (
    _k("", "v1", "namespaces", "Namespace", namespaced=False, short_names=("ns",), status=True,
       field_selectors=("status.phase",), extra_subresources=("finalize",),
       field_label_error=_CORE_FIELD_LABEL_ERROR),
    _k("", "v1", "nodes", "Node", namespaced=False, short_names=("no",), status=True,
       field_selectors=("spec.unschedulable",), field_label_error=_CORE_FIELD_LABEL_ERROR),
    _k("", "v1", "pods", "Pod", namespaced=True, short_names=("po",), status=True, categories=("all",),
       field_selectors=("spec.nodeName", "status.phase", "spec.schedulerName", "spec.restartPolicy",
                        "status.nominatedNodeName", "spec.serviceAccountName", "spec.hostNetwork", "status.podIP",
                        "status.podIPs", "spec.host"),
       extra_subresources=("binding", "eviction", "log"), field_label_error=_CORE_FIELD_LABEL_ERROR),
    _k("", "v1", "serviceaccounts", "ServiceAccount", namespaced=True, short_names=("sa",),
       extra_subresources=("token",)),
    _k("", "v1", "secrets", "Secret", namespaced=True, field_selectors=("type",),
       field_label_error=_CORE_FIELD_LABEL_ERROR),
    _k("", "v1", "configmaps", "ConfigMap", namespaced=True, short_names=("cm",)),
    _k("", "v1", "services", "Service", namespaced=True, short_names=("svc",), status=True, categories=("all",),
       field_selectors=("spec.clusterIP", "spec.type"), field_label_error=_CORE_FIELD_LABEL_ERROR),
    _k("", "v1", "replicationcontrollers", "ReplicationController", namespaced=True, short_names=("rc",),
       status=True, categories=("all",), field_selectors=("status.replicas",), extra_subresources=("scale",),
       field_label_error=_CORE_FIELD_LABEL_ERROR),
    _k("", "v1", "endpoints", "Endpoints", namespaced=True, short_names=("ep",)),
    _k("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", namespaced=True, short_names=("pvc",),
       status=True),
    _k("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False, short_names=("pv",), status=True),
    _k("", "v1", "events", "Event", namespaced=True, short_names=("ev",),
       field_selectors=("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                        "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"),
       field_label_error=_CORE_FIELD_LABEL_ERROR),
    _k("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", namespaced=True,
       short_names=("pdb",), status=True),
    _k("apps", "v1", "deployments", "Deployment", namespaced=True, short_names=("deploy",), status=True,
       categories=("all",), extra_subresources=("scale",)),
    _k("apps", "v1", "replicasets", "ReplicaSet", namespaced=True, short_names=("rs",), status=True,
       categories=("all",), field_selectors=("status.replicas",), extra_subresources=("scale",),
       field_label_error=_CORE_FIELD_LABEL_ERROR),
    _k("apps", "v1", "daemonsets", "DaemonSet", namespaced=True, short_names=("ds",), status=True,
       categories=("all",)),
    _k("apps", "v1", "statefulsets", "StatefulSet", namespaced=True, short_names=("sts",), status=True,
       categories=("all",), extra_subresources=("scale",)),
    # the DaemonSet and StatefulSet controllers' template history (kubectl rollout history|undo reads it)
    _k("apps", "v1", "controllerrevisions", "ControllerRevision", namespaced=True),
    _k("batch", "v1", "jobs", "Job", namespaced=True, status=True, categories=("all",),
       field_selectors=("status.successful",), field_label_error='field label "{label}" not supported for batchv1.Job'),
    _k("batch", "v1", "cronjobs", "CronJob", namespaced=True, short_names=("cj",), status=True,
       categories=("all",)),
    _k(NETWORKING_GROUP, "v1", "ingresses", "Ingress", namespaced=True, short_names=("ing",), status=True),
    # what `kubectl describe ingress` reads of a backend service (and v1 Endpoints' deprecation names)
    _k("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", namespaced=True),
    _k("coordination.k8s.io", "v1", "leases", "Lease", namespaced=True),
    # Workload-aware scheduling (GenericWorkload; its resourceClaims: DRAWorkloadResourceClaims, beta in 1.37).
    _k("scheduling.k8s.io", "v1beta1", "podgroups", "PodGroup", namespaced=True, status=True),
    _k(RBAC_GROUP, "v1", "clusterroles", "ClusterRole", namespaced=False),
    _k(RBAC_GROUP, "v1", "clusterrolebindings", "ClusterRoleBinding", namespaced=False),
    _k(RBAC_GROUP, "v1", "roles", "Role", namespaced=True),
    _k(RBAC_GROUP, "v1", "rolebindings", "RoleBinding", namespaced=True),
    # Reviews are answered, never stored: the API server offers only `create` on them.
    _k(AUTHORIZATION_GROUP, "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", namespaced=False,
       review=True),
    _k(AUTHORIZATION_GROUP, "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", namespaced=False,
       review=True),
    _k(AUTHORIZATION_GROUP, "v1", "subjectaccessreviews", "SubjectAccessReview", namespaced=False, review=True),
    _k(AUTHORIZATION_GROUP, "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview", namespaced=True,
       review=True),
    _k(AUTHENTICATION_GROUP, "v1", "selfsubjectreviews", "SelfSubjectReview", namespaced=False, review=True),
    _k(AUTHENTICATION_GROUP, "v1", "tokenreviews", "TokenReview", namespaced=False, review=True),
    _k(RESOURCE_GROUP, "v1", "deviceclasses", "DeviceClass", namespaced=False),
    _k(RESOURCE_GROUP, "v1", "resourceclaims", "ResourceClaim", namespaced=True, status=True),
    _k(RESOURCE_GROUP, "v1", "resourceclaimtemplates", "ResourceClaimTemplate", namespaced=True),
    _k(RESOURCE_GROUP, "v1", "resourceslices", "ResourceSlice", namespaced=False,
       field_selectors=("spec.nodeName", "spec.driver"),
       field_label_error="field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: {label}"),
    _k(RESOURCE_GROUP, "v1", "devicetaintrules", "DeviceTaintRule", namespaced=False, status=True),
    _k(RESOURCE_GROUP, "v1alpha3", "resourcepoolstatusrequests", "ResourcePoolStatusRequest",
       namespaced=False, status=True),
)  # fmt: skip

BY_PLURAL: dict[str, Kind] = {k.plural: k for k in KINDS}
BY_KIND: dict[str, Kind] = {k.kind: k for k in KINDS}

#: The DRA kinds of resource.k8s.io, in the order pages list them.
DRA_KINDS: tuple[str, ...] = (
    "deviceclasses",
    "resourceslices",
    "resourceclaims",
    "resourceclaimtemplates",
    "devicetaintrules",
    "resourcepoolstatusrequests",
)


def kind_for(plural: str) -> Kind:
    """The kind called `plural`; ValueError naming the known ones otherwise."""
    try:
        return BY_PLURAL[plural]
    except KeyError:
        raise ValueError(f"kind {plural!r} is not one of {', '.join(sorted(BY_PLURAL))}") from None
