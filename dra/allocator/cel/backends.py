"""Which CEL engine evaluates selectors: the registry of backends and the process-wide default.

Two engines implement one interface (:class:`CelEngine`) with the same Kubernetes environment:

* ``cel-expr-python`` (the default): Google's cel-cpp through cel-expr-python (``engine.py``);
* ``cel-python``: the pure-Python ``celpy`` interpreter (``celpy_engine.py``), many times slower (see
  ``bench/RESULTS.md``) and needing no native code; it refuses, at compile time, the constructs listed
  in ``celpy_engine.UNSUPPORTED`` (optional types among them).

``dra`` reads no settings: the application picks the default once at start-up (dradash from
``DRADASH_CEL_BACKEND``, in its AppConfig.ready) with :func:`set_default_backend`. Each backend's
engine is created on first use, so the unused one is never imported.
"""

from __future__ import annotations

import threading
from typing import Protocol

from .cache import DEFAULT_CACHE_SIZE
from .cost import COST_LIMIT
from .device import DeviceInput

BACKEND_NAMES = ("cel-expr-python", "cel-python")
DEFAULT_BACKEND = "cel-expr-python"


class CompiledExpression(Protocol):
    """A compiled selector (``matches``) or value expression (``evaluate``); CelError on runtime errors."""

    @property
    def expression(self) -> str: ...

    @property
    def estimated_cost(self) -> int: ...

    def matches(self, device: DeviceInput) -> bool: ...

    def evaluate(self, device: DeviceInput) -> object: ...


class CelEngine(Protocol):
    """Compiles expressions once (an LRU cache) and evaluates them on ``DeviceInput``s."""

    @property
    def backend(self) -> str: ...

    @property
    def cost_limit(self) -> int: ...

    @property
    def compile_count(self) -> int: ...

    def compile(self, expression: str) -> CompiledExpression: ...

    def compile_value(self, expression: str) -> CompiledExpression: ...

    def cache_info(self) -> tuple[int, int]: ...


class UnknownBackendError(ValueError):
    """A backend name that is not one of BACKEND_NAMES."""


def _checked(name: str) -> str:
    if name not in BACKEND_NAMES:
        raise UnknownBackendError(f"unknown CEL backend {name!r}; choose one of {', '.join(BACKEND_NAMES)}")
    return name


def new_engine(name: str, *, cache_size: int = DEFAULT_CACHE_SIZE, cost_limit: int = COST_LIMIT) -> CelEngine:
    """A fresh engine of a backend, with its own cache (tests, benchmarks, a different cost limit)."""
    if _checked(name) == "cel-python":
        from .celpy_engine import CelPythonEngine

        return CelPythonEngine(cache_size=cache_size, cost_limit=cost_limit)
    from .engine import CelExprEngine

    return CelExprEngine(cache_size=cache_size, cost_limit=cost_limit)


_engines: dict[str, CelEngine] = {}
_default_name = DEFAULT_BACKEND
_lock = threading.Lock()


def backend(name: str) -> CelEngine:
    """The process-wide engine of a backend (one environment, one compile cache), created on first use."""
    with _lock:
        engine = _engines.get(name)
        if engine is None:
            engine = _engines[name] = new_engine(name)
        return engine


def set_default_backend(name: str) -> None:
    """Choose the backend ``default_engine()`` (and so the allocator) uses; once, at start-up."""
    global _default_name
    _default_name = _checked(name)


def default_backend_name() -> str:
    return _default_name


def default_engine() -> CelEngine:
    """The process-wide engine of the default backend."""
    return backend(_default_name)
