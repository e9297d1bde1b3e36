"""Every manifest in the product's source document is a valid v1.37 object."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from simcluster.validation import validate

# The guide lives in the shared workspace; DRADASH_GUIDE points elsewhere (a clone on another machine).
GUIDE = Path(os.environ.get("DRADASH_GUIDE", "/work/shared/seed/dra-v1.37-guide.txt"))
pytestmark = pytest.mark.skipif(not GUIDE.exists(), reason=f"the DRA guide is not at {GUIDE}")


@dataclass(frozen=True)
class Kind:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool


KINDS = {
    ("resource.k8s.io/v1", "DeviceClass"): Kind(
        "resource.k8s.io", "v1", "DeviceClass", "deviceclasses", False
    ),
    ("resource.k8s.io/v1", "DeviceTaintRule"): Kind(
        "resource.k8s.io", "v1", "DeviceTaintRule", "devicetaintrules", False
    ),
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): Kind(
        "resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", True
    ),
    ("resource.k8s.io/v1", "ResourceClaim"): Kind(
        "resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", True
    ),
    ("v1", "Pod"): Kind("", "v1", "Pod", "pods", True),
}


def guide_manifests() -> list[dict[str, Any]]:
    """The YAML blocks of the guide: paragraphs starting with ``apiVersion:`` (or a bare ``spec:`` fragment)."""
    manifests: list[dict[str, Any]] = []
    if not GUIDE.exists():
        return manifests
    for paragraph in GUIDE.read_text(encoding="utf-8").split("\n\n"):
        text = paragraph.strip("\n")
        if text.startswith("apiVersion:"):
            manifests.append(yaml.safe_load(text))
        elif text.startswith("spec:"):
            # The numaNode constraint snippet is only a claim's spec: wrap it in a ResourceClaim.
            manifests.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {"name": "numa-aligned", "namespace": "default"},
                    **yaml.safe_load(text),
                }
            )
    return manifests


def test_it_finds_every_manifest_of_the_guide() -> None:
    kinds = sorted(m["kind"] for m in guide_manifests())
    assert kinds == ["DeviceClass", "DeviceTaintRule", "Pod", "ResourceClaim", "ResourceClaimTemplate"]


@pytest.mark.parametrize("manifest", guide_manifests(), ids=lambda m: f"{m['kind']}/{m['metadata']['name']}")
def test_it_accepts_every_manifest_of_the_guide(manifest: dict[str, Any]) -> None:
    kind = KINDS[(manifest["apiVersion"], manifest["kind"])]
    causes, warnings = validate(kind, manifest, None)
    assert causes == []
    assert warnings == []
