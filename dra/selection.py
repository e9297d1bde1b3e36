"""Which objects a selector picks: DeviceTaintRule device selectors, node selectors, label selectors.

* `DeviceSelector` — a DeviceTaintRule's `spec.deviceSelector`: every field given must equal; an
  empty selector `{}` selects every device, an absent one none (dra-api.md §3.4).
* `NodeSelector` — core/v1 NodeSelector as upstream's `nodeaffinity.NewNodeSelector` reads it:
  terms ORed, requirements in a term ANDed, an empty term matches nothing; `matchFields` knows
  only `metadata.name`. Malformed requirements raise `SelectorError`, as upstream returns an error.
* `LabelSelector` — metav1.LabelSelector (`matchLabels`, `matchExpressions`) and the string form of
  `?labelSelector=` (`a=b,c in (d,e),!f`); both become `Requirement`s with one `matches`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dra import names


class SelectorError(ValueError):
    """A selector that cannot be evaluated (unknown operator, wrong number of values …)."""


# --------------------------------------------------------------------------------- device taint rules


@dataclass(frozen=True, slots=True)
class DeviceSelector:
    """A DeviceTaintRule's device selector; None fields match anything."""

    driver: str | None
    pool: str | None
    device: str | None
    #: False: the rule has no selector and selects no device
    present: bool = True

    def selects(self, driver: str, pool: str, device: str) -> bool:
        return (
            self.present
            and (self.driver is None or self.driver == driver)
            and (self.pool is None or self.pool == pool)
            and (self.device is None or self.device == device)
        )

    @property
    def selects_everything(self) -> bool:
        return self.present and self.driver is None and self.pool is None and self.device is None

    @property
    def mask(self) -> tuple[bool, bool, bool]:
        """Which of driver, pool, device the selector names (the index key of `dra.taints.RuleIndex`)."""
        return (self.driver is not None, self.pool is not None, self.device is not None)


def device_selector(raw: object) -> DeviceSelector:
    """`spec.deviceSelector` of a DeviceTaintRule (None: absent). Empty strings count as not given."""
    if raw is None:
        return DeviceSelector(None, None, None, present=False)
    if not isinstance(raw, Mapping):
        return DeviceSelector(None, None, None, present=False)

    def given(name: str) -> str | None:
        value = raw.get(name)
        return str(value) if value not in (None, "") else None

    return DeviceSelector(given("driver"), given("pool"), given("device"))


def rule_selects(rule: Mapping[str, Any], driver: str, pool: str, device: str) -> bool:
    """Whether the DeviceTaintRule (the whole object, or its spec) selects the device."""
    spec = rule.get("spec") if "spec" in rule else rule
    selector = (spec or {}).get("deviceSelector") if isinstance(spec, Mapping) else None
    return device_selector(selector).selects(driver, pool, device)


# --------------------------------------------------------------------------------- requirements


@dataclass(frozen=True, slots=True)
class Requirement:
    """One label (or field) requirement. `op` is In, NotIn, Exists, DoesNotExist, Gt or Lt."""

    key: str
    op: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.op == "Exists":
            return present
        if self.op == "DoesNotExist":
            return not present
        value = labels.get(self.key)
        if self.op == "In":
            return present and value in self.values
        if self.op == "NotIn":
            return not present or value not in self.values
        if not present or value is None:
            return False
        try:
            number = int(value)
        except ValueError:
            return False
        bound = int(self.values[0])
        return number > bound if self.op == "Gt" else number < bound


def _requirement(key: str, op: str, values: tuple[str, ...], where: str) -> Requirement:
    if op in ("In", "NotIn"):
        if not values:
            raise SelectorError(f"{where}: for 'in', 'notin' operators, values set can't be empty")
    elif op in ("Exists", "DoesNotExist"):
        if values:
            raise SelectorError(f"{where}: values set must be empty for exists and does not exist")
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            raise SelectorError(f"{where}: for 'Gt', 'Lt' operators, exactly one value is required")
        try:
            int(values[0])
        except ValueError:
            raise SelectorError(
                f"{where}: for 'Gt', 'Lt' operators, the value must be an integer: {values[0]!r}"
            ) from None
    else:
        raise SelectorError(f'{where}.operator: Unsupported value: "{op}"')
    return Requirement(key, op, values)


