"""What a what-if kind is, and the registry of kinds.

A kind is one module in `allocation/whatif/kinds/` that calls `register(WhatIfKind(...))`, and one
template that renders its form (`part == "form"`) and its answer (`part == "result"`). The API, the
pages, the worker and the run model know kinds only through this registry, so adding a kind touches
nothing else. `AllocationConfig.ready()` imports every module of the kinds package.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from allocation.snapshot import Obj, Snapshot


class WhatIfInputError(ValueError):
    """Bad what-if input; names the field and the rule it broke."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class WhatIfLimitError(WhatIfInputError):
    """The user already has as many runs going as one user may (HTTP 429, not 400)."""


class Progress(Protocol):
    """Called between steps; raises to stop the run (cancelled or out of time)."""

    def __call__(self, phase: str, done: int, total: int) -> None: ...


def no_progress(phase: str, done: int, total: int) -> None:
    """A Progress for direct calls (maintenance preview, tests)."""


@dataclass(frozen=True)
class Budget:
    """How much one run may spend, enforced inside the allocator's search (not only between nodes).

    `deadline` is a `monotonic()` value; `max_search_steps` bounds each allocation attempt (one node),
    like upstream's per-node filter timeout. None: no bound.
    """

    deadline: float | None = None
    max_search_steps: int | None = None
    monotonic: Callable[[], float] = time.monotonic

    def allocator_options(self) -> dict[str, Any]:
        return {
            "deadline": self.deadline,
            "max_search_steps": self.max_search_steps,
            "monotonic": self.monotonic,
        }


@dataclass(frozen=True)
class Context:
    """What an answer is computed against."""

    snapshot: Snapshot
    now: datetime
    progress: Progress = no_progress
    budget: Budget = field(default_factory=Budget)


class Lookup(Protocol):
    """The inventory as submit-time validation sees it: one object at a time, no full snapshot."""

    def find(self, kind: str, namespace: str, name: str) -> Obj | None:
        """The object of `kind` (a Kubernetes kind name such as "DeviceClass") or None."""
        ...


@dataclass(frozen=True)
class WhatIfKind:
    """One kind of what-if question.

    `normalize(raw, lookup)` validates the input at submit time (every rule the worker would otherwise
    trip over: CEL compiled, classes and referenced objects resolved, types and limits) and returns the
    canonical input stored on the run, or raises `WhatIfInputError` naming the field.
    `answer(input, context)` computes the JSON result in the worker.
    `form_input(post)` turns the kind's form fields into the raw input `normalize` takes.
    `template` renders the form (context `part="form"`) and the result (`part="result"`, `r` = result).
    """

    name: str
    label: str
    template: str
    normalize: Callable[[Mapping[str, Any], Lookup], dict[str, Any]]
    answer: Callable[[dict[str, Any], Context], dict[str, Any]]
    form_input: Callable[[Mapping[str, Any]], dict[str, Any]]
    #: one line for the API schema: what the input looks like
    input_help: str = ""
    #: where the form appears on the what-if page (lower first)
    order: int = 100


_registry: dict[str, WhatIfKind] = {}


def register(kind: WhatIfKind) -> WhatIfKind:
    """Add `kind` (its name must be new: two modules claiming one name is a bug)."""
    if kind.name in _registry and _registry[kind.name] is not kind:
        raise ValueError(f"what-if kind {kind.name!r} is registered twice")
    _registry[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Remove a kind (tests that register one of their own)."""
    _registry.pop(name, None)


def kinds() -> list[WhatIfKind]:
    """Every registered kind, in page order."""
    return sorted(_registry.values(), key=lambda k: (k.order, k.name))


def kind_names() -> list[str]:
    return [k.name for k in kinds()]


def get_kind(name: object) -> WhatIfKind:
    """The kind called `name`, or `WhatIfInputError` on the field `kind` listing the known ones."""
    kind = _registry.get(name) if isinstance(name, str) else None
    if kind is None:
        raise WhatIfInputError("kind", f"must be one of {', '.join(kind_names())}, got {name!r}")
    return kind


def kind_label(name: str) -> str:
    """The label of kind `name`; the bare name for a kind no module registers any more (old runs)."""
    kind = _registry.get(name)
    return kind.label if kind is not None else name
