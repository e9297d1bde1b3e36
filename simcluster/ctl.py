"""`python -m simcluster ctl --kubeconfig PATH ACTION [key=value …]`: call a `/_simcluster/` fault hook
with the kubeconfig's server, CA and admin credentials (the hooks are admin only, like any non-resource URL
that only `cluster-admin` grants)."""

from __future__ import annotations

import argparse
import base64
import json
import os
import ssl
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import yaml

ACTIONS = ("device-unhealthy", "device-healthy", "compact", "drop-watches", "latency", "restart")


def _current(config: dict[str, Any], section: str, name: str) -> dict[str, Any]:
    for item in config.get(section) or []:
        if item.get("name") == name:
            value = item.get(section.rstrip("s")) or {}
            return value if isinstance(value, dict) else {}
    raise SystemExit(f"simcluster ctl: no {section.rstrip('s')} {name!r} in the kubeconfig")


def _data(entry: dict[str, Any], key: str) -> bytes | None:
    if entry.get(f"{key}-data"):
        return base64.b64decode(entry[f"{key}-data"])
    if entry.get(key):
        return Path(entry[key]).read_bytes()
    return None


def request(kubeconfig: Path, action: str, params: dict[str, str]) -> tuple[int, Any]:
    """POST /_simcluster/ACTION?params as the kubeconfig's current user: (HTTP status, parsed body)."""
    config = yaml.safe_load(Path(kubeconfig).read_text()) or {}
    context = _current(config, "contexts", str(config.get("current-context", "")))
    cluster = _current(config, "clusters", str(context.get("cluster", "")))
    user = _current(config, "users", str(context.get("user", "")))
    url = f"{str(cluster['server']).rstrip('/')}/_simcluster/{action}"
    if params:
        url += "?" + urlencode(params)
    req = urllib.request.Request(url, method="POST")
    tls: ssl.SSLContext | None = None
    if url.startswith("https://"):
        ca = _data(cluster, "certificate-authority")
        tls = ssl.create_default_context(cadata=ca.decode() if ca else None)
        cert, key = _data(user, "client-certificate"), _data(user, "client-key")
        if cert and key:
            with tempfile.TemporaryDirectory() as scratch:
                cert_file, key_file = Path(scratch, "c.pem"), Path(scratch, "k.pem")
                cert_file.write_bytes(cert)
                fd = os.open(key_file, os.O_WRONLY | os.O_CREAT, 0o600)
                os.write(fd, key)
                os.close(fd)
                tls.load_cert_chain(cert_file, key_file)
    if user.get("token"):
        req.add_header("Authorization", f"Bearer {user['token']}")
    try:
        with urllib.request.urlopen(req, timeout=30, context=tls) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m simcluster ctl", description="Call a simcluster fault hook."
    )
    parser.add_argument("--kubeconfig", type=Path, default=Path(os.environ.get("KUBECONFIG", "")) or None,
                        required="KUBECONFIG" not in os.environ, help="the kubeconfig simcluster wrote")  # fmt: skip
    parser.add_argument("action", choices=ACTIONS)
    parser.add_argument(
        "params", nargs="*", metavar="key=value", help="e.g. driver=gpu.example.com node=node-1 device=gpu-0"
    )
    args = parser.parse_args(argv)
    params: dict[str, str] = {}
    for item in args.params:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"{item!r} is not key=value")
        params[key] = value
    status, body = request(args.kubeconfig, args.action, params)
    print(json.dumps(body, indent=2))
    return 0 if status < 400 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
