"""A kubeconfig that points any Kubernetes client at a running simcluster."""

from __future__ import annotations

from pathlib import Path

import yaml

CONTEXT = "simcluster"
DUMMY_TOKEN = "simcluster-token"  # simcluster does not authenticate; clients just need a credential


def kubeconfig_document(server_url: str, *, namespace: str = "default") -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": {"server": server_url}}],
        "users": [{"name": f"{CONTEXT}-admin", "user": {"token": DUMMY_TOKEN}}],
        "contexts": [
            {
                "name": CONTEXT,
                "context": {"cluster": CONTEXT, "user": f"{CONTEXT}-admin", "namespace": namespace},
            }
        ],
        "current-context": CONTEXT,
        "preferences": {},
    }


def write_kubeconfig(path: Path, server_url: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(kubeconfig_document(server_url), sort_keys=False))
    path.chmod(0o600)
    return path
