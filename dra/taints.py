"""Device taints and tolerations (dra-api.md §3.5, §7.5, §8.2).

* `Toleration.tolerates` — upstream ``ToleratesTaint`` (core/v1 and resource/v1 alike): an empty
  toleration effect matches every effect, an empty key (with Exists) every key, Exists any value,
  Equal (or no operator) an equal value; an unknown operator tolerates nothing.
* effects: None (informational), NoSchedule, NoExecute; unknown effects act like None. Only
  NoSchedule and NoExecute block allocation.
* `effective_taints` — what a device carries: the driver's taints from its ResourceSlice, then one
  taint per DeviceTaintRule that selects it (rules by name), each with its provenance.
* `no_execute_delay` / `eviction_time` — the eviction controller's clock: only tolerations whose
  effect is exactly NoExecute count (an empty effect lets the scheduler allocate but does not delay
  eviction, as upstream); one without ``tolerationSeconds`` tolerates forever, else the smallest
  (negative as 0) is added to the taint's ``timeAdded``.
* `RuleIndex` — DeviceTaintRules indexed by which of driver/pool/device they name, so the rules of
  one device are found in eight dictionary lookups whatever the number of rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import product
from typing import Any

from dra.selection import DeviceSelector, device_selector

NONE = "None"
NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
KNOWN_EFFECTS = (NONE, NO_SCHEDULE, NO_EXECUTE)
BLOCKING_EFFECTS = frozenset({NO_SCHEDULE, NO_EXECUTE})
#: severity for "the worst taint of a device"; unknown effects rank like None
TAINT_LEVEL = {NONE: 1, NO_SCHEDULE: 2, NO_EXECUTE: 3}
#: where a taint comes from
FROM_SLICE = "slice"
FROM_RULE = "rule"


def effective_effect(effect: str) -> str:
    """Unknown effects are kept as they are for display but act like None (the API allows new values)."""
    return effect if effect in KNOWN_EFFECTS else NONE


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str
    time_added: str = ""
    #: FROM_SLICE (the driver) or FROM_RULE
    source: str = FROM_SLICE
    #: the DeviceTaintRule's name when source is FROM_RULE
    rule: str | None = None

    @property
    def blocks(self) -> bool:
        """NoSchedule and NoExecute keep new allocations away unless tolerated."""
        return self.effect in BLOCKING_EFFECTS

    @property
    def origin(self) -> str:
        """ "ResourceSlice" or "DeviceTaintRule <name>", as explanations say it."""
        return f"DeviceTaintRule {self.rule}" if self.source == FROM_RULE else "ResourceSlice"

    def as_row(self) -> dict[str, Any]:
        """The JSON the inventory stores per taint."""
        return {
            "key": self.key,
            "value": self.value,
            "effect": self.effect,
            "effectiveEffect": effective_effect(self.effect),
            "knownEffect": self.effect in KNOWN_EFFECTS,
            "timeAdded": self.time_added,
            "source": self.source,
            "rule": self.rule or "",
        }


def parse_taint(raw: Mapping[str, Any], *, source: str = FROM_SLICE, rule: str | None = None) -> Taint:
    return Taint(
        key=str(raw.get("key") or ""),
        value=str(raw.get("value") or ""),
        effect=str(raw.get("effect") or ""),
        time_added=str(raw.get("timeAdded") or ""),
        source=source,
        rule=rule,
    )


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("Equal", ""):
            return self.value == taint.value
        return False


def parse_toleration(raw: Mapping[str, Any]) -> Toleration:
    seconds = raw.get("tolerationSeconds")
    return Toleration(
        key=str(raw.get("key") or ""),
        operator=str(raw.get("operator") or "Equal"),
        value=str(raw.get("value") or ""),
        effect=str(raw.get("effect") or ""),
        seconds=None if seconds is None or isinstance(seconds, bool) else int(seconds),
    )


def toleration_text(raw: Mapping[str, Any]) -> str:
    """A toleration as operators write it: `key=value:Effect`, `key:Effect` for Exists, `*` for any key or
    effect, and `for Ns` with tolerationSeconds (`example.com/maint=gpu:NoExecute for 60s`)."""
    tol = parse_toleration(raw)
    value = "" if tol.operator == "Exists" else f"={tol.value}"
    text = f"{tol.key or '*'}{value}:{tol.effect or '*'}"
    return text if tol.seconds is None else f"{text} for {tol.seconds}s"


def _as_taint(taint: Taint | Mapping[str, Any]) -> Taint:
    return taint if isinstance(taint, Taint) else parse_taint(taint)


def _as_tolerations(tolerations: Iterable[Toleration | Mapping[str, Any]]) -> list[Toleration]:
    return [t if isinstance(t, Toleration) else parse_toleration(t) for t in tolerations]


def tolerates(toleration: Toleration | Mapping[str, Any], taint: Taint | Mapping[str, Any]) -> bool:
    """`Toleration.tolerates` for JSON (or parsed) arguments."""
    tol = toleration if isinstance(toleration, Toleration) else parse_toleration(toleration)
    return tol.tolerates(_as_taint(taint))


def untolerated(
    taints: Iterable[Taint], tolerations: Iterable[Toleration | Mapping[str, Any]], *, effects: frozenset[str]
) -> list[Taint]:
    """The taints with one of `effects` that no toleration tolerates."""
    tols = _as_tolerations(tolerations)
    return [t for t in taints if t.effect in effects and not any(tol.tolerates(t) for tol in tols)]


def blocking_taint(taints: Iterable[Taint], tolerations: Iterable[Toleration]) -> Taint | None:
    """The first NoSchedule/NoExecute taint the tolerations do not tolerate: it prevents allocation."""
    for taint in taints:
        if taint.effect in BLOCKING_EFFECTS and not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None


def no_execute_delay(
    taint: Taint | Mapping[str, Any], tolerations: Iterable[Toleration | Mapping[str, Any]]
) -> int | None:
    """Seconds from the taint's timeAdded until its NoExecute evicts a user; None: never.

    Not for other effects: the caller asks only about NoExecute taints."""
    t = _as_taint(taint)
    delays: list[int] = []
    for tol in _as_tolerations(tolerations):
        if tol.effect != NO_EXECUTE or not tol.tolerates(t):
            continue
        if tol.seconds is None:
            return None
        delays.append(max(0, tol.seconds))
    return min(delays) if delays else 0


def parse_time(text: object) -> datetime | None:
    """An RFC 3339 timestamp as the API writes it (`Z` or `+00:00`); None if absent or malformed."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def eviction_time(
    taint: Taint | Mapping[str, Any], tolerations: Iterable[Toleration | Mapping[str, Any]], *, now: datetime
) -> datetime | None:
    """When a NoExecute taint evicts a user with these tolerations (None: never); `now` stands in for
    a taint without timeAdded (the API server sets it, so only hand-made objects lack it)."""
    t = _as_taint(taint)
    delay = no_execute_delay(t, tolerations)
    if delay is None:
        return None
    return (parse_time(t.time_added) or now) + timedelta(seconds=delay)


