"""What every derive module shares: key types, chunking, device lookups by key."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from django.db.models import Q
from django.db.models.fields.json import KeyTransform

from dra.selection import device_selector
from inventory.models import Device

JSON = dict[str, Any]
DeviceKey = tuple[str, str, str]  # driver, pool, device
CHUNK = 500
# Bound parameters per keyed query: SQLite's limit is 32,766, PostgreSQL's 65,535; a few hundred keep
# each statement's plan cheap. Every keyed read is chunked, never a whole-table scan: a batch of changed
# claims or pods costs O(its keys), whatever the size of the cluster.
PARAMS_PER_QUERY = 600


def json_path(field: str, *keys: str) -> KeyTransform:
    """`field` → `keys` of a JSON column, for `values_list`: what the lookup string "raw__metadata__labels"
    reads, without Django first trying it as a relation. That try raises and keeps a FieldError whose
    traceback's frames hold the caller's locals (a whole page of rows) in a reference cycle until the
    cyclic collector runs: 60,000 objects a page of 500 slices."""
    path: KeyTransform | str = field
    for key in keys:
        path = KeyTransform(key, path)
    assert isinstance(path, KeyTransform), "json_path needs at least one key"
    return path


def chunks(values: Iterable[Any], size: int = CHUNK) -> Iterable[list[Any]]:
    batch: list[Any] = []
    for value in values:
        batch.append(value)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def keys_q(
    keys: Iterable[DeviceKey],
    *,
    driver_field: str = "driver",
    pool_field: str = "pool",
    name_field: str = "name",
) -> Iterator[Q]:
    """Filters covering these device keys: per driver, `pool IN (…) AND name IN (…)` (an index range
    per pool), split so no statement binds more than PARAMS_PER_QUERY values. A SUPERSET: a pool's
    device named like one wanted in another pool matches too, so callers keep only the exact keys
    (`in_keys`). One term per driver, not per pool: Django compiles each term at ~1 ms."""
    by_driver: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for driver, pool, name in keys:
        by_driver[driver][pool].add(name)
    for driver, pools in sorted(by_driver.items()):
        batch_pools: set[str] = set()
        batch_names: set[str] = set()
        for pool, names in sorted(pools.items()):
            if batch_pools and len(batch_pools) + len(batch_names | names) >= PARAMS_PER_QUERY:
                yield Q(**{driver_field: driver, f"{pool_field}__in": sorted(batch_pools),
                           f"{name_field}__in": sorted(batch_names)})  # fmt: skip
                batch_pools, batch_names = set(), set()
            batch_pools.add(pool)
            batch_names |= names
        if batch_pools:
            yield Q(**{driver_field: driver, f"{pool_field}__in": sorted(batch_pools),
                       f"{name_field}__in": sorted(batch_names)})  # fmt: skip


def devices_by_keys(keys: set[DeviceKey]) -> list[Device]:
    result: list[Device] = []
    for q in keys_q(keys):
        result.extend(d for d in Device.objects.filter(q).order_by() if (d.driver, d.pool, d.name) in keys)
    return result


def pool_key(driver: str, pool: str) -> str:
    """How the mirror names a pool in KubeObject.index_key and in sets of pools: "driver/pool"."""
    return f"{driver}/{pool}"


def pools_q(pool_keys: Iterable[str], *, driver_field: str = "driver", pool_field: str = "pool") -> Q:
    """A filter for the rows of these pools ("driver/pool" keys): one `pool IN (…)` per driver. Callers
    pass at most a few hundred (`pools_qs` splits any number)."""
    by_driver: dict[str, set[str]] = defaultdict(set)
    for key in pool_keys:
        driver, _, pool = key.partition("/")
        by_driver[driver].add(pool)
    q = Q(pk__in=[])
    for driver, pools in sorted(by_driver.items()):
        q |= Q(**{driver_field: driver, f"{pool_field}__in": sorted(pools)})
    return q


def pools_qs(
    pool_keys: Iterable[str], *, driver_field: str = "driver", pool_field: str = "pool"
) -> Iterator[Q]:
    """`pools_q` for any number of pools, PARAMS_PER_QUERY bound values a statement."""
    for batch in chunks(sorted(set(pool_keys)), PARAMS_PER_QUERY // 2):
        yield pools_q(batch, driver_field=driver_field, pool_field=pool_field)


TERMS_PER_QUERY = 100


def selector_filters(selectors: Iterable[JSON | None]) -> list[Q]:
    """Filters selecting the devices any of these DeviceTaintRule selectors (old or new) select, merged
    into `IN` lists (1,000 one-pool rules are one `pool IN (…)`) and split so that no statement passes
    TERMS_PER_QUERY terms or PARAMS_PER_QUERY values: SQLite refuses an expression tree deeper than 1,000.
    An empty list: nothing is selected (a missing selector selects nothing)."""
    by_device: dict[tuple[str | None, str | None], set[str]] = defaultdict(set)
    by_pool: dict[str | None, set[str]] = defaultdict(set)
    drivers: set[str] = set()
    for raw in selectors:
        selector = device_selector(raw)
        if not selector.present:
            continue
        if selector.device is not None:
            by_device[(selector.driver, selector.pool)].add(selector.device)
        elif selector.pool is not None:
            by_pool[selector.driver].add(selector.pool)
        elif selector.driver is not None:
            drivers.add(selector.driver)
        else:
            return [Q()]  # an empty selector selects every device
    terms: list[Q] = []
    for part in chunks(sorted(drivers), PARAMS_PER_QUERY):
        terms.append(Q(driver__in=part))
    for driver, pools in sorted(by_pool.items(), key=lambda kv: kv[0] or ""):
        for part in chunks(sorted(pools), PARAMS_PER_QUERY):
            terms.append(Q(pool__in=part) & (Q(driver=driver) if driver is not None else Q()))
    for (driver, pool), names in sorted(by_device.items(), key=lambda kv: (kv[0][0] or "", kv[0][1] or "")):
        for part in chunks(sorted(names), PARAMS_PER_QUERY):
            term = Q(name__in=part)
            if driver is not None:
                term &= Q(driver=driver)
            if pool is not None:
                term &= Q(pool=pool)
            terms.append(term)
    filters: list[Q] = []
    for group in chunks(terms, TERMS_PER_QUERY):
        q = group[0]
        for term in group[1:]:
            q |= term
        filters.append(q)
    return filters
