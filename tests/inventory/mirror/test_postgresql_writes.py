"""PostgreSQL: a large (re-)list refreshes the planner statistics of the tables that kind fills, and only
those; the document columns are left out of the statistics (nothing compares them whole); the mirror's
transactions, and only they, commit without waiting for the disk."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.mirror import writer
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's planner statistics")


def _slices(count: int) -> list[dict[str, object]]:
    """`count` one-node slices of two GPUs each."""
    return [
        f.resource_slice(
            f"s{i}", pool=f"node-{i}", node=f"node-{i}", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")]
        )
        for i in range(count)
    ]


def _tuples(table: str) -> float:
    with connection.cursor() as cursor:  # reltuples: set by ANALYZE, in this test's transaction
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
        return float(cursor.fetchone()[0])


def test_a_large_list_of_slices_analyzes_the_device_tables_and_not_the_claim_tables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(writer, "ANALYZE_AFTER", 3)
    claims_before = _tuples("inventory_claim")
    slices = _slices(3)
    f.replace("resourceslices", slices)
    assert _tuples("inventory_device") == 6
    assert _tuples("inventory_pool") == 3
    assert _tuples("inventory_kubeobject") == 3
    assert _tuples("inventory_claim") == claims_before


def test_a_small_list_leaves_the_statistics_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer, "ANALYZE_AFTER", 4)
    before = _tuples("inventory_device")
    f.replace("resourceslices", [f.resource_slice("s0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")])])
    assert _tuples("inventory_device") == before


def test_the_document_columns_gather_no_statistics() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, a.attname, a.attstattarget FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
            " WHERE (c.relname, a.attname) IN (('inventory_kubeobject', 'raw'), ('inventory_device', 'attributes'),"
            " ('inventory_device', 'allocations'), ('inventory_device', 'pool'), ('inventory_kubeobject', 'uid'),"
            " ('inventory_device', 'classes'), ('inventory_device', 'blocked_reason'), ('inventory_device', 'blocked'))"
        )
        targets = {f"{table}.{column}": target for table, column, target in cursor.fetchall()}
    assert targets == {
        "inventory_kubeobject.raw": 0,
        "inventory_device.attributes": 0,
        "inventory_device.allocations": 0,
        "inventory_device.pool": -1,
        "inventory_kubeobject.uid": -1,
        "inventory_device.classes": 0,
        "inventory_device.blocked_reason": 0,
        "inventory_device.blocked": -1,  # pages filter on it
    }


def test_the_mirrors_transactions_and_only_they_commit_without_waiting_for_the_disk() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"  # the web's writes (audit, maintenance) stay durable
    with CaptureQueriesContext(connection) as queries:
        f.write(("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])))
    assert any(q["sql"] == "SET LOCAL synchronous_commit = off" for q in queries.captured_queries)


def _last(table: str, what: str = "vacuum") -> object:
    """When `table` was last vacuumed (or analyzed), by hand — autovacuum's runs are in other columns."""
    assert what in ("vacuum", "analyze")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT last_{what} FROM pg_stat_user_tables WHERE relname = %s", [table])
        return cursor.fetchone()[0]


def _vacuumed(table: str) -> object:
    return _last(table)


@pytest.mark.django_db(transaction=True)
def test_a_large_list_outside_a_transaction_also_vacuums_what_it_filled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(writer, "ANALYZE_AFTER", 3)
    claims = _vacuumed("inventory_claim")
    devices = _vacuumed("inventory_device")
    slices = _slices(3)
    f.replace("resourceslices", slices)
    assert _vacuumed("inventory_device") not in (None, devices)
    assert _vacuumed("inventory_claim") == claims


@pytest.mark.django_db(transaction=True)
def test_with_autovacuum_off_the_mirror_vacuums_a_table_full_of_dead_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from inventory.models import Device

    slices = _slices(10)
    f.replace("resourceslices", slices)
    batch = writer.BatchWriter()
    batch._autovacuum = False  # as on the machines here; a server with autovacuum on is left to it
    for n in range(10):  # 20 devices rewritten 10 times: 200 dead versions
        Device.objects.update(blocked_reason=f"r{n}")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
    before = _vacuumed("inventory_device")
    assert batch.vacuum_if_needed(now=1e9) == ["inventory_device"]
    assert _vacuumed("inventory_device") not in (None, before)
    assert batch.vacuum_if_needed(now=1e9 + 1) == [], "it looks again only after VACUUM_CHECK_SECONDS"
    batch._autovacuum = True
    for n in range(10):
        Device.objects.update(blocked_reason=f"s{n}")
    assert batch.vacuum_if_needed(now=2e9) == []


def _analyzed(table: str) -> object:
    return _last(table, "analyze")


