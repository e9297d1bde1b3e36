"""Namespaces as kube-apiserver's namespace registry sees them.

A DELETE of a namespace only marks it (`deletionTimestamp`, phase Terminating); the namespace controller
empties it and takes its `kubernetes` finalizer off `spec.finalizers` through the `finalize` subresource, and
the namespace goes once that list and `metadata.finalizers` are empty.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

#: The namespace controller's token in `spec.finalizers` (core/v1 FinalizerKubernetes).
KUBERNETES_FINALIZER = "kubernetes"
TERMINATING = "Terminating"


def spec_finalizers(namespace: Obj) -> list[str]:
    spec = namespace.get("spec")
    finalizers = spec.get("finalizers") if isinstance(spec, dict) else None
    return [str(f) for f in finalizers] if isinstance(finalizers, list) else []


def is_terminating(namespace: Obj) -> bool:
    status = namespace.get("status")
    return isinstance(status, dict) and status.get("phase") == TERMINATING
