"""The ResourcePoolStatusRequest controller: fills `status` once with a snapshot of the driver's pools
(dra-api.md §4). A request whose status is set is complete and never touched again.

Pools are `dra.objects.pools_of`: the newest generation only, complete when all its slices are published,
and checked for the problems (duplicate device names, unknown counters) that make the allocator skip it.
Each pool's entry (counts, partition and shareable summaries) is `dra.poolstatus.pool_status_entry`."""

from __future__ import annotations

from typing import Any

from dra.objects import allocation_results, pools_of
from dra.poolstatus import pool_status_entry
from dra.taints import RuleIndex
from simcluster.controllers.base import Clock, format_time
from simcluster.controllers.common import meta, name_of, read_all
from simcluster.errors import ApiError
from simcluster.store import Store

JSON = dict[str, Any]
WATCHES = frozenset({"resourcepoolstatusrequests"})


class PoolStatusController:
    def __init__(self, store: Store, *, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def reconcile(self) -> float | None:
        requests = [r for r in read_all(self.store, "resourcepoolstatusrequests") if not r.get("status")]
        if not requests:
            return None
        slices = read_all(self.store, "resourceslices")
        rules = RuleIndex.of(read_all(self.store, "devicetaintrules"))
        results: dict[tuple[str, str], dict[str, list[JSON]]] = {}
        for claim in read_all(self.store, "resourceclaims"):
            for result in allocation_results(claim):
                pool = results.setdefault((str(result.get("driver")), str(result.get("pool"))), {})
                pool.setdefault(str(result.get("device")), []).append(result)
        for request in requests:
            try:
                self._fill(request, slices, results, rules)
            except ApiError as error:
                if error.status not in (404, 409):
                    raise
        return None

    def _fill(
        self,
        request: JSON,
        slices: list[JSON],
        results: dict[tuple[str, str], dict[str, list[JSON]]],
        rules: RuleIndex,
    ) -> None:
        spec = request.get("spec") or {}
        driver = str(spec.get("driver", ""))
        wanted_pool = spec.get("poolName")
        limit = int(spec.get("limit", 100))
        default_attribute = str(spec.get("defaultPartitionTypeAttribute") or "")
        mine = [s for s in slices if (s.get("spec") or {}).get("driver") == driver]
        pools = {
            name: state
            for (_, name), state in pools_of(mine).items()
            if not wanted_pool or name == wanted_pool
        }
        entries = [
            pool_status_entry(
                pools[name],
                results=results.get((driver, name), {}),
                rules=rules,
                default_partition_attribute=default_attribute,
            )  # fmt: skip
            for name in sorted(pools)
        ]
        status: JSON = {
            "poolCount": len(entries),
            "pools": entries[:limit],
            "conditions": [
                {
                    "type": "Complete",
                    "status": "True",
                    "reason": "Computed",
                    "message": f"{len(entries)} pools of driver {driver} summarized",
                    "lastTransitionTime": format_time(self.clock.now()),
                    "observedGeneration": int(meta(request).get("generation", 1)),
                }
            ],
        }
        self.store.patch(
            "resourcepoolstatusrequests", name_of(request), {"status": status}, subresource="status"
        )