# --------------------------------------------------------------------------------- rules


@dataclass(frozen=True, slots=True)
class TaintRule:
    """A DeviceTaintRule: the one taint it puts on every device its selector selects."""

    name: str
    selector: DeviceSelector
    taint: Taint

    def selects(self, driver: str, pool: str, device: str) -> bool:
        return self.selector.selects(driver, pool, device)


def parse_taint_rule(raw: Mapping[str, Any]) -> TaintRule:
    name = str((raw.get("metadata") or {}).get("name", ""))
    spec = raw.get("spec") or {}
    taint = spec.get("taint")
    return TaintRule(
        name=name,
        selector=device_selector(spec.get("deviceSelector")),
        taint=parse_taint(taint if isinstance(taint, Mapping) else {}, source=FROM_RULE, rule=name),
    )


def _rules(rules: Iterable[TaintRule | Mapping[str, Any]]) -> list[TaintRule]:
    return [r if isinstance(r, TaintRule) else parse_taint_rule(r) for r in rules]


def effective_taints(
    *,
    driver: str,
    pool: str,
    device: str,
    slice_taints: Iterable[Mapping[str, Any]] = (),
    rules: Iterable[TaintRule | Mapping[str, Any]] = (),
) -> list[Taint]:
    """The device's taints: the driver's first (in slice order), then the rules' (by rule name)."""
    taints = [parse_taint(t) for t in slice_taints if isinstance(t, Mapping)]
    selected = [r for r in _rules(rules) if r.selects(driver, pool, device)]
    taints.extend(r.taint for r in sorted(selected, key=lambda r: r.name))
    return taints


MaskKey = tuple[str | None, str | None, str | None]


@dataclass
class RuleIndex:
    """DeviceTaintRules by the fields their selectors name: `rules_for` costs eight lookups."""

    _by_key: dict[MaskKey, dict[str, TaintRule]] = field(default_factory=dict)
    _by_name: dict[str, TaintRule] = field(default_factory=dict)

    @classmethod
    def of(cls, rules: Iterable[TaintRule | Mapping[str, Any]]) -> RuleIndex:
        index = cls()
        for rule in _rules(rules):
            index.add(rule)
        return index

    def __len__(self) -> int:
        return len(self._by_name)

    def __iter__(self) -> Iterator[TaintRule]:
        return iter(self._by_name.values())

    def get(self, name: str) -> TaintRule | None:
        return self._by_name.get(name)

    def add(self, rule: TaintRule) -> None:
        """Add or replace (by name)."""
        self.remove(rule.name)
        self._by_name[rule.name] = rule
        if rule.selector.present:
            s = rule.selector
            self._by_key.setdefault((s.driver, s.pool, s.device), {})[rule.name] = rule

    def remove(self, name: str) -> TaintRule | None:
        rule = self._by_name.pop(name, None)
        if rule is not None and rule.selector.present:
            s = rule.selector
            bucket = self._by_key.get((s.driver, s.pool, s.device))
            if bucket is not None:
                bucket.pop(name, None)
                if not bucket:
                    del self._by_key[(s.driver, s.pool, s.device)]
        return rule

    def rules_for(self, driver: str, pool: str, device: str) -> list[TaintRule]:
        """The rules selecting the device, by name."""
        found: list[TaintRule] = []
        for d, p, n in product((driver, None), (pool, None), (device, None)):
            bucket = self._by_key.get((d, p, n))
            if bucket:
                found.extend(bucket.values())
        found.sort(key=lambda r: r.name)
        return found

    def taints_for(
        self, driver: str, pool: str, device: str, slice_taints: Iterable[Mapping[str, Any]] = ()
    ) -> list[Taint]:
        """`effective_taints` through the index."""
        taints = [parse_taint(t) for t in slice_taints if isinstance(t, Mapping)]
        taints.extend(r.taint for r in self.rules_for(driver, pool, device))
        return taints
