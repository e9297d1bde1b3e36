"""Pools: the highest generation, completeness, re-lists, shared counters (dra-api.md §7.2)."""

from __future__ import annotations

import pytest

from inventory.models import Claim, Device, Pool
from inventory.selectors.devices import device_detail
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def test_it_uses_only_the_highest_pool_generation() -> None:
    f.write(
        ("resourceslices", f.resource_slice("old", generation=1, devices=[f.gpu("gpu-old")])),
        ("resourceslices", f.resource_slice("new", generation=2, devices=[f.gpu("gpu-new")])),
    )

    assert list(Device.objects.values_list("name", flat=True)) == ["gpu-new"]
    assert Pool.objects.get().generation == 2


def test_it_flags_an_incomplete_pool_instead_of_showing_it_silently_half() -> None:
    f.write(("resourceslices", f.resource_slice("part-1", count=2, devices=[f.gpu("gpu-0")])))

    pool = Pool.objects.get()

    assert not pool.complete
    assert pool.problems == ["incomplete: 1 of 2 slices at generation 1"]
    assert not f.device("gpu-0").pool_complete


def test_it_completes_the_pool_when_the_missing_slice_arrives() -> None:
    f.write(("resourceslices", f.resource_slice("part-1", count=2, devices=[f.gpu("gpu-0")])))
    f.write(("resourceslices", f.resource_slice("part-2", count=2, devices=[f.gpu("gpu-1")])))

    assert Pool.objects.get().complete
    assert Device.objects.filter(pool_complete=True).count() == 2


def test_it_sees_a_slice_deleted_and_recreated_under_the_same_name_when_relisting() -> None:
    first = f.resource_slice("s0", devices=[f.gpu("gpu-0")])
    f.replace("resourceslices", [first])
    again = f.resource_slice("s0", devices=[f.gpu("gpu-9")])  # same name, new uid

    f.replace("resourceslices", [again], rv="200")

    assert list(Device.objects.values_list("slice_uid", "name")) == [(again["metadata"]["uid"], "gpu-9")]


def test_it_shows_what_is_left_of_shared_counters() -> None:
    f.partitionable_pool()
    f.write(("resourceclaims", f.claim("mig", results=[f.result("gpu-0-mig-0")])))

    detail = device_detail(device=f.device("gpu-0-mig-1"))

    assert detail.counters_left == {"gpu-0-slices": {"memory": "20Gi"}}


def test_it_writes_large_batches_the_same_way_as_small_ones() -> None:
    # 300 rows take the bulk path (COPY on PostgreSQL); the result must not differ from small batches.
    f.write(("resourceslices", f.resource_slice("big", devices=[f.gpu(f"gpu-{i:03d}") for i in range(300)])))
    f.write(
        *[("resourceclaims", f.claim(f"c-{i:03d}", results=[f.result(f"gpu-{i:03d}")])) for i in range(250)]
    )

    assert Device.objects.count() == 300
    assert Device.objects.filter(allocation_state="allocated").count() == 250
    assert f.device("gpu-249").claim_name == "c-249" and f.device("gpu-250").allocation_state == "free"
    assert Claim.objects.filter(state="allocated").count() == 250
