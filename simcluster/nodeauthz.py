"""The Node authorizer (`--authorization-mode=Node,RBAC`): what a kubelet, `system:node:<name>` in group
`system:nodes`, may do, as upstream's plugin/pkg/auth/authorizer/node decides it.

Reads of what hangs off a node go through the node authorizer's graph, here asked of the store as it is
(upstream keeps the same edges from informers): a pod bound to the node, and through it the ResourceClaims
(`spec.resourceClaims`, the claims generated for it, its extended-resource claim), Secrets, ConfigMaps,
PersistentVolumeClaims and its ServiceAccount (a mirror pod links only itself); a ResourceSlice whose
`spec.nodeName` is the node. A kubelet lists and watches ResourceSlices and pods only with the field
selector `spec.nodeName=<its node>`, its own Node by name, its own Lease in `kube-node-lease`. Anything
else is judged by the static node rules (bootstrappolicy.NodeRules, also the ClusterRole `system:node`).
A refusal is "no opinion" with upstream's reason, so RBAC is asked next; the NodeRestriction admission
plugin (`simcluster.noderestriction`) checks what the authorizer cannot see, such as a new object's node.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from dra.pods import persistent_volume_claim_names
from simcluster.auth import UserInfo
from simcluster.errors import ApiError
from simcluster.rbac import NODE_RULES, Attributes, rule_allows

if TYPE_CHECKING:
    from simcluster.store import Store

__all__ = ["NodeAuthorizer", "node_identity"]

NODE_USER_PREFIX = "system:node:"
NODES_GROUP = "system:nodes"
NODE_LEASE_NAMESPACE = "kube-node-lease"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
Decision = tuple[bool, str]
_POD_SUBRESOURCE_WRITES = frozenset({("status", "update"), ("status", "patch"), ("eviction", "create")})

#: the authorizer cannot list a node's rules: SelfSubjectRulesReview says so (incomplete, with this error)
RULES_UNSUPPORTED = "node authorizer does not support user rule resolution"


def node_identity(user: UserInfo) -> tuple[str, bool]:
    """(node name, is a node): `system:node:<name>` in group `system:nodes` (the name may be empty)."""
    if not user.name.startswith(NODE_USER_PREFIX) or NODES_GROUP not in user.groups:
        return "", False
    return user.name[len(NODE_USER_PREFIX) :], True


def _go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _no_relationship(node: str) -> Decision:
    return False, f"no relationship found between node '{node}' and this object"


class NodeAuthorizer:
    """Decides for nodes only; (False, reason) is upstream's DecisionNoOpinion, so the next mode decides."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._subdivided: dict[tuple[str, str], Callable[[str, Attributes], Decision]] = {
            ("", "secrets"): self._read_namespaced,
            ("", "configmaps"): self._read_namespaced,
            ("", "persistentvolumeclaims"): self._pvc,
            ("", "persistentvolumes"): self._get,
            ("resource.k8s.io", "resourceclaims"): self._get,
            ("storage.k8s.io", "volumeattachments"): self._get,
            ("", "serviceaccounts"): self._create_token,
            ("coordination.k8s.io", "leases"): self._lease,
            ("storage.k8s.io", "csinodes"): self._csinode,
            ("resource.k8s.io", "resourceslices"): self._resource_slice,
            ("", "nodes"): self._node,
            ("", "pods"): self._pod,
        }

    def rules_error(self, user: UserInfo) -> str:
        """Why the user's rules cannot all be listed ("" when they can)."""
        return RULES_UNSUPPORTED if node_identity(user)[1] else ""

    def authorize(self, attrs: Attributes) -> Decision:
        node, is_node = node_identity(attrs.user)
        if not is_node:
            return False, ""
        if not node:
            return False, f"unknown node for user {_go_quote(attrs.user.name)}"
        if attrs.resource_request:
            subdivided = self._subdivided.get((attrs.api_group, attrs.resource))
            if subdivided is not None:
                return subdivided(node, attrs)
        return any(rule_allows(rule, attrs) for rule in NODE_RULES), ""

    # ------------------------------------------------------------------ by resource

    def _get(self, node: str, attrs: Attributes) -> Decision:
        if attrs.verb != "get":
            return False, "can only get individual resources of this type"
        if attrs.subresource:
            return False, "cannot get subresource"
        return self._related(node, attrs)

    def _read_namespaced(self, node: str, attrs: Attributes) -> Decision:
        if attrs.verb not in ("get", "list", "watch"):
            return False, "can only read resources of this type"
        if attrs.subresource:
            return False, "cannot read subresource"
        if not attrs.namespace:
            return False, "can only read namespaced object of this type"
        return self._related(node, attrs)

    def _pvc(self, node: str, attrs: Attributes) -> Decision:
        if attrs.subresource != "status":
            return self._get(node, attrs)
        if attrs.verb not in ("update", "patch"):
            return False, "can only get/update/patch this type"
        return self._related(node, attrs)

    def _create_token(self, node: str, attrs: Attributes) -> Decision:
        if attrs.verb != "create" or not attrs.name:
            return False, "can only create tokens for individual service accounts"
        if attrs.subresource != "token":
            return False, "can only create token subresource of serviceaccount"
        return (True, "") if self._has_path(node, attrs) else _no_relationship(node)

    def _lease(self, node: str, attrs: Attributes) -> Decision:
        if attrs.verb not in ("get", "create", "update", "patch", "delete"):
            return False, "can only get, create, update, patch, or delete a node lease"
        if attrs.namespace != NODE_LEASE_NAMESPACE:
            return False, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace'
        # a create names no object: the NodeRestriction admission plugin checks the new lease's name
        if attrs.verb != "create" and attrs.name != node:
            return False, "can only access node lease with the same name as the requesting node"
        return True, ""

    def _csinode(self, node: str, attrs: Attributes) -> Decision:
        if attrs.verb not in ("get", "create", "update", "patch", "delete"):
            return False, "can only get, create, update, patch, or delete a CSINode"
        if attrs.subresource:
            return False, "cannot authorize CSINode subresources"
        if attrs.verb != "create" and attrs.name != node:
            return False, "can only access CSINode with the same name as the requesting node"
        return True, ""

    def _resource_slice(self, node: str, attrs: Attributes) -> Decision:
        if attrs.subresource:
            return False, "cannot authorize ResourceSlice subresources"
        if attrs.verb == "create":
            return True, ""  # the NodeRestriction admission plugin checks the new slice's spec.nodeName
        if attrs.verb in ("get", "update", "patch", "delete"):
            return self._related(node, attrs)  # the existing slice must be the node's
        if attrs.verb in ("watch", "list", "deletecollection"):
            if _selects_node(attrs, node):
                return True, ""
            return False, "can only list/watch/deletecollection resourceslices with nodeName field selector"
        return False, (
            "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, "
            "patch, delete, deletecollection"
        )

    def _node(self, node: str, attrs: Attributes) -> Decision:
        if not attrs.subresource:
            if attrs.verb in ("create", "update", "patch"):
                return True, ""  # the NodeRestriction admission plugin keeps a node to its own Node
            if attrs.verb in ("get", "list", "watch"):
                # by name, not through the graph: a kubelet may read its Node before it registers it
                if attrs.name == node:
                    return True, ""
                if not attrs.name:
                    return False, f"node '{node}' cannot read all nodes, only its own Node object"
                return False, f"node '{node}' cannot read '{attrs.name}', only its own Node object"
        elif attrs.subresource == "status" and attrs.verb in ("update", "patch"):
            return True, ""
        return False, ""

    def _pod(self, node: str, attrs: Attributes) -> Decision:
        if not attrs.subresource:
            if attrs.verb == "get":
                return self._get(node, attrs)
            if attrs.verb in ("list", "watch"):
                if _selects_node(attrs, node):
                    return True, ""
                if attrs.name:  # a single pod known to be bound to the node
                    return self._related(node, attrs)
                return False, "can only list/watch pods with spec.nodeName field selector"
            if attrs.verb in ("create", "delete"):
                return True, ""  # mirror pods; the NodeRestriction admission plugin checks them
        elif (attrs.subresource, attrs.verb) in _POD_SUBRESOURCE_WRITES:
            return True, ""  # its pods' status, evictions: the NodeRestriction admission plugin checks them
        return False, ""

    # ------------------------------------------------------------------ the graph

    def _related(self, node: str, attrs: Attributes) -> Decision:
        if not attrs.name:
            return False, "No Object name found"
        return (True, "") if self._has_path(node, attrs) else _no_relationship(node)

    def _has_path(self, node: str, attrs: Attributes) -> bool:
        """A path from the object to the node in upstream's graph: node ← pod ← secret, configmap, pvc,
        serviceaccount, resourceclaim; node ← resourceslice. PersistentVolumes and VolumeAttachments do not
        exist here, so nothing leads from them."""
        kind, name, namespace = attrs.resource, attrs.name, attrs.namespace
        if kind == "resourceslices":
            try:
                found = self.store.get_entry("resourceslices", name).obj
            except ApiError:
                return False
            return bool((found.get("spec") or {}).get("nodeName") == node)
        if kind == "pods":
            try:
                pod = self.store.get_entry("pods", name, namespace=namespace).obj
            except ApiError:
                return False
            return bool((pod.get("spec") or {}).get("nodeName") == node)
        references = _REFERENCES.get(kind)
        if references is None or not namespace:
            return False
        return any(name in references(pod) for pod in self._pods_on(node, namespace))

    def _pods_on(self, node: str, namespace: str) -> Iterator[Mapping[str, Any]]:
        """The namespace's pods bound to the node whose references count (a mirror pod's do not)."""
        for entry in self.store.snapshot("pods", namespace=namespace)[1]:
            pod = entry.obj
            if (pod.get("spec") or {}).get("nodeName") != node:
                continue
            if MIRROR_POD_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {}):
                continue
            yield pod


