"""matchAttribute and distinctAttribute constraints, with upstream's semantics.

A constraint is asked to `add` each device the search is about to take for a request it
applies to, and to `remove` it again when the search backtracks (every successful add gets
exactly one remove). The first device is always accepted if it has the attribute; later ones
are compared with what the constraint holds:

* without ListTypeAttributes values compare as scalars of one type (a list value never
  matches and is never distinct, except as the first device);
* with it every value is a set (a scalar is a set of one): matchAttribute keeps the
  intersection of the devices' sets and needs it non-empty, distinctAttribute needs the new
  set disjoint from each held one. An empty list is no value at all.

Two upstream details are kept on purpose, because the goal is upstream's answer: the
matchAttribute intersection is not widened again on `remove` (only emptied when the last
device goes), and distinctAttribute holds one value per *request name* — a request's second
device replaces its first one's value, and removing one device forgets the request's value.
"""

from __future__ import annotations

from typing import Any

from .model import Attr, Device

_SCALAR_OF = {"ints": "int", "bools": "bool", "strings": "string", "versions": "version"}
#: (scalar type, values) — a list or scalar attribute as a set
ValueSet = tuple[str, frozenset[Any]]


def find_attribute(device: Device, name: str) -> Attr | None:
    """Upstream ``lookupAttribute``: the fully qualified name, else the bare name if the domain
    is the device's driver."""
    attr = device.attributes.get(name)
    if attr is None:
        domain, _, ident = name.partition("/")
        if not ident or domain != device.driver:
            return None
        attr = device.attributes.get(ident)
    return attr


def lookup_attribute(device: Device, name: str, lists: bool) -> Attr | None:
    """`find_attribute`, but list values only with ListTypeAttributes (what explanations count)."""
    attr = find_attribute(device, name)
    if attr is not None and attr[0] in _SCALAR_OF and not lists:
        return None
    return attr


def as_set(attr: Attr) -> ValueSet | None:
    kind, value = attr
    if kind in _SCALAR_OF:
        return (_SCALAR_OF[kind], frozenset(value)) if value else None
    return (kind, frozenset((value,)))


def _same_scalar(new: Attr, held: Attr) -> bool:
    return new[0] in ("int", "bool", "string", "version") and new == held


class MatchAttribute:
    """All devices carry the attribute with the same value (lists: a common element)."""

    def __init__(self, attribute: str, lists: bool) -> None:
        self.attribute = attribute
        self.lists = lists
        self._count = 0
        self._held: Attr | None = None
        self._intersection: ValueSet | None = None

    def add(self, request: str, device: Device) -> bool:
        attr = find_attribute(device, self.attribute)
        if attr is None:
            return False
        if self.lists:
            values = as_set(attr)
            if values is None:
                return False
            if self._count:
                assert self._intersection is not None
                kind, common = self._intersection
                if kind != values[0] or not common & values[1]:
                    return False
                values = (kind, common & values[1])
            self._intersection = values
        elif not self._count:
            self._held = attr
        else:
            assert self._held is not None
            if not _same_scalar(attr, self._held):
                return False
        self._count += 1
        return True

    def remove(self, request: str, device: Device) -> None:
        self._count -= 1


class DistinctAttribute:
    """All devices carry the attribute with pairwise different values (lists: disjoint sets)."""

    def __init__(self, attribute: str, lists: bool) -> None:
        self.attribute = attribute
        self.lists = lists
        self._count = 0
        #: request name -> the value of its latest device
        self._held: dict[str, Attr] = {}

    def add(self, request: str, device: Device) -> bool:
        attr = find_attribute(device, self.attribute)
        if attr is None:
            return False
        if self._count and not self._distinct(attr):
            return False
        self._held[request] = attr
        self._count += 1
        return True

    def _distinct(self, attr: Attr) -> bool:
        if self.lists:
            values = as_set(attr)
            if values is None:
                return False
            for held in self._held.values():
                other = as_set(held)
                if other is not None and other[0] == values[0] and other[1] & values[1]:
                    return False
            return True
        if attr[0] not in ("int", "bool", "string", "version"):
            return not self._held  # a list value is never distinct from a held value
        return not any(_same_scalar(attr, held) for held in self._held.values())

    def remove(self, request: str, device: Device) -> None:
        self._held.pop(request, None)
        self._count -= 1


Constraint = MatchAttribute | DistinctAttribute
