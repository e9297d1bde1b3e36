"""What every derive module shares: key types, chunking, device lookups by key."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from django.db.models import Q

from dra.selection import device_selector
from inventory.models import Device

JSON = dict[str, Any]
DeviceKey = tuple[str, str, str]  # driver, pool, device
CHUNK = 500
# Bound parameters per keyed query: SQLite's limit is 32,766, PostgreSQL's 65,535; a few hundred keep
# each statement's plan cheap. Every keyed read is chunked, never a whole-table scan: a batch of changed
# claims or pods costs O(its keys), whatever the size of the cluster.
PARAMS_PER_QUERY = 600


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
    """Filters selecting exactly these device keys, grouped by pool (`driver = … AND pool = … AND name IN
    (…)`, an index range per pool) and split so no statement binds more than PARAMS_PER_QUERY values."""
    by_pool: dict[tuple[str, str], list[str]] = defaultdict(list)
    for driver, pool, name in keys:
        by_pool[(driver, pool)].append(name)
    q: Q | None = None
    params = 0
    for (driver, pool), names in sorted(by_pool.items()):
        for part in chunks(sorted(set(names)), PARAMS_PER_QUERY):
            term = Q(**{driver_field: driver, pool_field: pool, f"{name_field}__in": part})
            q = term if q is None else q | term
            params += 2 + len(part)
            if params >= PARAMS_PER_QUERY:
                yield q
                q, params = None, 0
    if q is not None:
        yield q


def devices_by_keys(keys: set[DeviceKey]) -> list[Device]:
    result: list[Device] = []
    for q in keys_q(keys):
        result.extend(Device.objects.filter(q).order_by())
    return result


def pool_key(driver: str, pool: str) -> str:
    """How the mirror names a pool in KubeObject.index_key and in sets of pools: "driver/pool"."""
    return f"{driver}/{pool}"


def pools_q(pool_keys: Iterable[str], *, driver_field: str = "driver", pool_field: str = "pool") -> Q:
    """A filter for the rows of these pools ("driver/pool" keys); callers pass at most a few hundred
    (`pools_qs` splits any number)."""
    q = Q(pk__in=[])
    for key in pool_keys:
        driver, _, pool = key.partition("/")
        q |= Q(**{driver_field: driver, pool_field: pool})
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