@pytest.mark.django_db(transaction=True)
def test_a_paged_lists_statistics_are_gathered_before_a_list_that_reads_them_and_else_once_idle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A list that reads the tables (claims: every derived kind) needs their statistics first; the pods'
    list looks its rows up by unique keys, so the tables wait for the VACUUM once the writer is idle, like
    the vacuum itself (run between kinds, it held back the sync)."""
    from inventory.mirror.reflector import INITIAL

    monkeypatch.setattr(writer, "ANALYZE_AFTER", 3)
    batch = writer.BatchWriter()
    vacuumed, analyzed = _vacuumed("inventory_device"), _analyzed("inventory_device")
    objects = _analyzed("inventory_kubeobject")
    batch.begin_list("resourceslices", reason=INITIAL)
    batch.write_page("resourceslices", _slices(3))
    batch.finish_list("resourceslices", "100")
    assert _analyzed("inventory_device") == analyzed
    assert batch.has_vacuum_listed

    batch.begin_list("pods", reason=INITIAL)
    assert _analyzed("inventory_kubeobject") == objects, "the pods' list looks objects up by uid"
    assert _analyzed("inventory_device") == analyzed
    batch.write_page("pods", [])
    batch.finish_list("pods", "101")

    batch.begin_list("resourceclaims", reason=INITIAL)
    devices_analyzed = _analyzed("inventory_device")
    assert devices_analyzed not in (None, analyzed), "the claims' list reads the device tables"
    assert _analyzed("inventory_kubeobject") not in (None, objects)
    assert _vacuumed("inventory_device") == vacuumed
    batch.write_page("resourceclaims", [])
    batch.finish_list("resourceclaims", "102")

    assert "inventory_device" in batch.vacuum_listed()
    assert _vacuumed("inventory_device") not in (None, vacuumed)
    assert _analyzed("inventory_device") == devices_analyzed, "nothing listed since: no second ANALYZE"
    assert not batch.has_vacuum_listed
    assert batch.vacuum_listed() == []


@pytest.mark.django_db(transaction=True)
def test_the_idle_vacuum_gathers_the_statistics_no_list_needed_first(monkeypatch: pytest.MonkeyPatch) -> None:
    from inventory.mirror.reflector import INITIAL

    monkeypatch.setattr(writer, "ANALYZE_AFTER", 3)
    batch = writer.BatchWriter()
    analyzed = _analyzed("inventory_device")
    batch.begin_list("resourceslices", reason=INITIAL)
    batch.write_page("resourceslices", _slices(3))
    batch.finish_list("resourceslices", "100")
    assert _analyzed("inventory_device") == analyzed
    assert "inventory_device" in batch.vacuum_listed()
    assert _analyzed("inventory_device") not in (None, analyzed)
    assert _tuples("inventory_device") == 6


@pytest.mark.django_db(transaction=True)
def test_the_running_mirror_vacuums_what_its_lists_filled_once_it_is_idle(
    simcluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inventory.kube import connect
    from inventory.mirror.runner import Mirror, wait_for_sync
    from tests.inventory.mirror.helpers import wait_until

    monkeypatch.setattr(writer, "ANALYZE_AFTER", 3)
    vacuumed = _vacuumed("inventory_device")
    handle = Mirror(connect(str(simcluster.kubeconfig_path))).start()
    try:
        assert wait_for_sync(handle, timeout=30)
        wait_until(
            lambda: _vacuumed("inventory_device") not in (None, vacuumed),
            timeout=15,
            what="the device table vacuumed after the sync",
        )
    finally:
        handle.stop()


@pytest.mark.django_db(transaction=True)
def test_a_writer_never_idle_vacuums_what_the_lists_filled_with_its_periodic_look_once_no_list_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from inventory.mirror.reflector import INITIAL

    monkeypatch.setattr(writer, "ANALYZE_AFTER", 3)
    batch = writer.BatchWriter()
    batch._autovacuum = True  # only the listed tables are its business then
    batch.begin_list("resourceslices", reason=INITIAL)
    batch.write_page("resourceslices", _slices(3))
    batch.finish_list("resourceslices", "100")
    batch.begin_list("resourceclaims", reason=INITIAL)  # another kind still listing
    assert batch.vacuum_if_needed(now=1e9) == []
    assert batch.has_vacuum_listed
    batch.write_page("resourceclaims", [])
    batch.finish_list("resourceclaims", "100")
    vacuumed = _vacuumed("inventory_device")
    assert "inventory_device" in batch.vacuum_if_needed(now=2e9)
    assert _vacuumed("inventory_device") not in (None, vacuumed)
    assert not batch.has_vacuum_listed


@pytest.mark.parametrize("count", [2, 150, 450])
def test_a_chunk_of_availability_rows_is_written_whole_in_one_round_trip_or_by_copy(count: int) -> None:
    from types import SimpleNamespace

    from inventory.mirror import sql
    from inventory.mirror.derive.availability import CLASS_AVAILABILITY_FIELDS
    from inventory.models import ClassAvailability

    rows = [
        SimpleNamespace(
            driver="gpu.example.com",
            pool=f"node-{i}",
            device_class="gpu",
            free=i % 9,
            headroom=i % 7,
            capped=i % 2 == 0,
            error="" if i % 3 else f"it's 'quoted' {i}",
        )  # fmt: skip
        for i in range(count)
    ]
    with CaptureQueriesContext(connection) as queries:
        assert sql.insert(ClassAvailability, rows, fields=CLASS_AVAILABILITY_FIELDS) == count
    written = list(ClassAvailability.objects.order_by("id").values_list(*CLASS_AVAILABILITY_FIELDS))
    assert written == [tuple(getattr(r, name) for name in CLASS_AVAILABILITY_FIELDS) for r in rows]
    inserts = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("INSERT")]
    assert len(inserts) == 1  # not one statement per row
