"""The ResourcePoolStatusRequest controller: fills `status` once with a snapshot of the driver's pools
(dra-api.md §4). A request whose status is set is complete and never touched again."""

from __future__ import annotations

from typing import Any

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
        pools: dict[str, list[JSON]] = {}
        for item in slices:
            s = item.get("spec") or {}
            pool = str((s.get("pool") or {}).get("name", ""))
            if s.get("driver") == driver and (not wanted_pool or pool == wanted_pool):
                pools.setdefault(pool, []).append(item)
        entries: list[JSON] = []
        for pool_name in sorted(pools):
            group = pools[pool_name]
            generation = max(int(s["spec"]["pool"].get("generation", 0)) for s in group)
            newest = [s for s in group if int(s["spec"]["pool"].get("generation", 0)) == generation]
            expected = int(newest[0]["spec"]["pool"].get("resourceSliceCount", len(newest)))
            entry: JSON = {
                "driver": driver,
                "poolName": pool_name,
                "generation": generation,
                "resourceSliceCount": expected,
            }
            node = newest[0]["spec"].get("nodeName")
            if node:
                entry["nodeName"] = node
            if len(newest) < expected:
                entry["validationError"] = f"incomplete pool: {len(newest)} of {expected} slices published"
            else:
                devices = [d for s in newest for d in s["spec"].get("devices") or []]
                allocated = sum(1 for d in devices if (driver, pool_name, d["name"]) in in_use)
                unavailable = sum(
                    1
                    for d in devices
                    if (driver, pool_name, d["name"]) not in in_use
                    and any(t.get("effect") in ("NoSchedule", "NoExecute") for t in d.get("taints") or [])
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