def _selects_node(attrs: Attributes, node: str) -> bool:
    return any(
        field == "spec.nodeName" and op == "=" and value == node for field, op, value in attrs.field_selector
    )


# ---------------------------------------------------------------------------------------------- what a pod names


def _containers(spec: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(key) or ():
            if isinstance(container, Mapping):
                yield container


def _secret_names(pod: Mapping[str, Any]) -> set[str]:
    """podutil.VisitPodSecretNames: pull secrets, env and envFrom, secret-backed volumes."""
    spec = pod.get("spec") or {}
    names = {str(ref.get("name")) for ref in spec.get("imagePullSecrets") or () if isinstance(ref, Mapping)}
    for container in _containers(spec):
        for env_from in container.get("envFrom") or ():
            names.add(str((env_from.get("secretRef") or {}).get("name", "")))
        for env in container.get("env") or ():
            names.add(str(((env.get("valueFrom") or {}).get("secretKeyRef") or {}).get("name", "")))
    for volume in spec.get("volumes") or ():
        names.add(str((volume.get("secret") or {}).get("secretName", "")))
        for source in (volume.get("projected") or {}).get("sources") or ():
            names.add(str((source.get("secret") or {}).get("name", "")))
        for kind in ("cephfs", "cinder", "flexVolume", "rbd", "scaleIO", "iscsi", "storageos"):
            ref = (volume.get(kind) or {}).get("secretRef") or {}
            names.add(str(ref.get("name", "")))
        names.add(str((volume.get("azureFile") or {}).get("secretName", "")))
        names.add(str(((volume.get("csi") or {}).get("nodePublishSecretRef") or {}).get("name", "")))
    names.discard("")
    return names


def _config_map_names(pod: Mapping[str, Any]) -> set[str]:
    """podutil.VisitPodConfigmapNames: env and envFrom, configMap and projected volumes."""
    spec = pod.get("spec") or {}
    names: set[str] = set()
    for container in _containers(spec):
        for env_from in container.get("envFrom") or ():
            names.add(str((env_from.get("configMapRef") or {}).get("name", "")))
        for env in container.get("env") or ():
            names.add(str(((env.get("valueFrom") or {}).get("configMapKeyRef") or {}).get("name", "")))
    for volume in spec.get("volumes") or ():
        names.add(str((volume.get("configMap") or {}).get("name", "")))
        for source in (volume.get("projected") or {}).get("sources") or ():
            names.add(str((source.get("configMap") or {}).get("name", "")))
    names.discard("")
    return names


def _resource_claim_names(pod: Mapping[str, Any]) -> set[str]:
    """resourceclaim.Name of each `spec.resourceClaims` entry (a template's claim once it is generated),
    and the extended-resource claim."""
    status = pod.get("status") or {}
    generated = {
        s.get("name"): s.get("resourceClaimName")
        for s in status.get("resourceClaimStatuses") or ()
        if isinstance(s, Mapping)
    }
    names: set[str] = set()
    for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
        if entry.get("resourceClaimName"):
            names.add(str(entry["resourceClaimName"]))
        elif generated.get(entry.get("name")):
            names.add(str(generated[entry.get("name")]))
    extended = (status.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
    if extended:
        names.add(str(extended))
    return names


def _service_account_names(pod: Mapping[str, Any]) -> set[str]:
    account = (pod.get("spec") or {}).get("serviceAccountName")
    return {str(account)} if account else set()


_REFERENCES: dict[str, Callable[[Mapping[str, Any]], set[str]]] = {
    "secrets": _secret_names,
    "configmaps": _config_map_names,
    "persistentvolumeclaims": persistent_volume_claim_names,
    "resourceclaims": _resource_claim_names,
    "serviceaccounts": _service_account_names,
}
