"""CEL device selectors for the DRA allocator: compile once, evaluate per device.

    engine = default_engine()
    selector = engine.compile('device.attributes["gpu.example.com"].model == "h200"')
    device = device_input_from_api("gpu.example.com", slice_device_json)
    selector.matches(device)   # bool, or CelError on a runtime error

Backed by cel-expr-python (cel-cpp); see engine.py for the environment and cost.py for the cost limit.
"""

from __future__ import annotations

from typing import Protocol

from .cost import COST_LIMIT
from .device import DeviceInput, device_input_from_api
from .engine import MAX_EXPRESSION_BYTES, CelExprEngine, default_engine
from .errors import CelError
from .quantity import Quantity, QuantityError
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
