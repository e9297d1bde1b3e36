"""The Pod page (its claims, devices, node, owner, the taints it tolerates) and the Node page (devices per
NUMA node with counts, MIG partitions under their GPU, its pods), on simcluster's tiny world copied into
the mirror the way the mirror writes it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from inventory.kube import MIRRORED_KINDS
from inventory.models import Device
from tests.inventory import factories as f
from tests.inventory.pages_support import make_user
from tests.simcluster.sim_helpers import running, settle

pytestmark = pytest.mark.django_db
GPU = "gpu.example.com"
JSON = dict[str, Any]


def rule(name: str, selector: JSON, key: str, effect: str) -> JSON:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {"deviceSelector": selector, "taint": {"key": key, "value": "psu", "effect": effect}},
    }


def tolerant_claim_and_pod() -> tuple[JSON, JSON]:
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "tolerant", "namespace": "ml"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": GPU,
                            "tolerations": [
                                {
                                    "key": "example.com/maintenance",
                                    "operator": "Exists",
                                    "effect": "NoSchedule",
                                }
                            ],
                        },
                    }
                ]
            }
        },
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "tolerant-pod", "namespace": "ml"},
        "spec": {
            "containers": [{"name": "c", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "tolerant"}],
        },
    }
    return claim, pod


@pytest.fixture
def tiny() -> Iterator[Any]:
    """simcluster's tiny world with every GPU under a NoSchedule rule and a None rule (one pod tolerates
    the first), and a device without NUMA node on node-2; then mirrored."""
    with running("tiny") as (cluster, _controllers, _clock):
        cluster.store.create(
            "devicetaintrules", rule("gpus-psu", {"driver": GPU}, "example.com/maintenance", "NoSchedule")
        )
        cluster.store.create(
            "devicetaintrules", rule("gpus-note", {"driver": GPU}, "example.com/note", "None")
        )
        claim, pod = tolerant_claim_and_pod()
        cluster.store.create("resourceclaims", claim, namespace="ml")
        cluster.store.create("pods", pod, namespace="ml")
        cluster.store.create(
            "resourceslices",
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": "node-2-fpga"},
                "spec": {
                    "driver": "fpga.example.com",
                    "nodeName": "node-2",
                    "pool": {"name": "node-2", "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": "fpga-0"}],
                },
            },
        )
        settle(cluster)
        for kind in MIRRORED_KINDS:
            f.replace(kind, cluster.store.list(kind))
        yield cluster


@pytest.fixture
def client_in(client: Client) -> Client:
    client.force_login(make_user())
    return client


def trainer(cluster: Any) -> JSON:
    pods = [
        p for p in cluster.store.list("pods", namespace="ml") if p["metadata"]["name"].startswith("trainer-")
    ]
    running_pods = [p for p in pods if p["spec"].get("nodeName")]
    assert running_pods, "the tiny world runs two trainers"
    return running_pods[0]


def allocated_device(cluster: Any, namespace: str, claim: str) -> JSON:
    obj = cluster.store.get("resourceclaims", claim, namespace=namespace)
    (result,) = obj["status"]["allocation"]["devices"]["results"]
    return dict(result)


def test_the_pod_page_shows_node_owner_claims_and_their_devices(client_in: Client, tiny: Any) -> None:
    pod = trainer(tiny)
    name, node = pod["metadata"]["name"], pod["spec"]["nodeName"]
    generated = pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    result = allocated_device(tiny, "ml", generated)

    html = client_in.get(reverse("inventory:pod-detail", args=["ml", name])).content.decode()

    assert 'id="pod-phase">Running<' in html
    assert f'href="{reverse("inventory:node-detail", args=[node])}"' in html.split('id="pod-node"')[1]
    assert "ReplicaSet <bdi>trainer</bdi>" in html
    claims = html.split('id="pod-claims"')[1].split("</table>")[0]
    assert f'href="{reverse("inventory:claim-detail", args=["ml", generated])}"' in claims
    assert 'from template <bdi class="k8s word">single-gpu</bdi>' in claims
    device_href = f'href="/devices/{GPU}/{result["pool"]}/{result["device"]}/"'
    assert device_href in claims
    assert f'href="{reverse("inventory:object-yaml", args=["pods", pod["metadata"]["uid"]])}"' in html
    metadata = html.split('id="pod-device-metadata"')[1].split("</section>")[0]
    assert result["device"] in metadata, "the downward API metadata of the pod's device is shown"


def test_the_pod_page_says_which_device_taints_the_pod_tolerates(client_in: Client, tiny: Any) -> None:
    result = allocated_device(tiny, "ml", "tolerant")

    html = client_in.get(reverse("inventory:pod-detail", args=["ml", "tolerant-pod"])).content.decode()

    html = re.sub(r"</?bdi[^>]*>", "", html)  # the cluster's strings, each in its own <bdi>
    tolerated = html.split('id="pod-tolerated"')[1].split("</ul>")[0]
    assert "example.com/maintenance=psu:NoSchedule" in tolerated
    assert 'by toleration <span class="mono">example.com/maintenance:NoSchedule</span>' in tolerated
    assert f"/devices/{GPU}/{result['pool']}/{result['device']}/" in tolerated
    assert f'href="{reverse("inventory:taint-rule-detail", args=["gpus-psu"])}"' in tolerated
    untolerated = html.split('id="pod-untolerated"')[1].split("</ul>")[0]
    assert "example.com/note=psu:None" in untolerated and 'data-consequence="informational"' in untolerated
    assert "example.com/maintenance" not in untolerated


def test_a_trainer_does_not_tolerate_the_rule_and_keeps_its_device(client_in: Client, tiny: Any) -> None:
    name = trainer(tiny)["metadata"]["name"]
    html = client_in.get(reverse("inventory:pod-detail", args=["ml", name])).content.decode()
    untolerated = html.split('id="pod-untolerated"')[1].split("</ul>")[0]
    assert (
        'data-consequence="no new allocations"' in untolerated and "this pod keeps the device" in untolerated
    )
    assert "No taint of its devices is tolerated." in html


def test_the_pod_page_of_an_unknown_pod_is_a_404(client_in: Client, tiny: Any) -> None:
    assert client_in.get(reverse("inventory:pod-detail", args=["ml", "nope"])).status_code == 404


def test_the_device_page_links_back_to_its_pod(client_in: Client, tiny: Any) -> None:
    pod = trainer(tiny)
    result = allocated_device(tiny, "ml", pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"])
    html = client_in.get(
        reverse("inventory:device-detail", args=[GPU, result["pool"], result["device"]])
    ).content.decode()
    assert f'href="{reverse("inventory:pod-detail", args=["ml", pod["metadata"]["name"]])}"' in html


def test_the_node_page_nests_mig_partitions_under_their_gpu(client_in: Client, tiny: Any) -> None:
    html = client_in.get(reverse("inventory:node-detail", args=["node-2"])).content.decode()
    partitions = html.split('<ul class="partitions" data-parent="gpu-3">')[1].split("</ul>")[0]
    names = [d.name for d in Device.objects.filter(node_name="node-2", name__startswith="gpu-3-mig-")]
    assert len(names) == 12  # 7 × 1g + 3 × 2g + 2 × 3g
    for name in names:
        assert f'data-device="{GPU}/node-2/{name}"' in partitions
    assert '12 partitions of counter set <bdi class="k8s word">gpu-3-counters</bdi>' in html
    numa0 = html.split('data-numa="0"')[1].split("</section>")[0]
    top_level = numa0.replace(partitions, "")
    assert 'data-device="gpu.example.com/node-2/gpu-3"' in top_level
    assert "gpu-3-mig-1g-0" not in top_level  # only under its parent


def test_the_node_page_counts_per_numa_node_and_has_an_unknown_group(client_in: Client, tiny: Any) -> None:
    html = client_in.get(reverse("inventory:node-detail", args=["node-2"])).content.decode()
    groups = {g.split('"', 1)[0]: g.split("</section>")[0] for g in html.split('data-numa="')[1:]}
    assert list(groups) == ["0", "1", "unknown"]
    on_numa1 = Device.objects.filter(node_name="node-2", numa_node=1)
    allocated = sum(d.allocation_state != "free" for d in on_numa1)
    assert f'<span data-count="total">{on_numa1.count()} device' in groups["1"]
    assert f'<span data-count="allocated">{allocated} allocated</span>' in groups["1"]
    assert f'<span data-count="tainted">{on_numa1.count()} tainted</span>' in groups["1"]  # the GPU rules
    assert "fpga-0" in groups["unknown"] and "unknown NUMA node" in groups["unknown"]


def test_the_node_page_lists_its_pods_labels_and_allocatable(client_in: Client, tiny: Any) -> None:
    html = client_in.get(reverse("inventory:node-detail", args=["node-2"])).content.decode()
    pods = [p for p in tiny.store.list("pods") if p["spec"].get("nodeName") == "node-2"]
    assert pods, "the MIG job runs on node-2"
    table = html.split('id="node-pods"')[1].split("</table>")[0]
    for pod in pods:
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        assert f'href="{reverse("inventory:pod-detail", args=[ns, name])}"' in table
    assert "topology.kubernetes.io/zone" in html and "zone-b" in html
    assert '<bdi class="k8s word">cpu</bdi></dt>' in html and '<bdi class="k8s word">64</bdi></dd>' in html
    assert 'id="node-allocatable" data-node="node-2"' in html


def test_the_nodes_list_links_each_node_and_counts_pods(client_in: Client, tiny: Any) -> None:
    html = client_in.get(reverse("inventory:nodes")).content.decode()
    for node in ("node-0", "node-1", "node-2"):
        assert f'<tr data-node="{node}">' in html
        assert f'href="{reverse("inventory:node-detail", args=[node])}"' in html
    pods = sum(1 for p in tiny.store.list("pods") if p["spec"].get("nodeName") == "node-2")
    assert f'data-pods="{pods}"' in html.split('<tr data-node="node-2">')[1].split("</tr>")[0]


def test_the_nodes_list_says_how_old_each_node_is(client_in: Client, tiny: Any) -> None:
    html = client_in.get(reverse("inventory:nodes")).content.decode()
    assert ">Age</th>" in html
    node = next(n for n in tiny.store.list("nodes") if n["metadata"]["name"] == "node-1")
    row = html.split('<tr data-node="node-1">')[1].split("</tr>")[0]
    assert f'<time datetime="{node["metadata"]["creationTimestamp"]}"' in row.split("data-age>")[1]


def test_the_pod_page_shows_the_schedulers_extended_resource_claim(client_in: Client, tiny: Any) -> None:
    pod = tiny.store.get("pods", "legacy-gpu", namespace="default")
    claim = pod["status"]["extendedResourceClaimStatus"]["resourceClaimName"]
    result = allocated_device(tiny, "default", claim)

    html = client_in.get(reverse("inventory:pod-detail", args=["default", "legacy-gpu"])).content.decode()

    row = html.split(f'<tr data-claim="{claim}"')[1].split("</tr>")[0]
    assert "extended resources" in row
    assert f'href="{reverse("inventory:claim-detail", args=["default", claim])}"' in row
    assert f"/devices/{GPU}/{result['pool']}/{result['device']}/" in row


@pytest.mark.django_db
def test_a_pod_whose_devices_have_no_taints_is_told_so_in_one_line(client_in: Client) -> None:
    """It read "Tolerated: No taint of its devices is tolerated. Not tolerated: None.", as if its devices
    had taints it did not tolerate."""
    f.write(
        ("resourceslices", f.resource_slice("node-0-gpu", devices=[f.gpu("gpu-0")])),
        ("resourceclaims", f.claim("train-gpu", results=[f.result("gpu-0")])),
        ("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": f.meta("train", namespace="default"),
                  "spec": {"nodeName": "node-0", "containers": [{"name": "main"}],
                           "resourceClaims": [{"name": "gpu", "resourceClaimName": "train-gpu"}]},
                  "status": {"phase": "Running"}}),
    )  # fmt: skip
    html = client_in.get(reverse("inventory:pod-detail", args=["default", "train"])).content.decode()
    assert f"/devices/{GPU}/node-0/gpu-0/" in html.split('id="pod-claims"')[1]
    assert '<p id="pod-no-taints">Its devices have no taints.</p>' in html
    assert "No taint of its devices is tolerated." not in html
    assert 'id="pod-untolerated"' not in html
