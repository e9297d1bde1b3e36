"""The attribute filter matches the value exactly: case counts, and wildcard characters are literal."""

from __future__ import annotations

import pytest

from inventory.filters import DeviceFilterSet
from inventory.models import Device
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def _names(attribute: str) -> list[str]:
    qs = DeviceFilterSet({"attribute": attribute}, queryset=Device.objects.all()).qs
    return sorted(qs.values_list("name", flat=True))


def test_it_matches_attribute_values_exactly() -> None:
    f.write(
        (
            "resourceslices",
            f.resource_slice(
                "s0",
                devices=[
                    f.gpu("gpu-0", model="H100"),
                    f.gpu("gpu-1", model="h100"),
                    f.gpu("gpu-2", model="H*"),
                    f.gpu("gpu-3", model="H[1]00"),
                    f.gpu("gpu-4", model="H?00"),
                ],
            ),
        )
    )
    assert _names("model=H100") == ["gpu-0"]
    assert _names("model=h100") == ["gpu-1"]
    assert _names("model=H*") == ["gpu-2"]
    assert _names("model=H[1]00") == ["gpu-3"]
    assert _names("model=H?00") == ["gpu-4"]
    assert _names("model=H") == []


def test_the_api_counts_and_pages_what_the_filter_finds_as_attributes_change() -> None:
    from django.contrib.auth.models import User
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(User.objects.create_user("ava"))
    models = ["H100", "A100", "H100", "H100", "B200"]
    gpus = [f.gpu(f"gpu-{i}", model=m, numa=i % 2) for i, m in enumerate(models)]
    first = f.resource_slice("s0", devices=gpus)
    f.write(
        ("resourceslices", first),
        ("resourceslices", f.resource_slice("s1", pool="node-1", node="node-1", devices=[f.gpu("gpu-0")])),
    )

    def found(**params: str) -> tuple[int, list[str]]:
        body = api.get("/api/devices/", {"limit": "2", **params}).json()
        names = [d["name"] for d in body["results"]]
        while body["next"]:
            body = api.get(body["next"]).json()
            names += [d["name"] for d in body["results"]]
        return body["count"], names

    assert found(attribute="model=H100") == (4, ["gpu-0", "gpu-2", "gpu-3", "gpu-0"])
    assert found(attribute="model=H100", pool="node-0") == (3, ["gpu-0", "gpu-2", "gpu-3"])
    assert found(attribute="resource.kubernetes.io/numaNode=1") == (2, ["gpu-1", "gpu-3"])
    # The slice is republished with other models and one device fewer: the counts follow.
    second = f.resource_slice(
        "s0", generation=2, devices=[f.gpu("gpu-0", model="A100"), f.gpu("gpu-2", model="H100")]
    )
    second["metadata"]["uid"] = first["metadata"]["uid"]
    f.write(("resourceslices", second))
    assert found(attribute="model=H100") == (2, ["gpu-2", "gpu-0"])
    assert found(attribute="model=B200") == (0, [])
