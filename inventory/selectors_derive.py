"""Pure functions that turn the cluster's JSON into what a device row shows (no database access).

Shared by the mirror (which stores the result on Device rows) and the selectors (detail pages).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

KNOWN_EFFECTS = ("None", "NoSchedule", "NoExecute")
TAINT_LEVEL = {"None": 1, "NoSchedule": 2, "NoExecute": 3}
NUMA_ATTRIBUTE = "resource.kubernetes.io/numaNode"
EXTENDED_RESOURCE_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
IMPLICIT_EXTENDED_PREFIX = "deviceclass.resource.kubernetes.io/"

JSON = dict[str, Any]


def effective_effect(effect: str) -> str:
    """Unknown effects are shown as they are but act like None (the API allows future values)."""
    return effect if effect in KNOWN_EFFECTS else "None"


def qualify(driver: str, name: str) -> str:
    return name if "/" in name else f"{driver}/{name}"


def attribute_value(attr: Mapping[str, Any]) -> Any:
    for key in ("string", "int", "bool", "version", "strings", "ints", "bools", "versions"):
        if key in attr:
            return attr[key]
    return None


def attribute_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(attribute_text(v) for v in value)
    return "" if value is None else str(value)


def flat_attributes(driver: str, attributes: Mapping[str, Any]) -> dict[str, str]:
    """Attribute values as text under their qualified name, and under the short name for the driver's domain."""
    flat: dict[str, str] = {}
    for name, attr in attributes.items():
        if not isinstance(attr, Mapping):
            continue
        text = attribute_text(attribute_value(attr))
        qualified = qualify(driver, name)
        flat[qualified] = text
        domain, _, short = qualified.rpartition("/")
        if domain == driver:
            flat[short] = text
    return flat


def numa_node(attributes: Mapping[str, Any]) -> int | None:
    attr = attributes.get(NUMA_ATTRIBUTE)
    if not isinstance(attr, Mapping):
        return None
    value = attribute_value(attr)
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def rule_selects(rule_spec: Mapping[str, Any], driver: str, pool: str, device: str) -> bool:
    """A DeviceTaintRule's selector: empty `{}` selects every device, an absent selector selects none."""
    selector = rule_spec.get("deviceSelector")
    if selector is None:
        return False
    return all(
        not selector.get(field) or selector.get(field) == value
        for field, value in (("driver", driver), ("pool", pool), ("device", device))
    )


def effective_taints(
    *, driver: str, pool: str, device: str, slice_taints: Iterable[Mapping[str, Any]], rules: Iterable[JSON]
) -> list[JSON]:
    """Slice taints, then the taint of every rule that selects the device (rules sorted by name), with provenance."""
    taints: list[JSON] = []
    for taint in slice_taints:
        taints.append(_taint_row(taint, source="slice", rule=""))
    for rule in sorted(rules, key=lambda r: str(r.get("metadata", {}).get("name", ""))):
        spec = rule.get("spec") or {}
        if rule_selects(spec, driver, pool, device) and isinstance(spec.get("taint"), Mapping):
            taints.append(
                _taint_row(spec["taint"], source="rule", rule=str(rule["metadata"].get("name", "")))
            )
    return taints


def _taint_row(taint: Mapping[str, Any], *, source: str, rule: str) -> JSON:
    effect = str(taint.get("effect", ""))
    return {
        "key": str(taint.get("key", "")),
        "value": str(taint.get("value", "") or ""),
        "effect": effect,
        "effectiveEffect": effective_effect(effect),
        "knownEffect": effect in KNOWN_EFFECTS,
        "timeAdded": taint.get("timeAdded") or "",
        "source": source,
        "rule": rule,
    }


def taint_flags(taints: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Denormalised filter columns of a device's effective taints."""
    effects = {str(t["effectiveEffect"]) for t in taints}
    level = max((TAINT_LEVEL[e] for e in effects), default=0)
    return {
        "tainted": bool(effects),
        "taint_none": "None" in effects,
        "taint_no_schedule": "NoSchedule" in effects,
        "taint_no_execute": "NoExecute" in effects,
        "max_taint_effect": {0: "", 1: "None", 2: "NoSchedule", 3: "NoExecute"}[level],
    }


def split_request(request: str) -> tuple[str, str]:
    """`gpu/big` → ("gpu", "big"); `gpu` → ("gpu", "")."""
    main, _, sub = request.partition("/")
    return main, sub


def claim_state(claim: Mapping[str, Any]) -> str:
    status = claim.get("status") or {}
    if status.get("reservedFor"):
        return "reserved"
    if status.get("allocation"):
        return "allocated"
    return "pending"


def is_extended_resource_claim(claim: Mapping[str, Any]) -> bool:
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    return annotations.get(EXTENDED_RESOURCE_ANNOTATION) == "true"


def owner_pod(claim: Mapping[str, Any]) -> str:
    for ref in (claim.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("kind") == "Pod" and ref.get("controller"):
            return str(ref.get("name", ""))
    return ""


def claim_device_classes(claim: Mapping[str, Any]) -> list[str]:
    names: list[str] = []
    for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
        exactly = request.get("exactly")
        subs = [exactly] if exactly else list(request.get("firstAvailable") or [])
        for sub in subs:
            name = (sub or {}).get("deviceClassName")
            if name and name not in names:
                names.append(str(name))
    return names


def extended_resource_names(classes: Iterable[Mapping[str, Any]]) -> tuple[dict[str, list[str]], list[str]]:
    """Which extended resource names each DeviceClass serves, and warnings for conflicts.

    Every class serves its implicit `deviceclass.resource.kubernetes.io/<class>`. When several classes
    declare the same explicit `extendedResourceName`, the most recently created wins; on equal
    timestamps the class name that sorts first wins (upstream's extended-resource cache).
    """
    served: dict[str, list[str]] = {}
    claimants: dict[str, list[tuple[str, str]]] = {}
    for cls in classes:
        name = str(cls["metadata"]["name"])
        served[name] = [IMPLICIT_EXTENDED_PREFIX + name]
        explicit = (cls.get("spec") or {}).get("extendedResourceName")
        if explicit:
            claimants.setdefault(str(explicit), []).append(
                (str(cls["metadata"].get("creationTimestamp", "")), name)
            )
    warnings: list[str] = []
    for resource, contenders in sorted(claimants.items()):
        # Newest first; among equal timestamps the smallest name. RFC 3339 UTC strings sort by time.
        winner = sorted(contenders, key=lambda c: c[1])
        winner = sorted(winner, key=lambda c: _timestamp_key(c[0]), reverse=True)
        served[winner[0][1]].append(resource)
        losers = sorted(n for _, n in winner[1:])
        if losers:
            warnings.append(
                f"extended resource {resource} is declared by {', '.join(sorted(n for _, n in contenders))}; "
                f"{winner[0][1]} wins (newest creationTimestamp, then name), ignored: {', '.join(losers)}"
            )
    return served, warnings


def _timestamp_key(ts: str) -> str:
    # Normalise "+00:00" to "Z" so both spellings order alike.
    return ts.replace("+00:00", "Z")
