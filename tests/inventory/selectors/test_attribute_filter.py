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


def test_a_short_name_means_the_device_drivers_own_domain_and_a_qualified_name_means_itself() -> None:
    own_short = f.gpu("gpu-short")  # "model" in a gpu.example.com slice: gpu.example.com/model
    own_qualified = f.gpu("gpu-qualified")
    own_qualified["attributes"] = {"gpu.example.com/model": {"string": "H100"}}
    foreign = {"name": "nic-0", "attributes": {"gpu.example.com/model": {"string": "H100"}}}
    listed = {"name": "nic-1", "attributes": {"models": {"strings": ["H100", "A100"]}}}
    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[own_short, own_qualified])),
        ("resourceslices", f.resource_slice("s1", driver="nic.example.com", devices=[foreign, listed])),
    )
    # The NIC driver's device carries gpu.example.com's attribute: the qualified name finds it, the
    # short name (gpu.example.com's own domain only on gpu.example.com's devices) does not.
    assert _names("model=H100") == ["gpu-qualified", "gpu-short"]
    assert _names("gpu.example.com/model=H100") == ["gpu-qualified", "gpu-short", "nic-0"]
    # A list attribute's element, by its short and its qualified name.
    assert _names("models=A100") == ["nic-1"]
    assert _names("nic.example.com/models=A100") == ["nic-1"]
    assert _names("gpu.example.com/models=A100") == []
    # And the API's count (read from the index alone) agrees with the rows.
    for attribute in ("model=H100", "gpu.example.com/model=H100", "models=H100"):
        filtered = DeviceFilterSet({"attribute": attribute}, queryset=Device.objects.all()).qs
        assert filtered.count_hint() == filtered.count()  # type: ignore[attr-defined]


def test_only_qualified_names_are_indexed_one_line_each() -> None:
    from inventory.models import DeviceAttribute

    f.write(("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0", numa=1)])))
    lines = set(DeviceAttribute.objects.values_list("line", "own"))
    assert lines == {
        ("gpu.example.com/model=H100", True),
        ("gpu.example.com/driverVersion=1.2.3", True),
        ("resource.kubernetes.io/numaNode=1", False),
    }
