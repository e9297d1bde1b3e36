"""Namespaces as kube-apiserver's namespace registry and the root-ca-cert-publisher see them.

A DELETE of a namespace only marks it (`deletionTimestamp`, phase Terminating); the namespace controller
empties it and takes its `kubernetes` finalizer off `spec.finalizers` through the `finalize` subresource, and
the namespace goes once that list and `metadata.finalizers` are empty. Every namespace holds the ConfigMap
`kube-root-ca.crt` with the cluster CA; the publisher puts it back when it goes or its data changes, except
where the namespace refuses new content.
"""

from __future__ import annotations

import copy
from typing import Any

Obj = dict[str, Any]

#: The namespace controller's token in `spec.finalizers` (core/v1 FinalizerKubernetes).
KUBERNETES_FINALIZER = "kubernetes"
TERMINATING = "Terminating"

ROOT_CA_CONFIG_MAP = "kube-root-ca.crt"
ROOT_CA_DESCRIPTION_ANNOTATION = "kubernetes.io/description"
ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as "
    "the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of "
    "Kubernetes clusters."
)


def spec_finalizers(namespace: Obj) -> list[str]:
    spec = namespace.get("spec")
    finalizers = spec.get("finalizers") if isinstance(spec, dict) else None
    return [str(f) for f in finalizers] if isinstance(finalizers, list) else []


def is_terminating(namespace: Obj) -> bool:
    status = namespace.get("status")
    return isinstance(status, dict) and status.get("phase") == TERMINATING


def root_ca_config_map(namespace: str, pem: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": ROOT_CA_CONFIG_MAP,
            "namespace": namespace,
            "annotations": {ROOT_CA_DESCRIPTION_ANNOTATION: ROOT_CA_DESCRIPTION},
        },
        "data": {"ca.crt": pem},
    }


def root_ca_repaired(config_map: Obj, pem: str) -> Obj | None:
    """The publisher's update of an edited `kube-root-ca.crt`: a copy with the CA as its only data and the
    description annotation, or None when its data is the CA and some description is there (other edits,
    labels or binaryData say, stay)."""
    data = {"ca.crt": pem}
    annotations = (config_map.get("metadata") or {}).get("annotations") or {}
    if config_map.get("data") == data and annotations.get(ROOT_CA_DESCRIPTION_ANNOTATION):
        return None
    repaired = copy.deepcopy(config_map)
    repaired["data"] = data
    repaired["metadata"].setdefault("annotations", {})[ROOT_CA_DESCRIPTION_ANNOTATION] = ROOT_CA_DESCRIPTION
    return repaired
