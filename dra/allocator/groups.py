"""Device compatibility groups (DRADeviceCompatibilityGroups, alpha in 1.37).

Per counter set, the devices allocated together (those already allocated, read from the slices,
and those taken in the current attempt) must share at least one ``compatibilityGroups`` name: the
running intersection of their groups stays non-empty. A device without groups goes only with other
group-less devices on that counter set; devices on different counter sets are never compared.
Without the feature, upstream ignores every slice that declares groups, so their pools look
incomplete (`Allocator`), and nothing here runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .model import Device


@dataclass(frozen=True, slots=True)
class GroupState:
    """The running intersection on one counter set (upstream ``compatibilityGroupIntersection``)."""

    #: some device is on the counter set
    members: bool = False
    #: every device so far declared no groups
    all_empty: bool = False
    #: the intersection of their groups (when not ``all_empty``)
    groups: frozenset[str] = frozenset()

    def admits(self, groups: frozenset[str]) -> bool:
        if not self.members:
            return True
        if not groups:
            return self.all_empty
        return not self.all_empty and bool(self.groups & groups)

    def add(self, groups: frozenset[str]) -> GroupState:
        if not self.members:
            return GroupState(True, not groups, groups)
        if self.all_empty or not groups:
            return self  # `admits` was checked: both sides agree
        return GroupState(True, False, self.groups & groups)


@dataclass(slots=True)
class Baseline:
    """What the allocated devices of one pool contribute, per counter set."""

    states: dict[str, GroupState]
    #: counter set -> (device key, its groups there), for explanations
    members: dict[str, list[tuple[str, frozenset[str]]]]


def baseline(devices: Iterable[Device], is_allocated: Callable[[str], bool]) -> Baseline:
    """Fold the groups of the allocated ones among ``devices``."""
    out = Baseline({}, {})
    for d in devices:
        if not d.consumes_counters or not is_allocated(d.key):
            continue
        for cc in d.consumes_counters:
            out.states[cc.counter_set] = out.states.get(cc.counter_set, GroupState()).add(cc.groups)
            out.members.setdefault(cc.counter_set, []).append((d.key, cc.groups))
    return out


def show(groups: frozenset[str]) -> str:
    return ", ".join(sorted(groups)) if groups else "none"


def conflict(device: Device, base: Baseline) -> str | None:
    """Why the device cannot join the allocated devices (one sentence), or None if it can."""
    for cc in device.consumes_counters:
        state = base.states.get(cc.counter_set, GroupState())
        if state.admits(cc.groups):
            continue
        for key, theirs in base.members.get(cc.counter_set, ()):
            if not GroupState().add(theirs).admits(cc.groups):
                return (
                    f"incompatible with {key} on counter set {cc.counter_set}"
                    f" (groups {show(cc.groups)} vs {show(theirs)})"
                )
        return (
            f"incompatible with the devices allocated on counter set {cc.counter_set}"
            f" (groups {show(cc.groups)} vs common {show(state.groups)})"
        )
    return None
