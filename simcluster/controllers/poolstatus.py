"""The ResourcePoolStatusRequest controller: fills `status` once with a snapshot of the driver's pools
(dra-api.md §4). A request whose status is set is complete and never touched again.

Pools are `dra.objects.pools_of`: the newest generation only, complete when all its slices are published,
and checked for the problems (duplicate device names, unknown counters) that make the allocator skip it."""

from __future__ import annotations

from typing import Any

from dra.objects import pools_of
from dra.taints import BLOCKING_EFFECTS
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
        in_use: set[tuple[str, str, str]] = set()
        for claim in read_all(self.store, "resourceclaims"):
            allocation = (claim.get("status") or {}).get("allocation") or {}
            for result in (allocation.get("devices") or {}).get("results") or []:
                in_use.add((str(result.get("driver")), str(result.get("pool")), str(result.get("device"))))
        for request in requests:
            try:
                self._fill(request, slices, in_use)
            except ApiError as error:
                if error.status not in (404, 409):
                    raise
        return None

    def _fill(self, request: JSON, slices: list[JSON], in_use: set[tuple[str, str, str]]) -> None:
        spec = request.get("spec") or {}
        driver = str(spec.get("driver", ""))
        wanted_pool = spec.get("poolName")
        limit = int(spec.get("limit", 100))
        mine = [s for s in slices if (s.get("spec") or {}).get("driver") == driver]
        pools = {
            name: state
            for (_, name), state in pools_of(mine).items()
            if not wanted_pool or name == wanted_pool
        }
        entries: list[JSON] = []
        for pool_name in sorted(pools):
            state = pools[pool_name]
            entry: JSON = {
                "driver": driver,
                "poolName": pool_name,
                "generation": state.generation,
                "resourceSliceCount": state.expected,
            }
            node = (state.slices[0].get("spec") or {}).get("nodeName") if state.slices else None
            if node:
                entry["nodeName"] = node
            if not state.complete:
                entry["validationError"] = (
                    f"incomplete pool: {len(state.slices)} of {state.expected} slices published"
                )
            elif state.problem is not None:
                entry["validationError"] = f"invalid pool: {state.problem}"
            else:
                devices = [d for _, d in state.devices()]
                allocated = sum(1 for d in devices if (driver, pool_name, d.get("name")) in in_use)
                unavailable = sum(
                    1
                    for d in devices
                    if (driver, pool_name, d.get("name")) not in in_use
                    and any(t.get("effect") in BLOCKING_EFFECTS for t in d.get("taints") or [])
                )
                entry.update(
                    totalDevices=len(devices),
                    allocatedDevices=allocated,
                    unavailableDevices=unavailable,
                    availableDevices=len(devices) - allocated - unavailable,
                )
            entries.append(entry)
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
