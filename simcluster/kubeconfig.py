"""A kubeconfig that points any Kubernetes client at a running simcluster: the server's URL, the cluster CA
(`certificate-authority-data`) and the admin's client certificate (CN kubernetes-admin, O system:masters)."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from simcluster.pki import Pki

CONTEXT = "simcluster"
ADMIN = f"{CONTEXT}-admin"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def kubeconfig_document(
    server_url: str,
    *,
    pki: Pki | None = None,
    namespace: str = "default",
    token: str | None = None,
    user: str = ADMIN,
    client_cert: tuple[bytes, bytes] | None = None,
) -> dict[str, object]:
    """A kubeconfig for `server_url`: with `pki` the CA and (unless a `token` or another `client_cert`
    (cert PEM, key PEM) is given) the admin certificate."""
    cluster: dict[str, object] = {"server": server_url}
    credential: dict[str, object] = {}
    if pki is not None:
        cluster["certificate-authority-data"] = _b64(pki.ca_pem)
        if token is None:
            cert, key = client_cert or (pki.admin_cert_pem, pki.admin_key_pem)
            credential = {"client-certificate-data": _b64(cert), "client-key-data": _b64(key)}
    if token is not None:
        credential = {"token": token}
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": cluster}],
        "users": [{"name": user, "user": credential}],
        "contexts": [
            {"name": CONTEXT, "context": {"cluster": CONTEXT, "user": user, "namespace": namespace}}
        ],
        "current-context": CONTEXT,
        "preferences": {},
    }


def write_kubeconfig(
    path: Path,
    server_url: str,
    *,
    pki: Pki | None = None,
    namespace: str = "default",
    token: str | None = None,
    user: str = ADMIN,
    client_cert: tuple[bytes, bytes] | None = None,
) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = kubeconfig_document(
        server_url, pki=pki, namespace=namespace, token=token, user=user, client_cert=client_cert
    )
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    path.chmod(0o600)
    return path