def _as_list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


# --------------------------------------------------------------------------------- node selectors


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    match_expressions: tuple[Requirement, ...]
    #: metadata.name requirements (In / NotIn with exactly one value each)
    match_fields: tuple[Requirement, ...]

    def matches(self, name: str, labels: Mapping[str, str]) -> bool:
        if not self.match_expressions and not self.match_fields:
            return False
        if not all(r.matches(labels) for r in self.match_expressions):
            return False
        fields = {"metadata.name": name}
        return all(r.matches(fields) if r.key in fields else _unknown_field(r) for r in self.match_fields)


def _unknown_field(r: Requirement) -> bool:
    # An unknown field reads as "" in a field set: `In [""]` matches, `NotIn [""]` does not.
    return ("" in r.values) == (r.op == "In")


@dataclass(frozen=True, slots=True)
class NodeSelector:
    terms: tuple[NodeSelectorTerm, ...]
    raw: Mapping[str, Any]

    def matches(self, name: str, labels: Mapping[str, str]) -> bool:
        return any(term.matches(name, labels) for term in self.terms)


def parse_node_selector(raw: object, where: str = "nodeSelector") -> NodeSelector:
    """A core/v1 NodeSelector; `SelectorError` names the requirement that upstream would refuse."""
    if not isinstance(raw, Mapping):
        raise SelectorError(f"{where}: must be an object")
    terms = []
    for i, term in enumerate(_as_list(raw.get("nodeSelectorTerms"))):
        tw = f"{where}.nodeSelectorTerms[{i}]"
        if not isinstance(term, Mapping):
            raise SelectorError(f"{tw}: must be an object")
        expressions = []
        for j, req in enumerate(_as_list(term.get("matchExpressions"))):
            rw = f"{tw}.matchExpressions[{j}]"
            req = req if isinstance(req, Mapping) else {}
            values = tuple(str(v) for v in _as_list(req.get("values")))
            expressions.append(
                _requirement(str(req.get("key", "")), str(req.get("operator", "")), values, rw)
            )
        fields = []
        for j, req in enumerate(_as_list(term.get("matchFields"))):
            rw = f"{tw}.matchFields[{j}]"
            req = req if isinstance(req, Mapping) else {}
            op = str(req.get("operator", ""))
            values = tuple(str(v) for v in _as_list(req.get("values")))
            if op not in ("In", "NotIn"):
                raise SelectorError(
                    f'{rw}.operator: Unsupported value: "{op}": supported values: "In", "NotIn"'
                )
            if len(values) != 1:
                raise SelectorError(f"{rw}.values: Invalid value: {list(values)}: must have one element")
            fields.append(Requirement(str(req.get("key", "")), op, values))
        terms.append(NodeSelectorTerm(tuple(expressions), tuple(fields)))
    return NodeSelector(tuple(terms), raw)


def node_selector_matches(selector: Mapping[str, Any] | None, node: Mapping[str, Any]) -> bool:
    """Whether a NodeSelector (JSON) matches a Node (JSON); None matches every node."""
    if selector is None:
        return True
    meta = node.get("metadata") or {}
    return parse_node_selector(selector).matches(str(meta.get("name", "")), meta.get("labels") or {})


# --------------------------------------------------------------------------------- label selectors


@dataclass(frozen=True, slots=True)
class LabelSelector:
    requirements: tuple[Requirement, ...]
    #: False for an absent (null) selector, which selects nothing
    present: bool = True

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.present and all(r.matches(labels) for r in self.requirements)


