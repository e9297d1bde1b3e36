"""Views for the 1.37 betas and alphas (issue 13, item 4), on simcluster's `features` topology and its
alpha samples, scheduled by simcluster with the features on and mirrored: device metadata (downward API),
node allocatable requests, optional node operations, compatibility groups, fractional capacity ranges and
list attributes on the claim, device, pod and node views; workload claims reserved for a PodGroup."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.template.loader import render_to_string
from django.test import Client

from inventory.kube import MIRRORED_KINDS
from inventory.selectors.features import node_allocatable, pod_device_metadata
from simcluster.topology import TOPOLOGY_DIR
from tests.inventory.factories import claim, meta, write
from tests.simcluster.sim_helpers import running, settle
from tests.simcluster.test_topology_features import ALL_ON

SAMPLES = Path(TOPOLOGY_DIR, "samples", "alpha-features.yaml")
PLURALS = {
    "ResourceSlice": "resourceslices",
    "DeviceClass": "deviceclasses",
    "ResourceClaim": "resourceclaims",
}
NS = "features"


def _pod(name: str, claim_name: str, containers: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "resourceClaims": [{"name": "dev", "resourceClaimName": claim_name}],
            "containers": [
                {"name": f"c{i}", "image": "x", "resources": {"claims": [{"name": "dev"}]}}
                for i in range(containers)
            ],
        },
    }


@pytest.fixture(scope="module")
def world() -> Iterator[dict[str, list[dict[str, Any]]]]:
    with running("features", features=ALL_ON | {"WorkloadResourceClaims"}) as (cluster, _, _):
        for doc in yaml.safe_load_all(SAMPLES.read_text()):
            if doc:
                cluster.store.create(PLURALS[doc["kind"]], doc)
        for name, claim_name, containers in [
            ("cores", "pinned-cores", 1),
            ("host-mem", "gpu-with-host-memory", 2),
            ("licensed", "license-seat", 1),
            ("queues", "quarter-queue", 1),
            ("parts", "two-mig-halves", 1),
        ]:
            cluster.store.create("pods", _pod(name, claim_name, containers))
        # workload claims: one GPU claim shared by the pods of a PodGroup
        gpu = {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}
        cluster.store.create(
            "resourceclaims",
            {
                "kind": "ResourceClaim",
                "metadata": {"name": "group-gpu", "namespace": NS},
                "spec": {"devices": {"requests": [gpu]}},
            },
        )
        cluster.store.create(
            "podgroups",
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": "trainers", "namespace": NS},
                "spec": {
                    "schedulingPolicy": {"basic": {}},
                    "resourceClaims": [{"name": "dev", "resourceClaimName": "group-gpu"}],
                },
            },
        )
        for i in range(2):
            member = _pod(f"member-{i}", "group-gpu")
            member["spec"]["schedulingGroup"] = {"podGroupName": "trainers"}
            cluster.store.create("pods", member)
        settle(cluster)
        yield {kind: cluster.store.list(kind) for kind in MIRRORED_KINDS}


@pytest.fixture
def mirrored_world(db: Any, world: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    write(*((kind, obj) for kind, objs in world.items() for obj in objs))
    return world


@pytest.fixture
def client(db: Any) -> Client:
    c = Client()
    c.force_login(User.objects.create_user("fv-viewer"))
    return c


def _pod_of(world: dict[str, list[dict[str, Any]]], name: str) -> dict[str, Any]:
    return next(p for p in world["pods"] if p["metadata"]["name"] == name)


def test_simcluster_schedules_the_samples_and_writes_node_allocatable_statuses(
    mirrored_world: dict[str, list[dict[str, Any]]],
) -> None:
    for name in ("cores", "host-mem", "licensed", "queues", "parts"):
        assert _pod_of(mirrored_world, name)["status"]["phase"] == "Running", name
    cores = _pod_of(mirrored_world, "cores")["status"]["nodeAllocatableResourceClaimStatuses"]
    assert cores == [
        {
            "resourceClaimName": "pinned-cores",
            "containers": ["c0"],
            "mapping": [{"name": "cpu", "quantity": "8"}],
        }
    ]


def test_the_node_partial_shows_dra_cpu_and_memory_against_allocatable(
    mirrored_world: dict[str, list[dict[str, Any]]],
) -> None:
    na = node_allocatable(node="feat-0")
    rows = {r.resource: r for r in na.rows}
    assert rows["cpu"].dra == "8"  # 4 cores × 2
    assert rows["memory"].dra == "3Gi"  # 2Gi per pod + 2 × 512Mi per container
    assert {p.name for p in na.pods} == {"cores", "host-mem"}
    assert all(p.source == "status" for p in na.pods)
    html = render_to_string("inventory/partials/node_allocatable.html", {"na": na})
    assert 'data-resource="cpu"' in html and "DRANodeAllocatableResources" in html
    assert "style=" not in html and "<script" not in html


def test_the_claim_page_shows_device_metadata_node_costs_and_skipped_node_operations(
    mirrored_world: Any, client: Client
) -> None:
    html = client.get(f"/claims/{NS}/license-seat/").content.decode()
    assert 'id="claim-skip-node-operations"' in html and "<code>*</code>" in html
    assert (
        "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/license-seat/seat/license.example.com-metadata.json"
        in html
    )

    html = client.get(f"/claims/{NS}/gpu-with-host-memory/").content.decode()
    assert 'id="claim-node-allocatable"' in html
    assert "perPod 2Gi" in html and "perContainer 512Mi" in html

    html = client.get(f"/claims/{NS}/pinned-cores/").content.decode()
    assert "cpu=8" in html


def test_the_pod_partial_lists_each_claims_device_metadata(mirrored_world: Any) -> None:
    devices = pod_device_metadata(namespace=NS, name="queues")
    assert [d["claim"] for d in devices] == ["quarter-queue"]
    (device,) = devices[0]["devices"]
    assert device["device"] == "vnic-0" and device["path"].endswith(
        "/quarter-queue/queue/vnic.example.com-metadata.json"
    )
    html = render_to_string("inventory/partials/pod_device_metadata.html", {"pod_devices": devices})
    assert 'data-device="vnic.example.com/feat-0/vnic-0"' in html


def test_the_device_page_shows_fractional_ranges_compatibility_groups_and_list_attributes(
    mirrored_world: Any, client: Client
) -> None:
    html = client.get("/devices/vnic.example.com/feat-0/vnic-0/").content.decode()
    assert 'data-capacity="queues"' in html and "fractional" in html
    assert "300m" in html  # consumed by quarter-queue (0.25 rounded up to the 0.1 step)

    html = client.get("/devices/part.example.com/feat-0/gpu-0-mig-0/").content.decode()
    assert 'id="device-compatibility"' in html
    assert 'data-group="mig"' in html and 'data-group="vgpu"' in html

    html = client.get("/classes/").content.decode()
    assert 'data-class-compat="part.example.com"' in html
    assert 'data-group="mig"' in html and 'data-group="vgpu"' in html

    nics = [d for d in mirrored_world["resourceslices"] if d["spec"]["driver"] == "nic.example.com"]
    listed = next(
        (s["spec"]["pool"]["name"], d["name"], name, attr["strings"])
        for s in nics
        for d in s["spec"]["devices"]
        for name, attr in (d.get("attributes") or {}).items()
        if "strings" in attr and len(attr["strings"]) > 1
    )
    pool, device, name, values = listed
    html = client.get(f"/devices/nic.example.com/{pool}/{device}/").content.decode()
    assert 'id="device-list-attributes"' in html and 'data-list="true"' in html
    # the Devices filter finds the device by any one element of the list
    for value in values:
        page = client.get("/devices/data/", {"attribute": f"{name}={value}"})
        assert device in page.content.decode(), value


def test_simcluster_reserves_the_group_claim_and_the_claim_page_shows_the_group(
    mirrored_world: Any, client: Client
) -> None:
    html = client.get(f"/claims/{NS}/group-gpu/").content.decode()
    assert 'id="claim-workload"' in html and "<bdi>trainers</bdi>" in html
    assert 'data-pod="member-0"' in html and 'data-pod="member-1"' in html
    assert (
        'podgroups/<bdi class="k8s word">trainers</bdi>' in html
    )  # reservedFor names the group, not each pod


def test_a_claim_reserved_for_a_pod_group_shows_the_group_and_its_pods(db: Any, client: Client) -> None:
    shared = claim(
        "shared-gpu",
        namespace="ml",
        reserved_for=[
            {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "trainers", "uid": "g1"}
        ],
    )
    pods = [
        {
            "metadata": meta(f"worker-{i}", namespace="ml"),
            "spec": {"schedulingGroup": {"podGroupName": "trainers"}, "nodeName": "node-0", "containers": []},
            "status": {"phase": "Running"},
        }
        for i in range(2)
    ]
    other = {"metadata": meta("loner", namespace="ml"), "spec": {"containers": []}, "status": {}}
    write(("resourceclaims", shared), *(("pods", p) for p in [*pods, other]))
    html = client.get("/claims/ml/shared-gpu/").content.decode()
    assert 'id="claim-workload"' in html and "DRAWorkloadResourceClaims" in html
    assert 'data-pod="worker-0"' in html and 'data-pod="worker-1"' in html and "loner" not in html
