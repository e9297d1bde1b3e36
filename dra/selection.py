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
    match_labels = raw.get("matchLabels")
    reqs = [
        Requirement(str(k), "In", (str(v),))
        for k, v in sorted(match_labels.items() if isinstance(match_labels, Mapping) else ())
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


_INTEGER_RE = re.compile(r"-?\d+")


def _go_quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _checked(key: str, op: str, values: tuple[str, ...]) -> Requirement:
    """upstream `NewRequirement`: every problem of one requirement, worded as `labels.Parse` words it (the
    parser adds the `unable to parse requirement: ` prefix)."""
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
        raise SelectorError(shown)
    return Requirement(key, op, values)


_TOKENS = {")": "ClosedPar", ",": "Comma", "!": "DoesNotExist", "==": "DoubleEquals", "=": "Equals", ">": "Gt",
           "in": "In", "<": "Lt", "!=": "NotEquals", "notin": "NotIn", "(": "OpenPar"}  # fmt: skip
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_OPERATORS = {"In": "In", "NotIn": "NotIn", "Equals": "In", "DoubleEquals": "In", "NotEquals": "NotIn",
              "Gt": "Gt", "Lt": "Lt"}  # fmt: skip


def _lex(text: str) -> list[tuple[str, str]]:
    """labels.Lexer: identifiers end at whitespace or a special symbol; symbols take the longest known token."""
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _WHITESPACE:
            i += 1
        if i >= n:
            tokens.append(("End", ""))
            return tokens
        if text[i] in _SPECIAL:
            known = ""
            j = i
            while j < n and text[j] in _SPECIAL:
                if text[i : j + 1] in _TOKENS:
                    known = text[i : j + 1]
                elif known:
                    break
                j += 1
            if not known:  # upstream's ErrorToken: no parser state accepts it
                tokens.append(("Error", f"error expected: keyword found '{text[i:j]}'"))
                i = j
                continue
            tokens.append((_TOKENS[known], known))
            i += len(known)
            continue
        j = i
        while j < n and text[j] not in _SPECIAL and text[j] not in _WHITESPACE:
            j += 1
        word = text[i:j]
        tokens.append((_TOKENS.get(word, "Identifier"), word))
        i = j


class _Parser:
    """labels.Parse's recursive descent, with its error wording; `in`/`notin` are identifiers where values go."""

    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.position = 0

    def peek(self, values: bool = True) -> tuple[str, str]:
        kind, literal = self.tokens[self.position]
        return ("Identifier" if values and kind in ("In", "NotIn") else kind), literal

    def take(self, values: bool = True) -> tuple[str, str]:
        token = self.peek(values)
        self.position += 1
        return token

    def selector(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            kind, literal = self.peek()
            if kind == "End":
                return requirements
            if kind not in ("Identifier", "DoesNotExist"):
                raise SelectorError(f"found '{literal}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self.requirement())
            except SelectorError as error:
                raise SelectorError(f"unable to parse requirement: {error}") from None
            kind, literal = self.take()
            if kind == "End":
                return requirements
            if kind != "Comma":
                raise SelectorError(f"found '{literal}', expected: ',' or 'end of string'")
            after, after_literal = self.peek()
            if after not in ("Identifier", "DoesNotExist"):
                raise SelectorError(f"found '{after_literal}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        op = ""
        kind, key = self.take()
        if kind == "DoesNotExist":
            op = "DoesNotExist"
            kind, key = self.take()
        if kind != "Identifier":
            raise SelectorError(f"found '{key}', expected: identifier")
        key_errors = names.qualified_name_errors(key)
        if key_errors:  # the parser's own check has no field path: Go prints a nil *field.Path as <nil>
            raise SelectorError(f"<nil>: Invalid value: {_go_quote(key)}: {'; '.join(key_errors)}")
        if op == "DoesNotExist" or self.peek()[0] in ("End", "Comma"):
            return _checked(key, op or "Exists", ())
        kind, literal = self.take(values=False)
        if kind not in _OPERATORS:
            raise SelectorError(f"found '{literal}', expected: in, notin, =, ==, !=, gt, lt")
        op = _OPERATORS[kind]
        found = self.value_set() if kind in ("In", "NotIn") else self.exact_value()
        return _checked(key, op, tuple(sorted(found)))

    def exact_value(self) -> set[str]:
        if self.peek()[0] in ("End", "Comma"):
            return {""}
        kind, literal = self.take()
        if kind != "Identifier":
            raise SelectorError(f"found '{literal}', expected: identifier")
        return {literal}

    def value_set(self) -> set[str]:
        kind, literal = self.take()
        if kind != "OpenPar":
            raise SelectorError(f"found '{literal}' expected: '('")
        kind, literal = self.peek()
        if kind == "ClosedPar":  # "()" is the set holding the empty value
            self.take()
            return {""}
        if kind not in ("Identifier", "Comma"):
            raise SelectorError(f"found '{literal}', expected: ',', ')' or identifier")
        found = self.identifiers()
        kind, _ = self.take()
        if kind != "ClosedPar":
            raise SelectorError(f"found '{literal}', expected: ')'")
        return found

    def identifiers(self) -> set[str]:
        found: set[str] = set()
        while True:
            kind, literal = self.take()
            if kind == "Identifier":
                found.add(literal)
                after, after_literal = self.peek()
                if after == "ClosedPar":
                    return found
                if after != "Comma":
                    raise SelectorError(f"found '{after_literal}', expected: ',' or ')'")
            elif kind == "Comma":  # "(,", ",)" and ",," stand for the empty value
                if not found:
                    found.add("")
                after, _ = self.peek()
                if after == "ClosedPar":
                    found.add("")
                    return found
                if after == "Comma":
                    self.take()
                    found.add("")
            else:
                raise SelectorError(f"found '{literal}', expected: ',', or identifier")


def parse_label_selector(text: str) -> LabelSelector:
    """The string form (`?labelSelector=`) as labels.Parse reads it, in the words a real API server uses."""
    return LabelSelector(tuple(_Parser(text).selector()))
