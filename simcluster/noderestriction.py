"""The NodeRestriction admission plugin: what a kubelet (`system:node:<name>`, group `system:nodes`) may
write, where the Node authorizer cannot tell from the request alone (the content of a new object, each
object a collection delete removes). In upstream's words, e.g.

    resourceslices.resource.k8s.io "gpu-node-1" is forbidden: can only create ResourceSlice with the same
    NodeName as the requesting node

A node may create and delete ResourceSlices of its own node only; change its own Node (not its taints, not
labels outside the kubelet's set), its own Lease in `kube-node-lease`; create mirror pods of its own and
delete pods bound to it; update the status of pods bound to it (not their labels or claim statuses); evict
pods bound to it; request tokens bound to a pod on it. The requester is the request's user (`REQUESTER`);
in-process writers are not checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from simcluster.errors import ApiError, not_found
from simcluster.escalation import REQUESTER
from simcluster.nodeauthz import MIRROR_POD_ANNOTATION, NODE_LEASE_NAMESPACE, node_identity
from simcluster.resources import ResourceDef, resource_for
from simcluster.store import Store

__all__ = ["NodeRestriction"]

Obj = dict[str, Any]
_NODE_RESTRICTION_LABELS = "node-restriction.kubernetes.io"
#: kubelet's well-known labels (k8s.io/kubelet/pkg/apis): the kubernetes.io labels a node may set itself
_KUBELET_LABELS = frozenset({
    "kubernetes.io/hostname", "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type", "kubernetes.io/os", "kubernetes.io/arch",
    "beta.kubernetes.io/os", "beta.kubernetes.io/arch",
})  # fmt: skip
_KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")


def _q(text: object) -> str:
    """Go's %q of a plain string."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _forbidden(resource: ResourceDef, name: str, message: str) -> ApiError:
    """admission.NewForbidden: `<resource>.<group> "<name>" is forbidden: <message>`."""
    details: dict[str, Any] = {"name": name}
    if resource.group:
        details["group"] = resource.group
    details["kind"] = resource.plural
    return ApiError(403, "Forbidden", f'{resource.group_resource} "{name}" is forbidden: {message}', details)


def _name(obj: Obj | None, old: Obj | None) -> str:
    """The request's name (the new object's, or its generateName, on a create), as admission errors say it."""
    written = obj if obj is not None else old
    meta = (written or {}).get("metadata") or {}
    return str(meta.get("name") or meta.get("generateName") or "Unknown")


