"""CEL device selectors for the DRA allocator: compile once, convert a device once, evaluate many times.

    engine = default_engine()                       # process-wide; LRU cache of 4096 compiled expressions
    selector = engine.compile('device.attributes["gpu.example.com"].model == "h200"')   # CelError if invalid
    device = device_input_from_api("gpu.example.com", slice_device_json)               # once per device
    selector.matches(device)                        # bool, or CelError on a runtime error

* Two backends implement one interface (:class:`CelEngine`): ``cel-expr-python`` (the default, Google's
  cel-cpp) and ``cel-python`` (pure Python, slower; refuses optional types and a few other constructs,
  see ``celpy_syntax.UNSUPPORTED``). ``backend(name)`` is a backend's process-wide engine,
  ``set_default_backend(name)`` picks the one ``default_engine()`` returns (backends.py).
* ``CelError`` covers compile errors and runtime errors (no such key, cost limit exceeded, non-bool
  result); upstream aborts allocation on a runtime error, so should the caller.
* A ``DeviceInput`` caches its converted CEL data (per engine and thread where the engine needs it):
  build one per device and reuse it for every selector. It is safe to share between threads.
* ``engine.compile_value(expr).evaluate(device)`` evaluates non-bool expressions (derived attributes),
  returning Python data (int, bool, str, Semver, Quantity, lists).
* ``new_engine(name, cost_limit=...)`` for a different per-evaluation cost limit; ``selector.estimated_cost``.
* ``Quantity`` and ``Semver`` are usable on their own (capacity arithmetic, version comparisons).

engine.py and celpy_engine.py list each environment and the known differences from upstream; cost.py
documents the cost limit that is enforced (the same estimate on both backends).
"""

from __future__ import annotations

from dra.quantity import Quantity, QuantityError

from .backends import (
    BACKEND_NAMES,
    DEFAULT_BACKEND,
    CelEngine,
    CompiledExpression,
    UnknownBackendError,
    backend,
    default_backend_name,
    default_engine,
    new_engine,
    set_default_backend,
)
from .cost import COST_LIMIT, MAX_EXPRESSION_BYTES
from .device import DeviceInput, device_input_from_api
from .engine import CelExprEngine, CelExprSelector
from .errors import CelError
from .semver import Semver, SemverError

__all__ = [
    "BACKEND_NAMES",
    "COST_LIMIT",
    "DEFAULT_BACKEND",
    "MAX_EXPRESSION_BYTES",
    "CelEngine",
    "CelError",
    "CelExprEngine",
    "CelExprSelector",
    "CompiledExpression",
    "DeviceInput",
    "Quantity",
    "QuantityError",
    "Semver",
    "SemverError",
    "UnknownBackendError",
    "backend",
    "default_backend_name",
    "default_engine",
    "device_input_from_api",
    "new_engine",
    "set_default_backend",
]
