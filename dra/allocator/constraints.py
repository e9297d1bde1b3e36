"""matchAttribute and distinctAttribute constraints (monotonic add, LIFO remove)."""

from __future__ import annotations

from typing import Any

from .model import Attr, Device

Value = frozenset[tuple[str, Any]]
_SCALAR_OF = {"ints": "int", "bools": "bool", "strings": "string", "versions": "version"}


def lookup_attribute(device: Device, name: str, lists: bool) -> Attr | None:
    """Exact fully-qualified name first; else the bare id if the domain is the driver's."""
    attr = device.attributes.get(name)
    if attr is None:
        domain, _, ident = name.partition("/")
        if not ident or domain != device.driver:
            return None
        attr = device.attributes.get(ident)
        if attr is None:
            return None
    if attr[0] in _SCALAR_OF and not lists:
        return None  # list-type attributes do not exist without ListTypeAttributes
    return attr


def _as_set(attr: Attr) -> Value:
    kind, value = attr
    if kind in _SCALAR_OF:
        return frozenset((_SCALAR_OF[kind], v) for v in value)
    return frozenset(((kind, value),))


class MatchAttribute:
    """All devices carry the attribute with the same type and value (lists: a common element)."""

    def __init__(self, attribute: str, lists: bool) -> None:
        self.attribute = attribute
        self.lists = lists
        self._stack: list[Value] = []

    def add(self, device: Device) -> bool:
        attr = lookup_attribute(device, self.attribute, self.lists)
        if attr is None:
            return False
        value = _as_set(attr)
        if self._stack:
            value = value & self._stack[-1]
            if not value:
                return False
        self._stack.append(value)
        return True

    def remove(self) -> None:
        self._stack.pop()


class DistinctAttribute:
    """All devices carry the attribute with pairwise different values (lists: disjoint).

    Deliberate difference from upstream (July-2026 source): upstream records one value per
    *request name*, so two devices of the same request overwrite each other's entry; here
    every device's value counts, which is what the API documentation promises.
    """

    def __init__(self, attribute: str, lists: bool) -> None:
        self.attribute = attribute
        self.lists = lists
        self._values: list[Value] = []

    def add(self, device: Device) -> bool:
        attr = lookup_attribute(device, self.attribute, self.lists)
        if attr is None:
            return False
        value = _as_set(attr)
        for seen in self._values:
            if value & seen:
                return False
        self._values.append(value)
        return True

    def remove(self) -> None:
        self._values.pop()


Constraint = MatchAttribute | DistinctAttribute
