"""DeviceTaintRules with the devices they select and their EvictionInProgress condition."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from inventory.models import Device, KubeObject
from inventory.selectors.common import JSON, clip


@dataclass
class TaintRuleSummary:
    obj: KubeObject
    name: str
    selector: JSON | None
    taint: JSON
    matched_devices: int
    eviction_condition: JSON | None  # the EvictionInProgress condition, if the controller wrote one


def taint_rule_list() -> list[TaintRuleSummary]:
    """Rules with the number of devices they select: one query, then O(1) per rule.

    A selector names any subset of driver / pool / device, so the devices are counted once per subset
    (8 counters); a rule's count is a lookup in the counter of the fields it names.
    """
    rules = list(KubeObject.objects.filter(kind="devicetaintrules").order_by("name"))
    if not rules:
        return []
    fields = ("driver", "pool", "device")
    masks = [tuple(f for i, f in enumerate(fields) if bits >> i & 1) for bits in range(8)]
    counters: dict[tuple[str, ...], Counter[tuple[str, ...]]] = {m: Counter() for m in masks}
    for driver, pool, name in Device.objects.values_list("driver", "pool", "name"):
        values = {"driver": driver, "pool": pool, "device": name}
        for mask in masks:
            counters[mask][tuple(values[f] for f in mask)] += 1
    summaries = []
    for rule in rules:
        selector = (rule.raw.get("spec") or {}).get("deviceSelector")
        if selector is None:
            matched = 0  # a missing selector selects nothing; an empty one selects everything
        else:
            mask = tuple(f for f in fields if selector.get(f))
            matched = counters[mask][tuple(str(selector[f]) for f in mask)]
        summaries.append(_rule_summary(rule, matched))
    return summaries


def _rule_summary(rule: KubeObject, matched: int) -> TaintRuleSummary:
    spec = rule.raw.get("spec") or {}
    conditions = (rule.raw.get("status") or {}).get("conditions") or []
    eviction = next((c for c in conditions if c.get("type") == "EvictionInProgress"), None)
    if eviction is not None:
        eviction = {**eviction, "message": clip(eviction.get("message"))}
    return TaintRuleSummary(
        obj=rule,
        name=rule.name,
        selector=spec.get("deviceSelector"),
        taint=spec.get("taint") or {},
        matched_devices=matched,
        eviction_condition=eviction,
    )


def taint_rule_detail(*, name: str) -> tuple[TaintRuleSummary, QuerySet[Device]]:
    rule = KubeObject.objects.get(kind="devicetaintrules", name=name)
    devices = rule_devices(spec=rule.raw.get("spec") or {})
    return _rule_summary(rule, devices.count()), devices


def rule_devices(*, spec: Mapping[str, Any]) -> QuerySet[Device]:
    """Devices a DeviceTaintRule spec selects (empty selector = all, missing = none)."""
    selector = spec.get("deviceSelector")
    if selector is None:
        return Device.objects.none()
    q = Q()
    for field_name, column in (("driver", "driver"), ("pool", "pool"), ("device", "name")):
        if selector.get(field_name):
            q &= Q(**{column: selector[field_name]})
    return Device.objects.filter(q).order_by("driver", "pool", "name")
