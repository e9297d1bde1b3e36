"""Selector results shared by devices that look the same to the expression, and by allocators.

A CEL selector's result is a function of the expression and of what it reads of its input. When every
use of ``device`` in the expression is one of

* ``device.driver``, ``device.allowMultipleAllocations``,
* ``device.attributes["<domain>"].<name>``, ``device.capacity["<domain>"].<name>``,

the result (``True``/``False``, or the CEL runtime error) depends only on those values of the device's
converted input (`cel.device.DeviceInput`, what CEL sees), so devices that agree on them — a node's
GPUs differ in UUID, not in model — share one evaluation. Any other use (``device.attributes`` as a
whole, a method or macro on a domain's map such as ``device.attributes["d"].exists(…)``, a macro
binding a variable named ``device``, ``has(device.attributes["d"])``, a quoted domain with an escape) makes the expression not memoised: every device is evaluated, as before.

The memo only replaces the evaluation: the device is still converted (`Allocator._device_input`), so
a device whose conversion fails still fails the same way. One `SelectorMemo` may serve many
allocators (the mirror: every pool of a batch) as long as they use the same CEL engine; a memo met
with another engine is not used. Like an `Allocator`, one memo per thread.
"""

from __future__ import annotations

import re
from typing import Any

# A name followed by "(" is a method or macro on what precedes it (`device.attributes["d"].exists(…)`
# reads the whole domain), not a field: not a plain path.
_REF = re.compile(
    r"""\bdevice\.(?:(driver|allowMultipleAllocations)|(attributes|capacity)\["([^"\\]+)"\]\.(\w+))\b(?!\s*\()"""
)
_BARE = re.compile(r"\bdevice\b")
_MISSING_DOMAIN = ("missing-domain",)
_MISSING = ("missing",)
_UNKNOWN: Any = object()

Ref = tuple[str, str, str]
#: a cached evaluation: the result, or the CEL error the evaluation raised
Outcome = bool | Exception


def device_refs(expression: str) -> tuple[Ref, ...] | None:
    """What the expression reads of ``device`` ((field, domain, name); domain and name empty for the
    plain fields), or None when it may read more than these paths."""
    refs: dict[Ref, None] = {}
    for match in _REF.finditer(expression):
        plain, indexed, domain, name = match.groups()
        refs[(plain, "", "") if plain else (indexed, domain, name)] = None
    if _BARE.search(_REF.sub(" ", expression)):
        return None  # `device` used some other way
    return tuple(refs)


def _value_key(value: Any) -> Any:
    """A hashable key equal for two values exactly when CEL sees the same data (1 and True differ)."""
    from .cel.device import to_cel_value

    data = to_cel_value(value)
    if isinstance(data, list):
        return ("list", tuple(_value_key(v) for v in value))
    return (type(data).__name__, data)


class SelectorMemo:
    """Expression → (what it reads of the device) → outcome; bounded by `limit` entries."""

    def __init__(self, limit: int = 50_000) -> None:
        self.limit = limit
        self.engine: Any = None
        self._refs: dict[str, tuple[Ref, ...] | None] = {}
        self._outcomes: dict[tuple[Any, ...], Outcome] = {}
        self.evaluations = 0  # misses, for tests and profiles

    def key(self, engine: Any, expression: str, inp: Any) -> tuple[Any, ...] | None:
        """The memo key of evaluating `expression` on the converted device `inp`, or None (evaluate)."""
        from .cel.device import DeviceInput

        if self.engine is None:
            self.engine = engine
        elif self.engine is not engine:
            return None
        if type(inp) is not DeviceInput:
            return None
        refs = self._refs.get(expression, _UNKNOWN)
        if refs is _UNKNOWN:
            refs = self._refs[expression] = device_refs(expression)
        if refs is None:
            return None
        parts: list[Any] = [expression]
        for field, domain, name in refs:
            if field == "driver":
                parts.append(inp.driver)
            elif field == "allowMultipleAllocations":
                parts.append(inp.allow_multiple_allocations)
            else:
                values = (inp.attributes if field == "attributes" else inp.capacity).get(domain)
                if values is None:
                    parts.append(_MISSING_DOMAIN)
                elif name not in values:
                    parts.append(_MISSING)
                else:
                    parts.append(_value_key(values[name]))
        return tuple(parts)

    def get(self, key: tuple[Any, ...]) -> Outcome | None:
        return self._outcomes.get(key)

    def store(self, key: tuple[Any, ...], outcome: Outcome) -> None:
        self.evaluations += 1
        if len(self._outcomes) >= self.limit:
            self._outcomes.clear()
        self._outcomes[key] = outcome
