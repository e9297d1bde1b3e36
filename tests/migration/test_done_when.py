"""Issue 13 item 2, "done when": v1.33-era manifests converted by `dra_upgrade` are accepted by a 1.37 API
server (real kubectl 1.37.1, `apply --dry-run=server`, against simcluster) and ask for the same devices."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from dra.allocator import DEFAULT_FEATURES, allocate
from dra.allocator.cel import default_engine, device_input_from_api
from dra.selection import rule_selects
from dra.upgrade import load_documents
from tests.kubectl import run_kubectl
from tests.migration.conftest import FIXTURES

pytestmark = [pytest.mark.kubectl, pytest.mark.django_db]

OLD_FILES = [
    "v1beta1-classes.yaml",
    "v1beta1-templates.yaml",
    "v1beta1-claims-firstavailable.yaml",
    "v1beta2-claims.yaml",
    "v1alpha3-taintrules.yaml",
    "v1beta1-slices.yaml",
]

# The same claims, converted by hand from the v1.33 docs' description of the shapes (not by the tool), with the
# defaults the API server fills in (allocationMode ExactCount, count 1).
BY_HAND: dict[str, dict[str, Any]] = {
    "two-gpus-one-nic": {
        "requests": [
            {
                "name": "gpus",
                "exactly": {
                    "deviceClassName": "h100.example.com",
                    "allocationMode": "ExactCount",
                    "count": 2,
                    "selectors": [
                        {"cel": {"expression": 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'}}
                    ],
                    "tolerations": [{"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"}],
                },
            },
            {"name": "nic", "exactly": {"deviceClassName": "cx7.example.com", "allocationMode": "ExactCount", "count": 1}},
        ],
        "constraints": [{"requests": ["gpus", "nic"], "matchAttribute": "resource.kubernetes.io/numaNode"}],
        "config": [
            {
                "requests": ["gpus"],
                "opaque": {
                    "driver": "gpu.example.com",
                    "parameters": {"apiVersion": "gpu.example.com/v1", "kind": "GpuConfig", "sharing": {"strategy": "Exclusive"}},
                },
            }
        ],
    },
    "all-nics": {"requests": [{"name": "nics", "exactly": {"deviceClassName": "cx7.example.com", "allocationMode": "All"}}]},
    "inference-gpu": {
        "requests": [
            {
                "name": "accel",
                "firstAvailable": [
                    {"name": "full", "deviceClassName": "h100.example.com", "allocationMode": "ExactCount", "count": 1},
                    {
                        "name": "mig-pair",
                        "deviceClassName": "mig.example.com",
                        "allocationMode": "ExactCount",
                        "count": 2,
                        "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].profile == "1g.5gb"'}}],
                    },
                ],
            },
            {"name": "nic", "exactly": {"deviceClassName": "cx7.example.com", "allocationMode": "ExactCount", "count": 1}},
        ]
    },
    "gpu-debug": {
        "requests": [
            {
                "name": "gpu",
                "exactly": {
                    "deviceClassName": "gpu.example.com",
                    "allocationMode": "ExactCount",
                    "count": 1,
                    "tolerations": [
                        {"key": "example.com/maintenance", "operator": "Equal", "value": "firmware-update",
                         "effect": "NoExecute", "tolerationSeconds": 600}
                    ],
                },
            }
        ]
    },
}  # fmt: skip


def kubectl_json(kubeconfig: Path, *args: str) -> Any:
    done = run_kubectl(kubeconfig, "get", *args, "-o", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["items"]


def mirror_from(kubeconfig: Path) -> tuple[list[Any], list[Any], list[Any]]:
    """The cluster's classes, slices and nodes, written into the inventory as the mirror writes them."""
    from tests.inventory.factories import write

    classes = kubectl_json(kubeconfig, "deviceclasses")
    slices = kubectl_json(kubeconfig, "resourceslices")
    write(*[("deviceclasses", c) for c in classes], *[("resourceslices", s) for s in slices])
    return classes, slices, kubectl_json(kubeconfig, "nodes")


def dra_upgrade(paths: list[Path]) -> str:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("dra_upgrade", *map(str, paths), stdout=out, stderr=err)
    assert exited.value.code == 1, err.getvalue()
    return out.getvalue()