_LABEL_OPS = {"In": "In", "NotIn": "NotIn", "Exists": "Exists", "DoesNotExist": "DoesNotExist"}


def label_selector(raw: object, where: str = "selector") -> LabelSelector:
    """metav1.LabelSelector: None selects nothing, `{}` everything (policy/v1 PDB semantics)."""
    if raw is None:
        return LabelSelector((), present=False)
    if not isinstance(raw, Mapping):
        raise SelectorError(f"{where}: must be an object")
    reqs = [
        Requirement(str(k), "In", (str(v),))
        for k, v in sorted((raw.get("matchLabels") or {}).items())
        if isinstance(raw.get("matchLabels"), Mapping)
    ]
    for i, expr in enumerate(_as_list(raw.get("matchExpressions"))):
        expr = expr if isinstance(expr, Mapping) else {}
        op = _LABEL_OPS.get(str(expr.get("operator", "")))
        ew = f"{where}.matchExpressions[{i}]"
        if op is None:
            raise SelectorError(
                f"{ew}.operator: {expr.get('operator')!r} is not a valid label selector operator"
            )
        values = tuple(str(v) for v in _as_list(expr.get("values")))
        reqs.append(_requirement(str(expr.get("key", "")), op, values, ew))
    return LabelSelector(tuple(reqs))


def label_selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    return label_selector(selector).matches(labels)


_SET_RE = re.compile(r"\s*(\S+?)\s+(in|notin)\s*\((.*)\)\s*")
_INTEGER_RE = re.compile(r"-?\d+")


def _go_quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _checked(key: str, op: str, values: tuple[str, ...]) -> Requirement:
    """upstream `NewRequirement`: every problem of one requirement, worded as `labels.Parse` words it."""
    problems: list[str] = []
    key_errors = names.qualified_name_errors(key)
    if key_errors:
        problems.append(f"key: Invalid value: {_go_quote(key)}: {'; '.join(key_errors)}")
    if op in ("In", "NotIn") and not values:
        problems.append(
            "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"
        )
    for i, value in enumerate(values):
        if op in ("Gt", "Lt") and not _INTEGER_RE.fullmatch(value):
            problems.append(
                f"values[{i}]: Invalid value: {_go_quote(value)}: for 'Gt', 'Lt' operators, the value must be an integer"
            )
    for i, value in enumerate(values):
        value_errors = names.label_value_errors(value)
        if value_errors:
            problems.append(
                f"values[{i}][{key}]: Invalid value: {_go_quote(value)}: {'; '.join(value_errors)}"
            )
    if problems:
        # an aggregate of one error reads as that error, of several as a bracketed list
        shown = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
        raise SelectorError(f"unable to parse requirement: {shown}")
    return Requirement(key, op, values)


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def parse_label_selector(text: str) -> LabelSelector:
    """The string form (`?labelSelector=`), in the words a real API server uses for errors."""
    requirements: list[Requirement] = []
    if not text.strip():
        return LabelSelector(())
    for raw in _split_top_level(text):
        part = raw.strip()
        if not part:
            raise SelectorError(f"found '', expected: identifier in {text!r}")
        set_match = _SET_RE.fullmatch(part)
        if set_match:
            key, op, values = set_match.groups()
            items = tuple(v.strip() for v in values.split(",")) if values.strip() else ()
            requirements.append(_checked(key, "In" if op == "in" else "NotIn", items))
            continue
        for token, op in (("!=", "NotIn"), ("==", "In"), ("=", "In"), (">", "Gt"), ("<", "Lt")):
            if token in part:
                key, value = part.split(token, 1)
                requirements.append(_checked(key.strip(), op, (value.strip(),)))
                break
        else:
            if part.startswith("!"):
                requirements.append(_checked(part[1:].strip(), "DoesNotExist", ()))
            else:
                requirements.append(_checked(part, "Exists", ()))
    return LabelSelector(tuple(requirements))