class NodeRestriction:
    """The store's admission hook, and the checks of the subresources that do not write through the store
    (`pods/eviction`, `serviceaccounts/token`)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __call__(
        self, operation: str, resource: ResourceDef, obj: Obj | None, old: Obj | None, subresource: str | None
    ) -> None:
        name = _name(obj, old)
        node = self._requesting_node(resource, name)
        if node is None:
            return
        key = (resource.group, resource.plural)
        if key == ("", "pods"):
            self._pod(node, operation, resource, name, obj, old, subresource)
        elif key == ("", "nodes"):
            self._node(node, operation, resource, name, obj, old)
        elif key == ("coordination.k8s.io", "leases"):
            self._lease(node, resource, name, obj, old)
        elif key == ("resource.k8s.io", "resourceslices"):
            self._resource_slice(node, operation, resource, name, obj, old)

    def _requesting_node(self, resource: ResourceDef, name: str) -> str | None:
        """The node the request comes from; None for anyone else. 403 for a node user without a name."""
        user = REQUESTER.get()
        if user is None:
            return None
        node, is_node = node_identity(user)
        if not is_node:
            return None
        if not node:
            raise _forbidden(resource, name, f"could not determine node from user {_q(user.name)}")
        return node

    # ------------------------------------------------------------------ what goes through the store

    def _pod(self, node: str, operation: str, resource: ResourceDef, name: str, obj: Obj | None,
             old: Obj | None, subresource: str | None) -> None:  # fmt: skip
        if subresource is None:
            if operation == "CREATE" and obj is not None:
                self._mirror_pod(node, resource, name, obj)
            elif operation == "DELETE" and old is not None:
                if (old.get("spec") or {}).get("nodeName") != node:
                    raise _forbidden(resource, name, f"node {_q(node)} can only delete pods with spec.nodeName set to itself")  # fmt: skip
            else:
                raise _forbidden(resource, name, f"unexpected operation {_q(operation)}, node {_q(node)} can only "
                                                 "create and delete mirror pods")  # fmt: skip
        elif subresource == "status":
            if operation != "UPDATE" or obj is None or old is None:
                raise _forbidden(resource, name, f"unexpected operation {_q(operation)}")
            if (old.get("spec") or {}).get("nodeName") != node:
                raise _forbidden(resource, name, f"node {_q(node)} can only update pod status for pods with "
                                                 "spec.nodeName set to itself")  # fmt: skip
            if _labels(obj) != _labels(old):
                raise _forbidden(resource, name, f"node {_q(node)} cannot update labels through pod status")
            if _claim_statuses(obj) != _claim_statuses(old):
                raise _forbidden(resource, name, f"node {_q(node)} cannot update resource claim statues")
        else:
            raise _forbidden(resource, name, f"unexpected pod subresource {_q(subresource)}, only 'status' and "
                                             "'eviction' are allowed")  # fmt: skip

    def _mirror_pod(self, node: str, resource: ResourceDef, name: str, pod: Obj) -> None:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        who = _q(node)
        if MIRROR_POD_ANNOTATION not in (meta.get("annotations") or {}):
            raise _forbidden(resource, name, f"pod does not have {_q(MIRROR_POD_ANNOTATION)} annotation, node "
                                             f"{who} can only create mirror pods")  # fmt: skip
        if spec.get("nodeName") != node:
            raise _forbidden(
                resource, name, f"node {who} can only create pods with spec.nodeName set to itself"
            )
        owners = meta.get("ownerReferences") or []
        if len(owners) > 1:
            raise _forbidden(resource, name, f"node {who} can only create pods with a single owner reference set to itself")  # fmt: skip
        if not owners:
            raise _forbidden(resource, name, f"node {who} can only create pods with an owner reference set to itself")  # fmt: skip
        owner = owners[0]
        if (owner.get("apiVersion"), owner.get("kind"), owner.get("name")) != ("v1", "Node", node):
            raise _forbidden(resource, name, f"node {who} can only create pods with an owner reference set to itself")  # fmt: skip
        if not owner.get("controller"):
            raise _forbidden(resource, name, f"node {who} can only create pods with a controller owner reference set to itself")  # fmt: skip
        if owner.get("blockOwnerDeletion"):
            raise _forbidden(
                resource, name, f"node {who} must not set blockOwnerDeletion on an owner reference"
            )
        nodes = resource_for("nodes")
        assert nodes is not None
        try:
            node_uid = self.store.get_entry("nodes", node).obj["metadata"].get("uid")
        except ApiError:
            raise not_found(nodes, node) from None
        if owner.get("uid") != node_uid:
            raise _forbidden(resource, name, f"node {node} UID mismatch: expected {owner.get('uid', '')} got {node_uid}")  # fmt: skip
        if spec.get("serviceAccountName"):
            raise _forbidden(
                resource, name, f"node {who} can not create pods that reference a service account"
            )
        references = (
            (
                "secrets",
                _mentions(
                    pod,
                    "secret",
                    "secretName",
                    "secretRef",
                    "secretKeyRef",
                    "nodePublishSecretRef",
                    "imagePullSecrets",
                ),
            ),
            ("configmaps", _mentions(pod, "configMap", "configMapRef", "configMapKeyRef")),
            ("clustertrustbundles", _mentions(pod, "clusterTrustBundle")),
            (
                "persistentvolumeclaims",
                any(v.get("persistentVolumeClaim") for v in spec.get("volumes") or ()),
            ),
        )
        for kind, referenced in references:
            if referenced:
                raise _forbidden(resource, name, f"node {who} can not create pods that reference {kind}")

    def _node(self, node: str, operation: str, resource: ResourceDef, name: str, obj: Obj | None,
              old: Obj | None) -> None:  # fmt: skip
        if name != node:
            raise _forbidden(resource, name, f"node {_q(node)} is not allowed to modify node {_q(name)}")
        if obj is None:
            return
        spec = obj.get("spec") or {}
        if operation == "CREATE":
            if spec.get("configSource") is not None:
                raise _forbidden(resource, name, f"node {_q(node)} is not allowed to create pods with a non-nil configSource")  # fmt: skip
            refused = _forbidden_labels(_modified_labels(_labels(obj), {}))
            if refused:
                raise _forbidden(resource, name, f"node {_q(node)} is not allowed to set the following labels: "
                                                 + ", ".join(refused))  # fmt: skip
        elif old is not None:
            old_spec = old.get("spec") or {}
            if spec.get("configSource") is not None and spec.get("configSource") != old_spec.get(
                "configSource"
            ):
                raise _forbidden(resource, name, f"node {_q(node)} is not allowed to update configSource to a new non-nil configSource")  # fmt: skip
            if (spec.get("taints") or []) != (old_spec.get("taints") or []):
                raise _forbidden(resource, name, f"node {_q(node)} is not allowed to modify taints")
            refused = _forbidden_labels(_modified_labels(_labels(obj), _labels(old)))
            if refused:
                raise _forbidden(resource, name, "is not allowed to modify labels: " + ", ".join(refused))

    def _lease(self, node: str, resource: ResourceDef, name: str, obj: Obj | None, old: Obj | None) -> None:
        namespace = ((obj if obj is not None else old) or {}).get("metadata", {}).get("namespace")
        if namespace != NODE_LEASE_NAMESPACE:
            raise _forbidden(resource, name, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace')  # fmt: skip
        if name != node:
            raise _forbidden(resource, name, "can only access node lease with the same name as the requesting node")  # fmt: skip

    def _resource_slice(self, node: str, operation: str, resource: ResourceDef, name: str, obj: Obj | None,
                        old: Obj | None) -> None:  # fmt: skip
        # The node authorizer lets any create through and cannot see each object of a deletecollection.
        if operation == "CREATE" and obj is not None and (obj.get("spec") or {}).get("nodeName") != node:
            raise _forbidden(resource, name, "can only create ResourceSlice with the same NodeName as the requesting node")  # fmt: skip
        if operation == "DELETE" and old is not None and (old.get("spec") or {}).get("nodeName") != node:
            raise _forbidden(resource, name, "can only delete ResourceSlice with the same NodeName as the requesting node")  # fmt: skip

    # ------------------------------------------------------------------ subresources served beside the store

    def eviction(self, namespace: str, name: str) -> None:
        """A node evicts only pods bound to it (`pods/eviction`)."""
        pods = resource_for("pods")
        assert pods is not None
        node = self._requesting_node(pods, name)
        if node is None:
            return
        try:
            pod = self.store.get_entry("pods", name, namespace=namespace).obj
        except ApiError:
            raise not_found(pods, name) from None
        if (pod.get("spec") or {}).get("nodeName") != node:
            raise _forbidden(pods, name, f"node {node} can only evict pods with spec.nodeName set to itself")

    def token_request(self, namespace: str, account: str, body: Any) -> None:
        """A node asks tokens only bound to a pod that runs on it (`serviceaccounts/token`)."""
        accounts = resource_for("serviceaccounts")
        pods = resource_for("pods")
        assert accounts is not None and pods is not None
        node = self._requesting_node(accounts, account)
        if node is None:
            return
        ref = ((body.get("spec") or {}) if isinstance(body, dict) else {}).get("boundObjectRef")
        if (
            not isinstance(ref, dict)
            or (ref.get("apiVersion"), ref.get("kind")) != ("v1", "Pod")
            or not ref.get("name")
        ):
            raise _forbidden(accounts, account, "node requested token not bound to a pod")
        if not ref.get("uid"):
            raise _forbidden(accounts, account, "node requested token with a pod binding without a uid")
        try:
            pod = self.store.get_entry("pods", str(ref["name"]), namespace=namespace).obj
        except ApiError:
            raise not_found(pods, str(ref["name"])) from None
        if ref["uid"] != pod["metadata"].get("uid"):
            raise _forbidden(accounts, account, f"the UID in the bound object reference ({ref['uid']}) does not match "
                                                "the UID in record. The object might have been deleted and then recreated")  # fmt: skip
        if (pod.get("spec") or {}).get("nodeName") != node:
            raise _forbidden(
                accounts, account, "node requested token bound to a pod scheduled on a different node"
            )


def _labels(obj: Obj) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("labels") or {})


def _claim_statuses(pod: Obj) -> list[tuple[Any, Any]]:
    return [(s.get("name"), s.get("resourceClaimName")) for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()]  # fmt: skip


def _modified_labels(new: Mapping[str, str], old: Mapping[str, str]) -> set[str]:
    return {k for k in new.keys() | old.keys() if new.get(k) != old.get(k) or (k in new) != (k in old)}


def _label_namespace(key: str) -> str:
    prefix, slash, _ = key.partition("/")
    return prefix if slash else ""


def _is_kubelet_label(key: str) -> bool:
    namespace = _label_namespace(key)
    return key in _KUBELET_LABELS or any(
        namespace == allowed or namespace.endswith("." + allowed) for allowed in _KUBELET_LABEL_NAMESPACES
    )


def _forbidden_labels(modified: Iterable[str]) -> list[str]:
    """The labels a node may not add, remove or change on itself (sorted, as sets.String.List)."""
    refused = set()
    for key in modified:
        namespace = _label_namespace(key)
        if namespace == _NODE_RESTRICTION_LABELS or namespace.endswith("." + _NODE_RESTRICTION_LABELS):
            refused.add(key)
        kubernetes = any(namespace == d or namespace.endswith("." + d) for d in ("kubernetes.io", "k8s.io"))
        if kubernetes and not _is_kubelet_label(key):
            refused.add(key)
    return sorted(refused)


def _mentions(pod: Obj, *keys: str) -> bool:
    """The pod spec names one of `keys` anywhere (a volume source, env, envFrom, a projected source)."""
    wanted = set(keys)

    def walk(value: Any) -> bool:
        if isinstance(value, dict):
            return any((k in wanted and v) or walk(v) for k, v in value.items())
        if isinstance(value, list):
            return any(walk(v) for v in value)
        return False

    return walk(pod.get("spec") or {})
