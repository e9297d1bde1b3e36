"""The device-taint eviction controller (dra-api.md §8).

Pods that use an allocated claim reserved for them, whose devices carry a NoExecute taint (from a slice of
the pool's newest generation or from a DeviceTaintRule) that the allocation result's tolerations do not
tolerate, are evicted at the taint's `timeAdded` plus the smallest matching `tolerationSeconds` (at once
without one): an Event `DeviceTaintManagerEviction`, the `DisruptionTarget` condition with reason
`DeletionByDeviceTaintManager`, then a DELETE with a UID precondition. A pending eviction is cancelled when
the taint goes away or becomes tolerated. Each DeviceTaintRule gets an `EvictionInProgress` condition
(reasons PodsPendingEviction, Completed, NotStarted, NoEffect, OtherEffect), written at most every
`rule_status_period` seconds of the controller's clock except right after the rule's spec changes.

The rules are `dra`'s: a pool's newest generation (`dra.objects.pools_of`), which devices a rule selects
(`dra.taints.RuleIndex`) and when a taint evicts (`dra.taints.eviction_time`: only tolerations whose effect
is NoExecute count). The scheduler asks `evicting_now` the same question before it adds a pod to a claim.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from dra.objects import pools_of
from dra.taints import NO_EXECUTE, RuleIndex, Taint, eviction_time, parse_taint, parse_taint_rule
from simcluster.controllers.base import Clock, format_time
from simcluster.controllers.common import (
    is_deleting,
    is_terminal,
    meta,
    name_of,
    namespace_of,
    pod_claim_names,
    pod_generation,
    post_event,
    read_all,
    reserved_for,
    set_condition,
    uid_of,
)
from simcluster.errors import ApiError
from simcluster.store import Store

log = logging.getLogger("simcluster.eviction")

JSON = dict[str, Any]
DeviceKey = tuple[str, str, str]
WATCHES = frozenset({"pods", "resourceclaims", "resourceslices", "devicetaintrules"})
COMPONENT = "device-taint-eviction-controller"
CONDITION = "EvictionInProgress"
EVENT_REASON = "DeviceTaintManagerEviction"
DISRUPTION_REASON = "DeletionByDeviceTaintManager"
DISRUPTION_MESSAGE = "Device Taint manager: deleting due to NoExecute taint"
NO_EFFECT_SUFFIX = (
    "This information will not be updated again. Recreate the DeviceTaintRule to trigger an update."
)


def device_key(result: Mapping[str, Any]) -> DeviceKey:
    """The device of an allocation result."""
    return (str(result.get("driver")), str(result.get("pool")), str(result.get("device")))


def published_devices(slices: Iterable[JSON]) -> tuple[dict[DeviceKey, list[Taint]], set[DeviceKey]]:
    """Driver taints per device and the set of devices, from each pool's newest generation only
    (`dra.objects.pools_of`; a pool's validity does not matter to eviction)."""
    taints: dict[DeviceKey, list[Taint]] = {}
    published: set[DeviceKey] = set()
    for (driver, pool), state in pools_of(slices, partitionable=False).items():
        for _, device in state.devices():
            key = (driver, pool, str(device.get("name", "")))
            published.add(key)
            found = [parse_taint(t) for t in device.get("taints") or [] if isinstance(t, Mapping)]
            if found:
                taints[key] = found
    return taints, published


def taints_on(
    key: DeviceKey, rules: RuleIndex, slice_taints: Mapping[DeviceKey, list[Taint]], effect: str
) -> list[Taint]:
    """The device's taints of `effect`: the rules' (by rule name), then the driver's."""
    found = [r.taint for r in rules.rules_for(*key) if r.taint.effect == effect]
    return found + [t for t in slice_taints.get(key, []) if t.effect == effect]


def evicting_now(
    result: Mapping[str, Any],
    rules: RuleIndex,
    slice_taints: Mapping[DeviceKey, list[Taint]],
    *,
    now: datetime,
) -> list[Taint]:
    """The NoExecute taints on a result's device under which the eviction controller evicts a user of the
    result now (`dra.taints.eviction_time`): the scheduler adds no pod to such a claim."""
    tolerations = result.get("tolerations") or []
    evicting: list[Taint] = []
    for taint in taints_on(device_key(result), rules, slice_taints, NO_EXECUTE):
        at = eviction_time(taint, tolerations, now=now)
        if at is not None and at <= now:
            evicting.append(taint)
    return evicting


def _plural(count: int, singular: str, plural: str) -> str:
    return singular if count == 1 else plural


def pending_message(pods: int, namespaces: int, evicted: int) -> str:
    if pods == 1:
        head = f"1 pod needs to be evicted in {namespaces} {_plural(namespaces, 'namespace', 'different namespaces')}."
    else:
        head = f"{pods} pods need to be evicted in {namespaces} {_plural(namespaces, 'namespace', 'different namespaces')}."
    return f"{head} {evicted_message(evicted)}"


def evicted_message(evicted: int) -> str:
    return f"{evicted} {_plural(evicted, 'pod', 'pods')} evicted since starting the controller."


def no_effect_message(published: int, allocated: int, pods: int, namespaces: int) -> str:
    return (
        f"{published} published {_plural(published, 'device', 'devices')} selected. "
        f"{allocated} allocated {_plural(allocated, 'device', 'devices')} selected. "
        f"{pods} {_plural(pods, 'pod', 'pods')} would be evicted in {namespaces} "
        f"{_plural(namespaces, 'namespace', 'namespaces')} if the effect was NoExecute. {NO_EFFECT_SUFFIX}"
    )


@dataclass
class _Affected:
    """Per pod: when it must go and because of which rules."""

    pod: JSON
    at: datetime
    rules: set[str] = field(default_factory=set)


class EvictionController:
    def __init__(self, store: Store, *, clock: Clock, rule_status_period: float = 10.0) -> None:
        self.store = store
        self.clock = clock
        self.rule_status_period = rule_status_period
        self.evicted_by_rule: dict[str, int] = {}
        self.evicted_total = 0
        self._rule_written: dict[str, datetime] = {}
        self._scheduled: dict[str, str] = {}  # pod uid → "ns/name" with a future eviction
        self._devices_cache: tuple[int, dict[DeviceKey, list[Taint]], set[DeviceKey]] | None = None

    # --- the pass --------------------------------------------------------------------------------------

    def reconcile(self) -> float | None:
        now = self.clock.now()
        rules = read_all(self.store, "devicetaintrules")
        index = RuleIndex.of(rules)
        slice_taints, published = self._devices()
        if not rules and not slice_taints and not self._scheduled:
            return None
        claims = {(namespace_of(c), name_of(c)): c for c in read_all(self.store, "resourceclaims")}
        pods = [
            p
            for p in read_all(self.store, "pods")
            if (p.get("spec") or {}).get("nodeName") and not is_deleting(p) and not is_terminal(p)
        ]
        affected = self._affected(pods, claims, index, slice_taints, now, effect=NO_EXECUTE)

        wake: list[datetime] = []
        still_scheduled: dict[str, str] = {}
        for uid, item in affected.items():
            if item.at <= now:
                if self._evict(item):
                    for rule_name in item.rules:
                        self.evicted_by_rule[rule_name] = self.evicted_by_rule.get(rule_name, 0) + 1
                    self.evicted_total += 1
            else:
                wake.append(item.at)
                still_scheduled[uid] = f"{namespace_of(item.pod)}/{name_of(item.pod)}"
        live = {uid_of(p): p for p in pods}
        for uid in set(self._scheduled) - set(still_scheduled) - set(affected):
            if uid in live:
                post_event(
                    self.store,
                    self.clock,
                    live[uid],
                    reason=EVENT_REASON,
                    message="Cancelling deletion",
                    component=COMPONENT,
                )
        self._scheduled = still_scheduled

        pending_by_rule: dict[str, list[JSON]] = {}
        for item in affected.values():
            if item.at > now:
                for rule_name in item.rules:
                    pending_by_rule.setdefault(rule_name, []).append(item.pod)
        for rule in rules:
            due = self._update_rule_status(
                rule, pending_by_rule.get(name_of(rule), []), pods, claims, published, now
            )
            if due is not None:
                wake.append(due)
        if not wake:
            return None
        return max(0.0, (min(wake) - now).total_seconds())

    # --- taints on devices -----------------------------------------------------------------------------

    def _devices(self) -> tuple[dict[DeviceKey, list[Taint]], set[DeviceKey]]:
        """Taints of every published device and the set of devices, from each pool's newest generation.

        Cached until a slice changes: most passes are about pods and claims, and a large world has
        thousands of slices."""
        # The kind's latest change, not a sorted listing of every slice: this runs on every pass (each pod
        # and claim write during a burst), and sorting 6,000 slices under the store's lock for the cache key
        # was the cost of this controller's passes in a 1,500-pod burst (bench/bench_burst.py).
        with self.store.lock:  # the listing is the one the revision names
            signature = self.store.revision("resourceslices")
            if self._devices_cache is not None and self._devices_cache[0] == signature:
                return self._devices_cache[1], self._devices_cache[2]
            entries: list[Any] = list(self.store.snapshot("resourceslices")[1])
        taints, published = published_devices([e.obj for e in entries])
        self._devices_cache = (signature, taints, published)
        return taints, published

    def _affected(
        self,
        pods: list[JSON],
        claims: Mapping[tuple[str, str], JSON],
        rules: RuleIndex,
        slice_taints: Mapping[DeviceKey, list[Taint]],
        now: datetime,
        *,
        effect: str,
        only_rule: JSON | None = None,
    ) -> dict[str, _Affected]:
        """Pods that a taint of `effect` on their allocated devices would evict, keyed by pod uid.

        With `only_rule`, only that rule's taint counts, as if its effect were `effect` (the preview)."""
        preview = parse_taint_rule(only_rule) if only_rule is not None else None
        out: dict[str, _Affected] = {}
        for pod in pods:
            uid = uid_of(pod)
            for claim_name in pod_claim_names(pod):
                claim = claims.get((namespace_of(pod), claim_name))
                if claim is None or not reserved_for(claim, uid):
                    continue
                allocation = (claim.get("status") or {}).get("allocation") or {}
                for result in (allocation.get("devices") or {}).get("results") or []:
                    key = device_key(result)
                    if preview is None:
                        taints = taints_on(key, rules, slice_taints, effect)
                    elif preview.selects(*key):
                        taints = [dataclasses.replace(preview.taint, effect=effect)]
                    else:
                        taints = []
                    for taint in taints:
                        at = eviction_time(taint, result.get("tolerations") or [], now=now)
                        if at is None:
                            continue
                        item = out.get(uid)
                        if item is None:
                            item = out[uid] = _Affected(pod, at)
                        item.at = min(item.at, at)
                        if taint.rule:
                            item.rules.add(taint.rule)
        return out

    # --- eviction --------------------------------------------------------------------------------------

    def _evict(self, item: _Affected) -> bool:
        pod = item.pod
        name, ns, uid = name_of(pod), namespace_of(pod), uid_of(pod)
        post_event(
            self.store,
            self.clock,
            pod,
            reason=EVENT_REASON,
            message="Marking for deletion",
            component=COMPONENT,
        )
        condition: dict[str, Any] = {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": DISRUPTION_REASON,
            "message": DISRUPTION_MESSAGE,
            "lastTransitionTime": format_time(self.clock.now()),
        }
        try:
            current = self.store.get("pods", name, namespace=ns)
            if uid_of(current) != uid:
                return False
            condition["observedGeneration"] = pod_generation(current)
            conditions = set_condition((current.get("status") or {}).get("conditions") or [], condition)
            self.store.patch(
                "pods", name, {"status": {"conditions": conditions}}, namespace=ns, subresource="status"
            )
            self.store.delete("pods", name, namespace=ns, uid=uid)
        except ApiError as error:
            if error.status in (404, 409):  # gone or replaced: nothing left to evict
                return False
            raise
        log.info("evicted pod %s/%s", ns, name)
        return True

    # --- DeviceTaintRule status ------------------------------------------------------------------------

    def _update_rule_status(
        self,
        rule: JSON,
        pending: list[JSON],
        pods: list[JSON],
        claims: Mapping[tuple[str, str], JSON],
        published: set[DeviceKey],
        now: datetime,
    ) -> datetime | None:
        """Write the rule's condition when it changed and the rate limit allows; return when to look again."""
        generation = int(meta(rule).get("generation", 1))
        taint = (rule.get("spec") or {}).get("taint") or {}
        effect = taint.get("effect")
        conditions = (rule.get("status") or {}).get("conditions") or []
        current = next((c for c in conditions if c.get("type") == CONDITION), None)
        if effect == "None":
            if (
                current
                and current.get("reason") == "NoEffect"
                and int(current.get("observedGeneration", 0)) == generation
            ):
                return None  # computed once per spec change
            desired = self._preview(rule, pods, claims, published, now)
        elif effect == "NoExecute":
            evicted = self.evicted_by_rule.get(name_of(rule), 0)
            if pending:
                namespaces = len({namespace_of(p) for p in pending})
                desired = ("True", "PodsPendingEviction", pending_message(len(pending), namespaces, evicted))
            elif evicted:
                desired = ("False", "Completed", evicted_message(evicted))
            else:
                desired = ("False", "NotStarted", "")
        else:
            desired = ("False", "OtherEffect", "Eviction only happens for the NoExecute effect.")
        status, reason, message = desired
        if current and (
            current.get("status"),
            current.get("reason"),
            current.get("message", ""),
            int(current.get("observedGeneration", 0)),
        ) == (status, reason, message, generation):
            return None
        spec_changed = current is None or int(current.get("observedGeneration", 0)) != generation
        last = self._rule_written.get(uid_of(rule))
        if not spec_changed and last is not None:
            due = last + timedelta(seconds=self.rule_status_period)
            if now < due:
                return due
        condition = {
            "type": CONDITION,
            "status": status,
            "reason": reason,
            "message": message,
            "observedGeneration": generation,
            "lastTransitionTime": format_time(now),
        }
        others = [copy.deepcopy(c) for c in conditions if c.get("type") != CONDITION]
        try:
            self.store.patch(
                "devicetaintrules",
                name_of(rule),
                {"status": {"conditions": [*others, condition]}},
                subresource="status",
            )
        except ApiError as error:
            if error.status != 404:
                raise
            return None
        self._rule_written[uid_of(rule)] = now
        return None

    def _preview(
        self,
        rule: JSON,
        pods: list[JSON],
        claims: Mapping[tuple[str, str], JSON],
        published: set[DeviceKey],
        now: datetime,
    ) -> tuple[str, str, str]:
        """The one-time dry run for effect None: what NoExecute would do."""
        parsed = parse_taint_rule(rule)
        selected = sum(1 for key in published if parsed.selects(*key))
        allocated: set[DeviceKey] = set()
        for claim in claims.values():
            allocation = (claim.get("status") or {}).get("allocation") or {}
            for result in (allocation.get("devices") or {}).get("results") or []:
                key = device_key(result)
                if parsed.selects(*key):
                    allocated.add(key)
        would = self._affected(pods, claims, RuleIndex(), {}, now, effect=NO_EXECUTE, only_rule=rule)
        namespaces = len({namespace_of(item.pod) for item in would.values()})
        return "False", "NoEffect", no_effect_message(selected, len(allocated), len(would), namespaces)
