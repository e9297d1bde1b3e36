"""Compile an operator's device selection into name-based DeviceTaintRules.

The API selects devices only by driver, pool and device name, so a selection made with any inventory
filter becomes: one rule per pool where every device of the pool is chosen, one rule per device
otherwise. Names and labels are predictable so a maintenance's rules can be found and undone together.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

LABEL_PREFIX = "dradash.io"
LABEL_MAINTENANCE = f"{LABEL_PREFIX}/maintenance"
LABEL_AUTHOR = f"{LABEL_PREFIX}/author"
LABEL_MANAGED = f"{LABEL_PREFIX}/managed-by"
ANNOTATION_REASON = f"{LABEL_PREFIX}/reason"
ANNOTATION_TICKET = f"{LABEL_PREFIX}/ticket"
ANNOTATION_AUTHOR = f"{LABEL_PREFIX}/author"


@dataclass(frozen=True, order=True)
class DeviceRef:
    driver: str
    pool: str
    device: str


@dataclass(frozen=True)
class RulePlan:
    name: str
    selector: dict[str, str]
    devices: tuple[DeviceRef, ...]


def _slug(text: str, *, limit: int) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:limit].strip("-") or "x"


def _label_value(text: str) -> str:
    value = re.sub(r"[^A-Za-z0-9_.-]+", "-", text)[:63].strip("-_.")
    return value


def rule_name(maintenance_id: str, selector: Mapping[str, str]) -> str:
    """`dradash-<maintenance>-<pool>[-<device>]-<hash>`: readable, unique, a valid DNS subdomain."""
    key = "/".join(selector.get(k, "") for k in ("driver", "pool", "device"))
    digest = hashlib.sha1(key.encode()).hexdigest()[:6]
    parts = [f"dradash-{_slug(maintenance_id, limit=24)}", _slug(selector.get("pool", "all"), limit=60)]
    if selector.get("device"):
        parts.append(_slug(selector["device"], limit=60))
    parts.append(digest)
    return "-".join(parts)[:253]


def plan_rules(
    *,
    maintenance_id: str,
    selected: Iterable[DeviceRef],
    pool_devices: Mapping[tuple[str, str], Iterable[str]],
) -> list[RulePlan]:
    """One rule per fully-selected pool, one per device otherwise. `pool_devices` lists every device
    of each (driver, pool) the selection touches, as the inventory currently has it."""
    chosen: dict[tuple[str, str], set[str]] = defaultdict(set)
    for ref in selected:
        chosen[(ref.driver, ref.pool)].add(ref.device)
    plans: list[RulePlan] = []
    for (driver, pool), devices in sorted(chosen.items()):
        everything = set(pool_devices.get((driver, pool), ()))
        if everything and devices >= everything:
            selector = {"driver": driver, "pool": pool}
            refs = tuple(sorted(DeviceRef(driver, pool, d) for d in everything))
            plans.append(RulePlan(rule_name(maintenance_id, selector), selector, refs))
            continue
        for device in sorted(devices):
            selector = {"driver": driver, "pool": pool, "device": device}
            plans.append(
                RulePlan(rule_name(maintenance_id, selector), selector, (DeviceRef(driver, pool, device),))
            )
    return plans


def rule_object(
    plan: RulePlan,
    *,
    maintenance_id: str,
    author: str,
    reason: str,
    ticket: str,
    key: str,
    value: str,
    effect: str,
) -> dict[str, Any]:
    """The DeviceTaintRule as it will be applied."""
    taint: dict[str, str] = {"key": key, "effect": effect}
    if value:
        taint["value"] = value
    annotations = {ANNOTATION_AUTHOR: author, ANNOTATION_REASON: reason}
    if ticket:
        annotations[ANNOTATION_TICKET] = ticket
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {
            "name": plan.name,
            "labels": {
                LABEL_MAINTENANCE: _label_value(maintenance_id),
                LABEL_AUTHOR: _label_value(author),
                LABEL_MANAGED: "dradash",
            },
            "annotations": annotations,
        },
        "spec": {"deviceSelector": dict(plan.selector), "taint": taint},
    }
