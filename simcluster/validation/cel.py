"""CEL device selectors: present, at most 10 KiB, and compiling within the cost limit.

Compilation uses the allocator's engine, so the pretend cluster refuses what the scheduler cannot run;
without it only a light syntax check is made.
"""

from __future__ import annotations

import functools
from typing import Any, Final

from simcluster.schema import Causes, child
from simcluster.validation.shared import as_map, entries

CEL_MAX_LEN: Final = 10 * 1024


def check_selectors(causes: Causes, path: str, selectors: Any, stored: frozenset[str] = frozenset()) -> None:
    """CEL selectors: present, ≤ 10 KiB, and compiling; expressions already ``stored`` are not recompiled."""
    for entry, selector in entries(causes, path, selectors, 32):
        cel = as_map(selector).get("cel")
        if not isinstance(cel, dict):
            causes.required(child(entry, "cel"))
            continue
        expression = cel.get("expression")
        expr_path = child(child(entry, "cel"), "expression")
        if not expression:
            causes.required(expr_path)
        elif isinstance(expression, str):
            if len(expression.encode()) > CEL_MAX_LEN:
                causes.too_long(expr_path, CEL_MAX_LEN)
            elif expression not in stored:
                problem = cel_problem(expression)
                if problem == COST_EXCEEDED:
                    causes.forbidden(expr_path, problem)
                elif problem:
                    causes.invalid(expr_path, expression, problem)


def selector_expressions(spec: Any, *paths: tuple[str, ...]) -> frozenset[str]:
    """The CEL expressions found under ``spec`` at the given key paths (lists are walked)."""
    found: set[str] = set()

    def walk(node: Any, rest: tuple[str, ...]) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, rest)
        elif isinstance(node, dict):
            if not rest:
                expression = as_map(node.get("cel")).get("expression")
                if isinstance(expression, str):
                    found.add(expression)
            else:
                walk(node.get(rest[0]), rest[1:])

    for path in paths:
        walk(spec, path)
    return frozenset(found)


@functools.cache
def _cel_engine() -> Any:
    """The allocator's CEL engine (cel-cpp), so the pretend cluster refuses what the scheduler cannot run."""
    try:
        from dra.allocator.cel import default_engine
    except Exception:  # noqa: BLE001 - without a working allocator the simulator still runs: syntax check only
        return None
    return default_engine()


CEL_COST_LIMIT: Final = 1_000_000
COST_EXCEEDED: Final = "too complex, exceeds cost limit"


def cel_problem(expression: str) -> str | None:
    engine = _cel_engine()
    if engine is None:
        problem = cel_syntax_problem(expression)
        return None if problem is None else f"compilation failed: {problem}"
    try:
        compiled = engine.compile(expression)
    except Exception as error:  # CelError; the engine module may not be importable for typing
        return str(error)
    cost = getattr(compiled, "estimated_cost", 0)
    if isinstance(cost, int) and cost > CEL_COST_LIMIT:
        return COST_EXCEEDED
    return None


def cel_syntax_problem(expression: str) -> str | None:
    """A light syntax check (balanced brackets, closed strings) for when the CEL engine is unavailable."""
    stack: list[str] = []
    pairs = {")": "(", "]": "[", "}": "{"}
    quote: str | None = None
    escaped = False
    for char in expression:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
            continue
        if char in "\"'":
            quote = char
        elif char in "([{":
            stack.append(char)
        elif char in ")]}" and (not stack or stack.pop() != pairs[char]):
            return f"unexpected {char!r}"
    if quote:
        return "unterminated string literal"
    if stack:
        return f"unclosed {stack[-1]!r}"
    if not expression.strip():
        return "empty expression"
    return None
