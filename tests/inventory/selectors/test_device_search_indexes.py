"""The device substring search has its own indexes, and the mirror's pool lookups do not end up in them.

PostgreSQL's trigram index on a bare column also answers `pool IN (…)`, and its planner took it for the
mirror's lookups of a hundred pools at a time (about a second each at 10,000 devices); the indexes are on
`lower(column)` instead, which only the search writes.
"""

from __future__ import annotations

import pytest
from django.db import connection

from inventory.filters import DeviceFilterSet
from inventory.mirror.derive.common import pools_q
from inventory.models import Device

pytestmark = pytest.mark.django_db

POOLS = 1000  # 10,000 devices: the size at which the planner took the trigram index


def _make(pools: int) -> None:
    Device.objects.bulk_create(
        Device(driver=driver, pool=f"node-{i:04d}", name=f"{kind}-{j}", node_name=f"node-{i:04d}")
        for i in range(pools)
        for driver, kind, count in (("gpu.example.com", "gpu", 8), ("nic.example.com", "nic", 2))
        for j in range(count)
    )
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE inventory_device")


@pytest.fixture
def devices() -> None:
    _make(POOLS)


def _plan(sql: str, params: tuple[object, ...], *settings: str) -> str:
    with connection.cursor() as cursor:
        for setting in settings:
            cursor.execute(f"SET LOCAL {setting}")
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def _postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("query plans of PostgreSQL's indexes")


def test_the_mirrors_pool_lookup_reads_the_btree_not_a_trigram_index(devices: None) -> None:
    _postgresql()
    keys = [f"nic.example.com/node-{i:04d}" for i in range(100)]
    sql, params = Device.objects.filter(pools_q(keys)).values_list("pk").query.sql_with_params()
    plan = _plan(sql, params, "enable_seqscan = off")
    assert "trgm" not in plan, plan
    assert "device_driver_pool_name_uniq" in plan, plan


def test_the_substring_search_can_use_its_trigram_indexes(devices: None) -> None:
    _postgresql()
    qs = DeviceFilterSet({"q": "ode-012"}, queryset=Device.objects.all()).qs
    sql, params = qs.order_by().values_list("pk").query.sql_with_params()
    plan = _plan(sql, params, "enable_seqscan = off")
    for column in ("name", "pool", "node_name"):
        assert f"device_{column}_lower_trgm" in plan, plan


def _found(search: str) -> set[str]:
    qs = DeviceFilterSet({"q": search}, queryset=Device.objects.all()).qs
    return {f"{pool}/{name}" for pool, name in qs.values_list("pool", "name")}


def test_the_search_ignores_case_and_takes_wildcards_literally() -> None:
    _make(200)
    assert _found("NODE-0199") == {
        f"node-0199/{k}"
        for k in ("gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5", "gpu-6", "gpu-7", "nic-0", "nic-1")
    }
    assert _found("nic-1") == {f"node-{i:04d}/nic-1" for i in range(200)}
    assert _found("%") == set()
    assert _found("node_0001") == set()