def test_it_turns_v1_33_manifests_into_ones_a_1_37_server_accepts_asking_for_the_same_devices(
    simcluster: Any,
) -> None:
    kubeconfig = Path(simcluster.kubeconfig_path)
    cluster_classes, slices, nodes = mirror_from(kubeconfig)
    paths = [FIXTURES / name for name in OLD_FILES]
    old_text = "---\n".join(p.read_text() for p in paths)

    rejected = run_kubectl(
        kubeconfig, "apply", "--dry-run=server", "--validate=false", "-f", "-", input_text=old_text
    )
    assert rejected.returncode != 0  # a 1.37 server serves none of these versions for these kinds

    new_text = dra_upgrade(paths)
    new = [doc for doc in load_documents(new_text) if doc]
    accepted = run_kubectl(kubeconfig, "apply", "--dry-run=server", "-f", "-", input_text=new_text)
    assert accepted.returncode == 0, accepted.stderr
    created = {
        line.split(" ")[0]
        for line in accepted.stdout.splitlines()
        if line.endswith("created (server dry run)")
    }
    expected = {
        f"{doc['kind'].lower()}.resource.k8s.io/{doc['metadata']['name']}"
        for doc in new
        if doc["apiVersion"] == "resource.k8s.io/v1"
    }
    assert created == expected
    assert {doc["apiVersion"] for doc in new} == {"resource.k8s.io/v1"}

    # Same requests: the tool's claims are the hand-converted ones, and the allocator gives both the same devices.
    classes = cluster_classes + [doc for doc in new if doc["kind"] == "DeviceClass"]
    claims = {}
    for doc in new:
        if doc["kind"] == "ResourceClaim":
            claims[doc["metadata"]["name"]] = doc["spec"]["devices"]
        elif doc["kind"] == "ResourceClaimTemplate":
            claims[doc["metadata"]["name"]] = doc["spec"]["spec"]["devices"]
    assert claims == BY_HAND
    allocated = 0
    for name, devices in claims.items():
        for node in nodes:
            results = [
                allocate(
                    classes=classes,
                    slices=slices,
                    allocated_claims=[],
                    claims=[
                        {
                            "metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"},
                            "spec": {"devices": copy.deepcopy(spec)},
                        }
                    ],
                    node=node,
                    features=DEFAULT_FEATURES,
                    id_factory=lambda: "share",
                )
                for spec in (devices, BY_HAND[name])
            ]
            assert results[0] == results[1], (name, node["metadata"]["name"])
            allocated += results[0] is not None
    assert allocated >= len(claims)  # every claim fits somewhere: the equality above is not between two Nones

    # Same devices tainted: the compiled name-based rules select exactly what the 1.33 selector selected.
    old_rule = next(
        d
        for d in load_documents((FIXTURES / "v1alpha3-taintrules.yaml").read_text())
        if d["metadata"]["name"] == "node-2-firmware"
    )
    compiled = [
        d
        for d in new
        if d["kind"] == "DeviceTaintRule" and d["metadata"]["name"].startswith("node-2-firmware-")
    ]
    assert compiled
    assert devices_selected_by_1_33_semantics(old_rule, cluster_classes, slices) == {
        (s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"])
        for s in slices
        for d in s["spec"].get("devices") or []
        if any(rule_selects(r, s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"]) for r in compiled)
    }


def devices_selected_by_1_33_semantics(
    rule: Any, classes: list[Any], slices: list[Any]
) -> set[tuple[str, str, str]]:
    """A 1.33 DeviceTaintSelector, evaluated directly: every set field matches, the class's and the rule's CEL hold."""
    selector = rule["spec"]["deviceSelector"]
    engine = default_engine()
    (device_class,) = [c for c in classes if c["metadata"]["name"] == selector["deviceClassName"]]
    expressions = [s["cel"]["expression"] for s in device_class["spec"].get("selectors", [])]
    expressions += [s["cel"]["expression"] for s in selector.get("selectors", [])]
    compiled = [engine.compile(e) for e in expressions]
    picked = set()
    for s in slices:
        driver, pool = s["spec"]["driver"], s["spec"]["pool"]["name"]
        for device in s["spec"].get("devices") or []:
            if any(
                selector.get(k) not in (None, v)
                for k, v in (("driver", driver), ("pool", pool), ("device", device["name"]))
            ):
                continue
            data = device_input_from_api(driver, device)
            if all(c.matches(data) for c in compiled):
                picked.add((driver, pool, device["name"]))
    assert picked, "the fixture rule must select something in the tiny topology"
    return picked
