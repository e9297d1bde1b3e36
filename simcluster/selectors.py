"""Label and field selectors as the list and watch verbs accept them.

Label selectors are `dra.selection`'s (the one parser and matcher); field selectors, which only an API
server answers, are read here against the kind's `field_labels`. Parsing raises `SelectorError` with a
message in the words a real server uses; the HTTP layer turns it into a 400 BadRequest.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from dra.selection import SelectorError, parse_label_selector
from simcluster.resources import ResourceDef

__all__ = ["Matcher", "SelectorError", "combine", "field_matcher", "field_requirements", "label_matcher"]

Matcher = Callable[[dict[str, Any]], bool]


def label_matcher(text: str | None) -> Matcher | None:
    """`?labelSelector=` as `dra.selection` reads it; None when it selects everything."""
    if not text:
        return None
    selector = parse_label_selector(text)
    if not selector.requirements:
        return None

    def match(obj: dict[str, Any]) -> bool:
        return selector.matches((obj.get("metadata") or {}).get("labels") or {})

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


def field_requirements(text: str) -> list[tuple[str, str, str]]:
    """`?fieldSelector=` as (field, "=" or "!=", value) terms, whatever the kind (fields.ParseSelector)."""
    terms: list[tuple[str, str, str]] = []
    if not text.strip():
        return terms
    for raw in _split_escaped(text, ","):
        part = raw.strip()
        for token, op in (("!=", "!="), ("==", "="), ("=", "=")):
            idx = part.find(token)
            if idx > 0:
                terms.append((part[:idx].strip(), op, _unescape(part[idx + len(token) :].strip())))
                break
        else:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
    return terms


def parse_field_selector(text: str, resource: ResourceDef) -> list[tuple[str, str, str]]:
    terms = field_requirements(text)
    for label, _, _ in terms:
        if not resource.supports_field(label):
            raise SelectorError(resource.unsupported_field_label(label))
    return terms


def _pod_ip(obj: dict[str, Any]) -> str:
    ips = (obj.get("status") or {}).get("podIPs") or []
    return str(ips[0].get("ip", "")) if ips and isinstance(ips[0], dict) else ""


def _flag(obj: dict[str, Any], section: str, name: str) -> str:
    """A Go bool as strconv.FormatBool writes it: an unset field is "false"."""
    return "true" if (obj.get(section) or {}).get(name) is True else "false"


def _count(obj: dict[str, Any], name: str) -> str:
    """A Go int32 as strconv.Itoa writes it: an unset count is "0"."""
    value = (obj.get("status") or {}).get(name)
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "0"


#: Fields whose selectable value is not the field's own text, per (group, plural). Pods: the registry's set
#: has the first pod IP, hostNetwork as "false" when unset, and nothing for status.podIPs (its conversion
#: takes it, the set lacks it); spec.host is the old name of spec.nodeName. Nodes: an uncordoned node (no
#: spec.unschedulable) selects as "false". Jobs: status.successful is the count of succeeded pods, "0" when
#: none; ReplicationControllers: status.replicas, likewise.
_DERIVED_FIELDS: dict[tuple[str, str], dict[str, Callable[[dict[str, Any]], str]]] = {
    ("", "pods"): {
        "status.podIP": _pod_ip,
        "status.podIPs": lambda obj: "",
        "spec.hostNetwork": lambda obj: _flag(obj, "spec", "hostNetwork"),
        "spec.host": lambda obj: field_value(obj, "spec.nodeName"),
    },
    ("", "nodes"): {"spec.unschedulable": lambda obj: _flag(obj, "spec", "unschedulable")},
    ("batch", "jobs"): {"status.successful": lambda obj: _count(obj, "succeeded")},
    ("", "replicationcontrollers"): {"status.replicas": lambda obj: _count(obj, "replicas")},
}


def field_matcher(text: str | None, resource: ResourceDef) -> Matcher | None:
    if not text:
        return None
    terms = parse_field_selector(text, resource)
    if not terms:
        return None
    derived = _DERIVED_FIELDS.get((resource.group, resource.plural), {})

    def match(obj: dict[str, Any]) -> bool:
        for label, op, value in terms:
            actual = derived[label](obj) if label in derived else field_value(obj, label)
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
