"""Cluster access: the only package that imports `kubernetes`.

The official client is used for what it does well — reading a kubeconfig or the in-cluster service
account (TLS, tokens, exec plugins) — and its urllib3 pool for the requests. Bodies are exchanged as raw
JSON dicts: the generated pydantic models are ~12× slower to parse than `json.loads` (libraries.md §2)
and mis-type ResourceClaim watch events (dra-api.md §10.3).
"""

from inventory.kube.client import (
    FIELD_MANAGER,
    KIND,
    MIRRORED_KINDS,
    Identity,
    KubeClient,
    KubeError,
    KubeTimeout,
    Resource,
    WatchEvent,
    connect,
)

__all__ = [
    "FIELD_MANAGER",
    "KIND",
    "MIRRORED_KINDS",
    "Identity",
    "KubeClient",
    "KubeError",
    "KubeTimeout",
    "Resource",
    "WatchEvent",
    "connect",
]
