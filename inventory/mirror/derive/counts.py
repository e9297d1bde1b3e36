"""The device counters (DeviceCount, NodeDeviceCount) recounted once for a page of device rows, on SQLite.

Migration `read_counters` keeps the counters with SQLite row triggers: two upserts per device row written,
about a third of what writing a device row costs (0.25 s of a 10,000-device list, measured). When the
mirror writes a pool's devices in bulk it pauses them (a DeviceCountPause row, which every one of those
triggers checks first) and recounts instead: the rows it may touch counted before, the rows they are
after, the difference added to the counters, all in its transaction — so no other connection ever sees
the pause or counters that disagree with the rows. PostgreSQL's triggers already count once per
statement (transition tables): nothing to do there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection

from inventory.mirror.derive.common import chunks
from inventory.models import FREE, DeviceCount

#: below this many device rows the triggers count as they go (a watch event's slice)
RECOUNT_MIN_ROWS = 64

#: the Device columns a DeviceCount row counts by: every column of that table but its key and its count
GROUP = [f.column for f in DeviceCount._meta.concrete_fields if f.name not in ("id", "n")]
_DRIVER, _STATE, _TAINTED = (GROUP.index(c) for c in ("driver", "allocation_state", "tainted"))
_COLS = ", ".join(GROUP)
_TALLY = (
    f"SELECT {_COLS}, node_name, COUNT(*) FROM inventory_device WHERE {{where}} GROUP BY {_COLS}, node_name"
)

Tally = Counter[tuple[Any, ...]]


@contextmanager
def recounted(touched: Sequence[int], rows: int) -> Iterator[None]:
    """Around writes of `rows` device rows that change (update, delete) no device but those with the ids
    `touched` (each once), and insert new ones: the counters follow by one recount instead of per-row
    triggers."""
    if connection.vendor != "sqlite" or rows < RECOUNT_MIN_ROWS or not connection.in_atomic_block:
        yield
        return
    # No savepoint here, on purpose: inside one, SQLite's in-memory statement journal keeps every page the
    # savepoint changes and truncates that list by walking it after each row's statement (the device
    # table has triggers, so each row is a statement with its own journal): 10,000 device rows in pages of
    # 2,500 took 1.66 s instead of 0.39 s. Instead the recount runs whatever happens: should the writes
    # fail and the caller carry on in its transaction, the counters follow the rows that were written and
    # no pause is left behind; should the caller roll back, the pause and the counts go with the rows.
    with connection.cursor() as cursor:
        before = _tally(cursor, touched)
        cursor.execute("SELECT COALESCE(MAX(id), 0) FROM inventory_device")
        top = cursor.fetchone()[0]
        cursor.execute("INSERT INTO inventory_devicecountpause (id) VALUES (1)")
        try:
            yield
        finally:
            cursor.execute("DELETE FROM inventory_devicecountpause")
            after = _tally(cursor, touched)
            cursor.execute(_TALLY.format(where="id > %s"), [top])  # the rows inserted meanwhile
            after.update(_rows(cursor))
            _apply(cursor, after, before)


def _tally(cursor: Any, ids: Sequence[int]) -> Tally:
    tally: Tally = Counter()
    for batch in chunks(ids):
        cursor.execute(_TALLY.format(where=f"id IN ({', '.join(['%s'] * len(batch))})"), list(batch))
        tally.update(_rows(cursor))
    return tally


def _rows(cursor: Any) -> Tally:
    return Counter({tuple(row[:-1]): row[-1] for row in cursor.fetchall()})


def _apply(cursor: Any, after: Tally, before: Tally) -> None:
    groups: Counter[tuple[Any, ...]] = Counter()
    nodes: dict[tuple[str, str], list[int]] = {}
    for sign, tally in ((1, after), (-1, before)):
        for key, n in tally.items():
            *group, node = key
            groups[tuple(group)] += sign * n
            allocated = int(group[_STATE] != FREE)
            counts = nodes.setdefault((node, group[_DRIVER]), [0, 0, 0])
            counts[0] += sign * n
            counts[1] += sign * n * allocated
            counts[2] += sign * n * int(bool(group[_TAINTED]))
    changed = [(*group, n) for group, n in groups.items() if n]
    if changed:
        cursor.executemany(
            f"INSERT INTO inventory_devicecount ({_COLS}, n) VALUES ({', '.join(['%s'] * (len(GROUP) + 1))}) "
            f"ON CONFLICT ({_COLS}) DO UPDATE SET n = n + excluded.n",
            changed,
        )
        cursor.execute("DELETE FROM inventory_devicecount WHERE n = 0")
    moved = [(node, driver, *counts) for (node, driver), counts in nodes.items() if any(counts)]
    if moved:
        cursor.executemany(
            "INSERT INTO inventory_nodedevicecount (node_name, driver, total, allocated, tainted) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (node_name, driver) DO UPDATE SET "
            "total = total + excluded.total, allocated = allocated + excluded.allocated, "
            "tainted = tainted + excluded.tainted",
            moved,
        )
        cursor.execute("DELETE FROM inventory_nodedevicecount WHERE total = 0")
