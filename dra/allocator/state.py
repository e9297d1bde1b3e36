"""Devices already in use, aggregated from allocated claims.

Build it once with `AllocatedState.from_claims` and keep it current with `add_claim` /
`remove_claim`; an `Allocator` reads it on every call, so the per-call cost does not grow
with the number of allocated claims.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .errors import AllocationError
from .model import device_key, parse_quantity


def _claim_ref(claim: Mapping[str, Any]) -> str:
    meta = claim.get("metadata") or {}
    ns, name = meta.get("namespace") or "", meta.get("name") or meta.get("generateName") or ""
    return f"{ns}/{name}" if ns else str(name)


def _results(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return list((allocation.get("devices") or {}).get("results") or [])


class AllocatedState:
    """Exclusive in-use devices, shared allocations (shareID) and consumed capacity."""

    def __init__(self) -> None:
        #: device key -> claims holding it exclusively
        self.exclusive: dict[str, list[str]] = {}
        #: device key -> claims holding a share of it (multi-allocatable devices)
        self.shared: dict[str, list[str]] = {}
        #: device key -> capacity name -> consumed amount in nanos (multi-allocatable devices)
        self.capacity: dict[str, dict[str, int]] = {}
        #: "<device key>/<shareID>"
        self.share_ids: set[str] = set()
        #: bumped on every change; caches keyed on it (available counters) stay correct
        self.version = 0
        #: bumped only when devices are released: a node found full stays full until then
        self.releases = 0

    @classmethod
    def from_claims(cls, claims: Iterable[Mapping[str, Any]]) -> AllocatedState:
        state = cls()
        for claim in claims:
            state.add_claim(claim)
        return state

    def copy(self) -> AllocatedState:
        """An independent copy: claims added to or removed from it leave this one as it is."""
        out = AllocatedState()
        out.exclusive = {k: list(v) for k, v in self.exclusive.items()}
        out.shared = {k: list(v) for k, v in self.shared.items()}
        out.capacity = {k: dict(v) for k, v in self.capacity.items()}
        out.share_ids = set(self.share_ids)
        out.version = self.version
        out.releases = self.releases
        return out

    def is_allocated(self, key: str) -> bool:
        """In use by some claim (exclusively or with a share): consumes its counters."""
        return key in self.exclusive or key in self.shared

    def add_claim(self, claim: Mapping[str, Any]) -> None:
        ref = _claim_ref(claim)
        for i, result in enumerate(_results(claim)):
            key = device_key(str(result.get("driver")), str(result.get("pool")), str(result.get("device")))
            if result.get("adminAccess"):
                # Admin access does not make a device unavailable to others (upstream does the same).
                continue
            share_id = result.get("shareID")
            if share_id:
                self.shared.setdefault(key, []).append(ref)
                self.share_ids.add(f"{key}/{share_id}")
                consumed = self.capacity.setdefault(key, {})
                for name, q in (result.get("consumedCapacity") or {}).items():
                    field = f"claim {ref}: status.allocation.devices.results[{i}].consumedCapacity[{name}]"
                    consumed[name] = consumed.get(name, 0) + parse_quantity(q, field=field).nano_value()
            else:
                self.exclusive.setdefault(key, []).append(ref)
        self.version += 1

    def remove_claim(self, claim: Mapping[str, Any]) -> None:
        ref = _claim_ref(claim)
        for i, result in enumerate(_results(claim)):
            key = device_key(str(result.get("driver")), str(result.get("pool")), str(result.get("device")))
            if result.get("adminAccess"):
                continue
            share_id = result.get("shareID")
            holders = (self.shared if share_id else self.exclusive).get(key)
            if not holders or ref not in holders:
                raise AllocationError(f"claim {ref}: device {key} is not recorded as allocated to it")
            holders.remove(ref)
            if not holders:
                del (self.shared if share_id else self.exclusive)[key]
            if share_id:
                self.share_ids.discard(f"{key}/{share_id}")
                consumed = self.capacity.get(key, {})
                for name, q in (result.get("consumedCapacity") or {}).items():
                    field = f"claim {ref}: status.allocation.devices.results[{i}].consumedCapacity[{name}]"
                    consumed[name] = consumed.get(name, 0) - parse_quantity(q, field=field).nano_value()
                if key not in self.shared:
                    self.capacity.pop(key, None)
        self.version += 1
        self.releases += 1
