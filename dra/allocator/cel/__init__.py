"""CEL device selectors for the DRA allocator: compile once, convert a device once, evaluate many times.

    engine = default_engine()                       # process-wide; LRU cache of 4096 compiled expressions
    selector = engine.compile('device.attributes["gpu.example.com"].model == "h200"')   # CelError if invalid
    device = device_input_from_api("gpu.example.com", slice_device_json)               # once per device
    selector.matches(device)                        # bool, or CelError on a runtime error

* ``CelError`` covers compile errors and runtime errors (no such key, cost limit exceeded, non-bool
  result); upstream aborts allocation on a runtime error, so should the caller.
* A ``DeviceInput`` caches its converted CEL activation (per engine and thread): build one per device
  and reuse it for every selector. It is safe to share between threads.
* ``engine.compile_value(expr).evaluate(device)`` evaluates non-bool expressions (derived attributes),
  returning Python data (int, bool, str, Semver, Quantity, lists).
* ``CelExprEngine(cost_limit=...)`` for a different per-evaluation cost limit; ``selector.estimated_cost``.
* ``Quantity`` and ``Semver`` are usable on their own (capacity arithmetic, version comparisons).

Backed by cel-expr-python 0.1.3 (Google's cel-cpp). engine.py lists the environment and the known
differences from upstream; cost.py documents the cost limit that is enforced.
"""

from __future__ import annotations

from typing import Protocol

from dra.quantity import Quantity, QuantityError

from .cost import COST_LIMIT
from .device import DeviceInput, device_input_from_api
from .engine import MAX_EXPRESSION_BYTES, CelExprEngine, CelExprSelector, default_engine
from .errors import CelError
from .semver import Semver, SemverError


class CompiledSelector(Protocol):
    expression: str

    def matches(self, device: DeviceInput) -> bool: ...


class SelectorEngine(Protocol):
    def compile(self, expression: str) -> CompiledSelector: ...


__all__ = [
    "COST_LIMIT",
    "MAX_EXPRESSION_BYTES",
    "CelError",
    "CelExprEngine",
    "CelExprSelector",
    "CompiledSelector",
    "DeviceInput",
    "Quantity",
    "QuantityError",
    "SelectorEngine",
    "Semver",
    "SemverError",
    "default_engine",
    "device_input_from_api",
]
