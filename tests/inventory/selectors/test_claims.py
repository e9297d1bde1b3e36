"""Claims: which claim request and pods hold a device, shares, admin access, device status (dra-api.md §8.1)."""

from __future__ import annotations

import pytest

from inventory.models import Claim, Device
from inventory.selectors.claims import claim_detail
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def test_it_shows_which_claim_request_and_pods_hold_a_device() -> None:
    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")])),
        (
            "resourceclaims",
            f.claim(
                "train",
                namespace="ml",
                results=[f.result("gpu-0", request="gpu/big")],
                reserved_for=[{"resource": "pods", "name": "trainer-0", "uid": "pod-uid-1"}],
            ),
        ),
    )

    allocation = f.device("gpu-0").allocations[0]

    assert (
        allocation["namespace"],
        allocation["claim"],
        allocation["request"],
        allocation["subrequest"],
    ) == ("ml", "train", "gpu", "big")
    assert allocation["pods"] == [{"namespace": "ml", "name": "trainer-0", "uid": "pod-uid-1"}]
    assert f.device("gpu-0").allocation_state == "allocated"
    assert f.device("gpu-1").allocation_state == "free"
    assert Claim.objects.get(name="train").state == "reserved"


def test_it_frees_the_device_when_the_claim_is_deallocated_or_deleted() -> None:
    held = f.claim("c", results=[f.result("gpu-0")])
    f.write(("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])), ("resourceclaims", held))

    f.delete("resourceclaims", held)

    assert f.device("gpu-0").allocation_state == "free"
    assert f.device("gpu-0").allocations == []
    assert not Claim.objects.exists()


def test_it_shows_shared_devices_with_share_ids_and_consumed_capacity() -> None:
    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0", allowMultipleAllocations=True)])),
        (
            "resourceclaims",
            f.claim("a", results=[f.result("gpu-0", shareID="u-1", consumedCapacity={"memory": "10Gi"})]),
        ),
        (
            "resourceclaims",
            f.claim("b", results=[f.result("gpu-0", shareID="u-2", consumedCapacity={"memory": "20Gi"})]),
        ),
    )

    d = f.device("gpu-0")

    assert d.allocation_state == "shared"
    assert sorted((a["claim"], a["shareID"], a["consumedCapacity"]["memory"]) for a in d.allocations) == [
        ("a", "u-1", "10Gi"),
        ("b", "u-2", "20Gi"),
    ]


def test_it_marks_admin_access_allocations() -> None:
    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])),
        ("resourceclaims", f.claim("monitor", results=[f.result("gpu-0", adminAccess=True)])),
    )

    assert f.device("gpu-0").admin_access
    assert f.device("gpu-0").allocations[0]["adminAccess"] is True


def test_it_shows_per_device_status_from_the_claim() -> None:
    status = {
        "driver": "nic.example.com",
        "pool": "node-0",
        "device": "nic-0",
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "Configured",
                "message": "ok",
                "lastTransitionTime": "2026-11-01T10:00:00Z",
            }
        ],
        "networkData": {
            "interfaceName": "eth1",
            "hardwareAddress": "aa:bb:cc:dd:ee:ff",
            "ips": ["10.0.0.5/24"],
        },
        "data": {"vf": 3},
    }
    nic = f.resource_slice("n0", driver="nic.example.com", devices=[{"name": "nic-0"}])
    claim = f.claim(
        "net",
        results=[f.result("nic-0", request="nic", driver="nic.example.com")],
        device_status=[status],
        cls="nic.example.com",
    )
    f.write(("resourceslices", nic), ("resourceclaims", claim))

    detail = claim_detail(namespace="default", name="net")
    row = Device.objects.get(name="nic-0")

    view = detail.results[0]["status"]
    assert view["networkData"]["interfaceName"] == "eth1"
    assert view["networkData"]["ips"] == ["10.0.0.5/24"]
    assert view["conditions"][0]["type"] == "Ready"
    assert "vf: 3" in view["data"]
    assert row.statuses[0]["networkData"]["hardwareAddress"] == "aa:bb:cc:dd:ee:ff"


def test_it_caps_untrusted_strings_from_the_cluster(settings: object) -> None:
    status = {
        "driver": "gpu.example.com",
        "pool": "node-0",
        "device": "gpu-0",
        "conditions": [{"type": "Ready", "status": "False", "reason": "R", "message": "x" * 5000}],
    }
    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])),
        ("resourceclaims", f.claim("c", results=[f.result("gpu-0")], device_status=[status])),
    )

    view = claim_detail(namespace="default", name="c").results[0]["status"]

    assert len(view["conditions"][0]["message"]) == 1024  # DRADASH_MAX_STRING default


def test_it_recognises_extended_resource_claims_and_their_pod() -> None:
    f.write(
        (
            "resourceclaims",
            f.claim(
                "pod-a-extended-resources-x1",
                annotations={"resource.kubernetes.io/extended-resource-claim": "true"},
                owner_pod="pod-a",
            ),
        )
    )

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": f.meta("pod-a", namespace="default"),
        "spec": {},
        "status": {
            "extendedResourceClaimStatus": {
                "resourceClaimName": "pod-a-extended-resources-x1",
                "requestMappings": [
                    {
                        "containerName": "main",
                        "resourceName": "example.com/gpu",
                        "requestName": "container-0-request-0",
                    }
                ],
            }
        },
    }
    f.write(("pods", pod))

    claim = Claim.objects.get()
    detail = claim_detail(namespace="default", name="pod-a-extended-resources-x1")

    assert claim.extended_resource and claim.owner_pod == "pod-a"
    assert detail.owner_pod is not None and detail.owner_pod.name == "pod-a"
    assert detail.extended_resources == [
        {"containerName": "main", "resourceName": "example.com/gpu", "requestName": "container-0-request-0"}
    ]
