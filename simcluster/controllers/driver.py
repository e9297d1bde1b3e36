"""A simulated DRA driver: publishes the topology's ResourceSlices and writes per-device claim status.

One pool per (driver, node), named after the node. A pool is split over several slices when its devices do
not fit one (128 per slice, 64 when a slice holds devices with taints or counter consumption); shared counter
sets get slices of their own. Every change republishes the whole pool with `generation` bumped in all of
its slices and `resourceSliceCount` set, as drivers must.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dra.objects import (
    MAX_DEVICES_PER_SLICE,
    MAX_DEVICES_PER_SLICE_WITH_ADVANCED_FEATURES,
    pool_generation,
    uses_advanced_features,
)
from simcluster.controllers.base import Clock, Loop, SystemClock, format_time
from simcluster.controllers.common import read_all
from simcluster.errors import ApiError
from simcluster.store import writing_as
from simcluster.topology import PoolSpec, Topology

log = logging.getLogger("simcluster.controllers.driver")

JSON = dict[str, Any]

MAX_COUNTER_SETS_PER_SLICE = 8
API_VERSION = "resource.k8s.io/v1"


def split_devices(devices: Sequence[JSON]) -> list[list[JSON]]:
    """Chunk devices in order so that no chunk breaks the per-slice limit that applies to it."""
    chunks: list[list[JSON]] = []
    current: list[JSON] = []
    advanced = False
    for device in devices:
        with_device = advanced or uses_advanced_features(device)
        limit = MAX_DEVICES_PER_SLICE_WITH_ADVANCED_FEATURES if with_device else MAX_DEVICES_PER_SLICE
        if current and len(current) + 1 > limit:
            chunks.append(current)
            current, advanced = [], False
            with_device = uses_advanced_features(device)
        current.append(device)
        advanced = with_device
    if current:
        chunks.append(current)
    return chunks


def build_pool_slices(
    *,
    driver: str,
    node: str,
    pool: str,
    devices: Sequence[JSON],
    counter_sets: Sequence[JSON],
    generation: int,
) -> list[JSON]:
    """The slice objects (without names) that publish one pool at one generation."""
    specs: list[JSON] = []
    for start in range(0, len(counter_sets), MAX_COUNTER_SETS_PER_SLICE):
        specs.append(
            {"sharedCounters": copy.deepcopy(list(counter_sets[start : start + MAX_COUNTER_SETS_PER_SLICE]))}
        )
    specs += [{"devices": copy.deepcopy(chunk)} for chunk in split_devices(devices)]
    if not specs:
        specs.append({"devices": []})
    slices = []
    for body in specs:
        spec: JSON = {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": pool, "generation": generation, "resourceSliceCount": len(specs)},
            **body,
        }
        slices.append(
            {
                "apiVersion": API_VERSION,
                "kind": "ResourceSlice",
                "metadata": {
                    "generateName": f"{node}-{driver}-",
                    "labels": {"simcluster.example.com/driver": driver, "simcluster.example.com/node": node},
                },
                "spec": spec,
            }
        )
    return slices


@dataclass
class _PoolState:
    driver: str
    node: str
    devices: list[JSON]
    counter_sets: list[JSON]
    generation: int = 1
    slice_names: list[str] = field(default_factory=list)

    @property
    def pool(self) -> str:
        return self.node


class DriverError(LookupError):
    pass


class Driver:
    """Publishes slices for every pool of the topology and keeps claim `status.devices` for its drivers."""

    def __init__(self, store: Any, topology: Topology, *, clock: Clock | None = None) -> None:
        self.store = store
        self.clock = clock or SystemClock()
        self.drivers = frozenset(topology.drivers)
        self._lock = threading.RLock()
        self._pools: dict[tuple[str, str], _PoolState] = {}
        published_at = format_time(self.clock.now())
        for spec in topology.pools:
            self._pools[(spec.driver, spec.node)] = self._initial_state(spec, published_at)
        # each write names its driver (writing_as), as a driver's client names itself
        self.loop = Loop("driver-claim-status", self._reconcile_claim_status, manager=None)

    @staticmethod
    def _initial_state(spec: PoolSpec, published_at: str) -> _PoolState:
        devices = copy.deepcopy(list(spec.devices))
        for device in devices:
            for taint in device.get("taints") or []:
                taint.setdefault("timeAdded", published_at)
        return _PoolState(spec.driver, spec.node, devices, copy.deepcopy(list(spec.counter_sets)))

    # --- publishing ----------------------------------------------------------------------------------

    def publish_all(self) -> None:
        """Publish every pool, adopting slices that an earlier run left in the store when they match."""
        existing: dict[tuple[str, str], list[JSON]] = {}
        for item in self.store.list("resourceslices"):
            spec = item.get("spec") or {}
            if spec.get("driver") in self.drivers:
                existing.setdefault((spec["driver"], spec.get("pool", {}).get("name", "")), []).append(item)
        with self._lock:
            for key, state in self._pools.items():
                found = sorted(
                    existing.get((state.driver, state.pool), []), key=lambda s: s["metadata"]["name"]
                )
                if found:
                    state.slice_names = [s["metadata"]["name"] for s in found]
                    state.generation = max(pool_generation(s) for s in found)
                    adopted = _match_slices(found, self._desired(state, state.generation))
                    if adopted is not None:
                        state.slice_names = adopted
                        continue
                    state.generation += 1
                self._publish(state)
                existing.pop(key, None)

    def _desired(self, state: _PoolState, generation: int) -> list[JSON]:
        return build_pool_slices(
            driver=state.driver,
            node=state.node,
            pool=state.pool,
            devices=state.devices,
            counter_sets=state.counter_sets,
            generation=generation,
        )

    def _publish(self, state: _PoolState) -> None:
        wanted = self._desired(state, state.generation)
        names: list[str] = []
        for index, body in enumerate(wanted):
            if index < len(state.slice_names):
                name = state.slice_names[index]
                current = self.store.get("resourceslices", name)
                current["spec"] = body["spec"]
                current.setdefault("metadata", {}).setdefault("labels", {}).update(body["metadata"]["labels"])
                with writing_as(str(body["spec"]["driver"])):
                    self.store.update("resourceslices", current)
                names.append(name)
            else:
                with writing_as(str(body["spec"]["driver"])):
                    created = self.store.create("resourceslices", body)
                names.append(created["metadata"]["name"])
        for stale in state.slice_names[len(wanted) :]:
            self.store.delete("resourceslices", stale)
        state.slice_names = names

    def republish(self, driver: str, node: str) -> int:
        """Publish the pool again with the next generation; returns the new generation."""
        with self._lock:
            state = self._state(driver, node)
            state.generation += 1
            self._publish(state)
            return state.generation

    # --- commands --------------------------------------------------------------------------------------

    def mark_unhealthy(
        self,
        driver: str,
        node: str,
        device: str,
        *,
        effect: str = "NoExecute",
        key: str | None = None,
        value: str | None = "unhealthy",
    ) -> JSON:
        """Add (or replace) a driver taint on a device and republish its pool. Returns the taint."""
        taint: JSON = {
            "key": key or f"{driver}/unhealthy",
            "effect": effect,
            "timeAdded": format_time(self.clock.now()),
        }
        if value:
            taint["value"] = value
        with self._lock:
            target = self._device(driver, node, device)
            taints = [t for t in target.get("taints") or [] if t["key"] != taint["key"]]
            target["taints"] = [*taints, taint]
            state = self._state(driver, node)
            state.generation += 1
            self._publish(state)
        return dict(taint)

    def mark_healthy(self, driver: str, node: str, device: str, *, key: str | None = None) -> None:
        """Remove the driver taint `key` (default `<driver>/unhealthy`; "*" removes all) and republish."""
        wanted = key or f"{driver}/unhealthy"
        with self._lock:
            target = self._device(driver, node, device)
            before = target.get("taints") or []
            after = [t for t in before if wanted != "*" and t["key"] != wanted]
            if len(after) == len(before):
                return
            if after:
                target["taints"] = after
            else:
                target.pop("taints", None)
            state = self._state(driver, node)
            state.generation += 1
            self._publish(state)

    def devices(self, driver: str, node: str) -> list[JSON]:
        with self._lock:
            return copy.deepcopy(self._state(driver, node).devices)

    def generation(self, driver: str, node: str) -> int:
        with self._lock:
            return self._state(driver, node).generation

    def pool_slices(self, driver: str, node: str) -> list[JSON]:
        """The pool's slices as the store has them now."""
        return sorted(
            (
                s
                for s in self.store.list("resourceslices")
                if s["spec"].get("driver") == driver and s["spec"].get("pool", {}).get("name") == node
            ),
            key=lambda s: s["metadata"]["name"],
        )

    def _state(self, driver: str, node: str) -> _PoolState:
        try:
            return self._pools[(driver, node)]
        except KeyError:
            raise DriverError(f"driver {driver!r} has no pool on node {node!r}") from None

    def _device(self, driver: str, node: str, device: str) -> JSON:
        for candidate in self._state(driver, node).devices:
            if candidate["name"] == device:
                return candidate
        raise DriverError(f"driver {driver!r} has no device {device!r} on node {node!r}")

    # --- claim status ----------------------------------------------------------------------------------

    WATCHES = frozenset({"resourceclaims"})

    def _reconcile_claim_status(self) -> float | None:
        retry = False
        for committed in read_all(self.store, "resourceclaims"):
            status = committed.get("status") or {}
            results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
            ours = [r for r in results if r.get("driver") in self.drivers]
            existing = status.get("devices") or []
            mine = [d for d in existing if d.get("driver") in self.drivers]
            want_keys = [(r["driver"], r["pool"], r["device"]) for r in ours]
            have_keys = [(d["driver"], d["pool"], d["device"]) for d in mine]
            if sorted(want_keys) == sorted(have_keys):
                continue
            if not status.get("allocation"):
                continue  # the claim controller clears device status together with the allocation
            claim = copy.deepcopy(committed)
            others = [d for d in existing if d.get("driver") not in self.drivers]
            claim.setdefault("status", {})["devices"] = others + [self._device_status(claim, r) for r in ours]
            try:
                with writing_as(min(str(d["driver"]) for d in [*ours, *mine])):
                    self.store.update("resourceclaims", claim, subresource="status")
            except ApiError as error:
                if error.status not in (404, 409):
                    raise
                retry = error.status == 409
        return 0.05 if retry else None

    def _device_status(self, claim: JSON, result: JSON) -> JSON:
        ready: JSON = {
            "type": "Ready",
            "status": "True",
            "reason": "DeviceConfigured",
            "message": f"{result['device']} prepared for the claim",
            "lastTransitionTime": format_time(self.clock.now()),
        }
        if claim["metadata"].get("generation"):  # a claim has none: its observedGeneration is left out as 0
            ready["observedGeneration"] = int(claim["metadata"]["generation"])
        entry: JSON = {
            "driver": result["driver"],
            "pool": result["pool"],
            "device": result["device"],
            "conditions": [ready],
        }
        if result.get("shareID"):
            entry["shareID"] = result["shareID"]
        if result["driver"].startswith("nic."):
            entry["networkData"] = self._network_data(claim, result)
        return entry

    def _network_data(self, claim: JSON, result: JSON) -> JSON:
        with self._lock:
            state = self._pools.get((result["driver"], result["pool"]))
            device = (
                next((d for d in state.devices if d["name"] == result["device"]), None) if state else None
            )
        attributes = (device or {}).get("attributes") or {}
        digest = hashlib.sha1(claim["metadata"].get("uid", claim["metadata"]["name"]).encode()).digest()
        index = int(attributes.get("index", {}).get("int", 0))
        data: JSON = {
            "interfaceName": f"net{index + 1}",
            "ips": [f"10.{100 + digest[0] % 100}.{digest[1]}.{digest[2] % 254 + 1}/24"],
        }
        mac = attributes.get("macAddress", {}).get("string")
        if mac:
            data["hardwareAddress"] = mac
        return data


def _match_slices(found: Sequence[JSON], wanted: Sequence[JSON]) -> list[str] | None:
    """Names of the found slices in the order of the wanted ones when their specs are the same."""
    if len(found) != len(wanted):
        return None
    names: list[str] = []
    unused = list(found)
    for body in wanted:
        match = next((s for s in unused if s["spec"] == body["spec"]), None)
        if match is None:
            return None
        unused.remove(match)
        names.append(match["metadata"]["name"])
    return names


def slice_device_names(slices: Iterable[JSON]) -> list[str]:
    return [d["name"] for s in slices for d in (s.get("spec") or {}).get("devices") or []]
