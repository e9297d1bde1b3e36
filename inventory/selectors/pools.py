"""Pools and what is left of their shared counters (partitionable devices)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from django.db.models import Q, QuerySet

from dra.quantity import Quantity
from inventory.filters import PoolFilterSet
from inventory.models import FREE, Device, Pool
from inventory.selectors.common import InvalidFilters, nanos


def pool_list(*, filters: Mapping[str, Any] | None = None) -> QuerySet[Pool]:
    filterset = PoolFilterSet(data=filters or {}, queryset=Pool.objects.all())
    if not filterset.is_valid():
        raise InvalidFilters(filterset.errors)
    return filterset.qs


def pool_counters_left(*, pools: list[Pool]) -> dict[int, dict[str, dict[str, str]]]:
    """What is left of each shared counter set: total minus what allocated partitionable devices consume.

    One query for all given pools. Quantities are compared as parsed numbers and shown as text.
    """
    result: dict[int, dict[str, dict[str, str]]] = {}
    wanted = [p for p in pools if p is not None and p.shared_counters]
    if not wanted:
        return {p.pk: {} for p in pools if p is not None}
    q = Q()
    for pool in wanted:
        q |= Q(driver=pool.driver, pool=pool.name)
    used: dict[tuple[str, str], dict[str, dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))
    for driver, pool_name, consumes in (
        Device.objects.filter(q, partitionable=True)
        .exclude(allocation_state=FREE)
        .values_list("driver", "pool", "consumes_counters")
    ):
        bucket = used[(driver, pool_name)]
        for consumption in consumes or []:
            counters = bucket[consumption.get("counterSet", "")]
            for counter, spec in (consumption.get("counters") or {}).items():
                counters[counter] = counters.get(counter, 0) + nanos(spec.get("value", "0"))
    for pool in pools:
        if pool is None:
            continue
        left: dict[str, dict[str, str]] = {}
        for counter_set, counters in (pool.shared_counters or {}).items():
            left[counter_set] = {}
            for counter, total in counters.items():
                consumed = used[(pool.driver, pool.name)][counter_set].get(counter, 0)
                left[counter_set][counter] = str(Quantity.parse(str(total)) - Quantity(consumed))
        result[pool.pk] = left
    return result
