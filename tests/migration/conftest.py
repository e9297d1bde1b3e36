from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client

FIXTURES = Path(__file__).parent / "fixtures"


def seed_inventory() -> None:
    """Two GPU nodes and a NIC, mirrored the way the mirror writes them (classes evaluated by CEL)."""
    from tests.inventory.factories import device_class, gpu, resource_slice, write

    write(
        ("deviceclasses", device_class("gpu.example.com")),
        ("deviceclasses", device_class("nic.example.com")),
        (
            "resourceslices",
            resource_slice("n1-gpu", pool="node-1", node="node-1", devices=[gpu("gpu-0"), gpu("gpu-1")]),
        ),
        (
            "resourceslices",
            resource_slice(
                "n2-gpu", pool="node-2", node="node-2", devices=[gpu("gpu-0"), gpu("gpu-1", model="A100")]
            ),
        ),
        (
            "resourceslices",
            resource_slice(
                "n2-nic",
                driver="nic.example.com",
                pool="node-2",
                node="node-2",
                devices=[{"name": "nic-0", "attributes": {"model": {"string": "CX7"}}}],
            ),
        ),
    )


@pytest.fixture
def inventory(db: Any) -> None:
    seed_inventory()


@pytest.fixture
def viewer_client(db: Any) -> Client:
    """A browser signed in as a viewer: the upgrade page and its API ask no more."""
    client = Client()
    client.force_login(user_in("viewer", "victor"))
    return client


from tests.maintenance.conftest import cluster_settings, mirrored, user_in  # noqa: E402, F401  (fixtures)
