"""Label and field selectors as the list and watch verbs accept them.

Parsing raises `SelectorError` with a message in the words a real server uses; the HTTP layer turns it
into a 400 BadRequest.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from simcluster.resources import ResourceDef

_KEY_RE = re.compile(
    r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


class SelectorError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!", "gt", "lt"
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        if self.op in ("=", "in"):
            return present and value in self.values
        if self.op in ("!=", "notin"):
            return not present or value not in self.values
        if not present or value is None:
            return False
        try:
            number = int(value)
        except ValueError:
            return False
        bound = int(self.values[0])
        return number > bound if self.op == "gt" else number < bound


Matcher = Callable[[dict[str, Any]], bool]


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


def _check_key(key: str) -> str:
    if not key or not _KEY_RE.match(key) or len(key.rsplit("/", 1)[-1]) > 63:
        raise SelectorError(
            f"unable to parse requirement: values[0][key]: Invalid value: {key!r}: name part must consist of "
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
        )
    return key


def _check_value(value: str) -> str:
    if len(value) > 63 or not _VALUE_RE.match(value):
        raise SelectorError(
            f"unable to parse requirement: values[0][value]: Invalid value: {value!r}: a valid label must be "
            "an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character"
        )
    return value


_SET_RE = re.compile(r"^\s*(\S+?)\s+(in|notin)\s*\((.*)\)\s*$")


def parse_label_selector(text: str) -> list[Requirement]:
    requirements: list[Requirement] = []
    if not text.strip():
        return requirements
    for raw in _split_top_level(text):
        part = raw.strip()
        if not part:
            raise SelectorError(f"found '', expected: identifier in {text!r}")
        set_match = _SET_RE.match(part)
        if set_match:
            key, op, values = set_match.groups()
            items = tuple(_check_value(v.strip()) for v in values.split(",")) if values.strip() else ()
            if not items:
                raise SelectorError(f"for '{op}', 'notin' operators, values set can't be empty")
            requirements.append(Requirement(_check_key(key), op, items))
            continue
        for token, op in (("!=", "!="), ("==", "="), ("=", "="), (">", "gt"), ("<", "lt")):
            if token in part:
                key, value = part.split(token, 1)
                value = value.strip()
                if op in ("gt", "lt") and not re.fullmatch(r"-?\d+", value):
                    raise SelectorError(
                        f"unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer: {value!r}"
                    )
                requirements.append(Requirement(_check_key(key.strip()), op, (_check_value(value),)))
                break
        else:
            if part.startswith("!"):
                requirements.append(Requirement(_check_key(part[1:].strip()), "!"))
            else:
                requirements.append(Requirement(_check_key(part), "exists"))
    return requirements


def label_matcher(text: str | None) -> Matcher | None:
    if not text:
        return None
    requirements = parse_label_selector(text)
    if not requirements:
        return None

    def match(obj: dict[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(r.matches(labels) for r in requirements)

    return match


def _split_escaped(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for ch in text:
        if escaped:
            current.append("\\" + ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def field_value(obj: dict[str, Any], label: str) -> str:
    """The string a field selector compares against; missing fields compare as ""."""
    node: Any = obj
    for part in label.split("."):
        if not isinstance(node, dict):
            return ""
        node = node.get(part)
        if node is None:
            return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    if isinstance(node, dict):
        if label == "source":  # events: source.component
            return str(node.get("component", ""))
        return ""
    return str(node)


def parse_field_selector(text: str, resource: ResourceDef) -> list[tuple[str, str, str]]:
    terms: list[tuple[str, str, str]] = []
    if not text.strip():
        return terms
    for raw in _split_escaped(text, ","):
        part = raw.strip()
        for token, token_op in (("!=", "!="), ("==", "="), ("=", "=")):
            idx = part.find(token)
            if idx > 0:
                label = part[:idx].strip()
                value = _unescape(part[idx + len(token) :].strip())
                op = token_op
                break
        else:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        if not resource.supports_field(label):
            raise SelectorError(f"field label not supported: {label}")
        terms.append((label, op, value))
    return terms


def field_matcher(text: str | None, resource: ResourceDef) -> Matcher | None:
    if not text:
        return None
    terms = parse_field_selector(text, resource)
    if not terms:
        return None

    def match(obj: dict[str, Any]) -> bool:
        for label, op, value in terms:
            actual = field_value(obj, label)
            if (actual == value) != (op == "="):
                return False
        return True

    return match


def combine(*matchers: Matcher | None) -> Matcher | None:
    active = [m for m in matchers if m is not None]
    if not active:
        return None
    if len(active) == 1:
        return active[0]
    return lambda obj: all(m(obj) for m in active)
