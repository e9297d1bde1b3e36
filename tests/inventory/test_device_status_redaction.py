"""The data a driver reports per allocated device (a claim's `status.devices[].data`) is as opaque as a
claim's config parameters: a credential-named field in it is shown to admins only, on every page and
API route that shows it — the claim, pod and device pages, the claim and device APIs, the YAML view —
while its other fields stay readable (it reached viewers whole)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from inventory.models import Claim, KubeObject
from inventory.redaction import REDACTED
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db

TOKEN = "status-tok-0123456789"
DRIVER = "gpu.example.com"


@pytest.fixture
def mirror() -> None:
    status = [
        {
            "driver": DRIVER,
            "pool": "node-0",
            "device": "gpu-0",
            "conditions": [{"type": "Ready", "status": "True", "reason": "Prepared", "message": "ok"}],
            "data": {"endpoint": "grpc://10.0.0.9", "sessionToken": TOKEN, "mig": {"password": TOKEN}},
        }
    ]
    claim = f.claim(
        "c1",
        namespace="ml",
        results=[f.result("gpu-0")],
        reserved_for=[{"resource": "pods", "name": "p-0", "uid": "uid-p-0"}],
        device_status=status,
    )
    pod = f.pod("p-0", claim="c1", namespace="ml")
    f.write(
        ("deviceclasses", f.device_class(DRIVER)),
        ("resourceslices", f.resource_slice("s", devices=[f.gpu("gpu-0")])),
        ("resourceclaims", claim),
        ("pods", pod),
    )


def client_of(group: str) -> Client:
    user = User.objects.create_user(group)
    user.groups.add(Group.objects.get_or_create(name=group)[0])
    client = Client()
    client.force_login(user)
    return client


def shown(client: Client) -> dict[str, str]:
    claim_obj = KubeObject.objects.get(kind="resourceclaims")
    paths = {
        "claim page": "/claims/ml/c1/",
        "pod page": "/pods/ml/p-0/",
        "device page": f"/devices/{DRIVER}/node-0/gpu-0/",
        "claim api": f"/api/claims/{Claim.objects.get().pk}/",
        "devices api": "/api/devices/",
        "device api": f"/api/devices/{DRIVER}/node-0/gpu-0/",
        "object api": f"/api/objects/{claim_obj.uid}/",
        "yaml page": f"/objects/resourceclaims/{claim_obj.uid}/yaml/",
        "yaml json": f"/objects/resourceclaims/{claim_obj.uid}/yaml/?format=json",
    }
    out = {}
    for label, path in paths.items():
        response = client.get(path)
        assert response.status_code == 200, (label, response.status_code)
        out[label] = response.content.decode()
    return out


@pytest.mark.parametrize("role", ["viewer", "operator"])
def test_a_viewer_never_sees_a_credential_in_a_drivers_device_status_data(mirror: None, role: str) -> None:
    for label, text in shown(client_of(role)).items():
        assert TOKEN not in text, label
        assert "grpc://10.0.0.9" in text, label  # the rest of the data stays readable

    api = client_of("viewer-api")
    data = api.get("/api/devices/").json()["results"][0]["statuses"][0]["data"]
    assert data == {"endpoint": "grpc://10.0.0.9", "sessionToken": REDACTED, "mig": {"password": REDACTED}}
    raw = api.get(f"/api/objects/{KubeObject.objects.get(kind='resourceclaims').uid}/").json()["raw"]
    assert raw["status"]["devices"][0]["data"]["sessionToken"] == REDACTED


def test_an_admin_sees_the_drivers_device_status_data_whole(mirror: None) -> None:
    for label, text in shown(client_of("admin")).items():
        assert TOKEN in text, label
