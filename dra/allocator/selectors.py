"""The seam between the allocator and a CEL engine."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol


class CompiledMatcher(Protocol):
    def matches(self, device: Any) -> bool: ...


class Engine(Protocol):
    def compile(self, expr: str) -> CompiledMatcher: ...


@dataclass(frozen=True)
class SelectorBackend:
    """A CEL engine, how to build its device input, and which exceptions are CEL errors."""

    engine: Engine
    device_input: Callable[[str, Mapping[str, Any]], Any]
    errors: tuple[type[Exception], ...]


def default_backend() -> SelectorBackend:
    """The process-wide CEL backend (`dra.allocator.cel.default_engine()`), imported on first use.

    Which engine that is, cel-expr-python or cel-python, the application decides once at start-up
    with `dra.allocator.cel.set_default_backend` (dradash: the DRADASH_CEL_BACKEND setting).
    """
    from .cel import CelError, default_engine, device_input_from_api

    return SelectorBackend(engine=default_engine(), device_input=device_input_from_api, errors=(CelError,))
