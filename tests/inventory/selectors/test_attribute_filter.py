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
