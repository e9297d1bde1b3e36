"""CEL device selectors: present, at most 10 KiB, and compiling within the cost limit.

Compilation uses the allocator's engine, so the pretend cluster refuses what the scheduler cannot run;
without it only a light syntax check is made. The engine declares everything the scheduler's environment
has ("StoredExpressions"); a new expression is checked in the narrower environment of the gates that are
on ("NewExpressions"): with DRAListTypeAttributes off (alpha, the 1.37 default) ``includes`` is an
undeclared reference, with DRAConsumableCapacity off ``device.allowMultipleAllocations`` an undefined field,
while expressions already stored keep working.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final

from simcluster.schema import Causes, child
from simcluster.validation.shared import as_map, entries, gate_on

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
                problem = cel_problem(expression) or gated_problem(expression)
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


def cel_problem(expression: str, *, value: bool = False) -> str | None:
    """Why the expression cannot be stored, or None; ``value`` for derived attributes, whose result
    is an attribute value rather than a bool."""
    engine = _cel_engine()
    if engine is None:
        problem = cel_syntax_problem(expression)
        return None if problem is None else f"compilation failed: {problem}"
    try:
        compiled = engine.compile_value(expression) if value else engine.compile(expression)
    except Exception as error:  # CelError; the engine module may not be importable for typing
        return str(error)
    cost = getattr(compiled, "estimated_cost", 0)
    if isinstance(cost, int) and cost > CEL_COST_LIMIT:
        return COST_EXCEEDED
    return None


#: functions a new expression may only call with their feature gate on (cel-go's VersionedOptions.FeatureEnabled)
GATED_FUNCTIONS: Final = {"includes": "ListTypeAttributes"}
#: fields of ``device`` a new expression may only read with their feature gate on (compile.go declares a
#: device type per gate combination for new expressions)
GATED_FIELDS: Final = {"allowMultipleAllocations": "ConsumableCapacity"}

#: an identifier, or a number (which may run into letters: 1e3, 0xff, 1u)
_WORD = re.compile(r"[_a-zA-Z0-9]+")
_STRING_START = re.compile(r"([rR][bB]?|[bB][rR]?|)(\'\'\'|\"\"\"|'|\")")


def gated_problem(expression: str) -> str | None:
    """Why a new expression that compiles in the scheduler's environment does not compile in the API
    server's environment for new expressions (a gated function called, or a gated field of ``device``
    read, with its gate off), in cel-go's words, in order of place."""
    errors = [
        (offset, f"undeclared reference to '{name}' (in container '')")
        for name, offset in _calls(expression)
        if name in GATED_FUNCTIONS and not gate_on(GATED_FUNCTIONS[name])
    ] + [
        (offset, f"undefined field '{name}'")
        for name, offset in _device_fields(expression)
        if name in GATED_FIELDS and not gate_on(GATED_FIELDS[name])
    ]
    shown = [_compile_error(expression, offset, message) for offset, message in sorted(errors)]
    return "compilation failed: " + "\n".join(shown) if shown else None


def _tokens(expression: str) -> list[tuple[str, int]]:
    """Words (names, numbers) and other characters with their offsets, skipping blanks, string literals
    and comments."""
    tokens: list[tuple[str, int]] = []
    index = 0
    while index < len(expression):
        if string := _STRING_START.match(expression, index):
            tokens.append(('""', index))
            index = _string_end(expression, string)
        elif expression.startswith("//", index):
            end = expression.find("\n", index)
            index = len(expression) if end < 0 else end
        elif word := _WORD.match(expression, index):
            tokens.append((word.group(), index))
            index = word.end()
        else:
            if not expression[index].isspace():
                tokens.append((expression[index], index))
            index += 1
    return tokens


def _calls(expression: str) -> list[tuple[str, int]]:
    """Each function call's name and the offset of its ``(`` (where cel-go places a call)."""
    tokens = _tokens(expression)
    return [
        (name, tokens[i + 1][1])
        for i, (name, _) in enumerate(tokens[:-1])
        if tokens[i + 1][0] == "(" and _is_name(name)
    ]


def _device_fields(expression: str) -> list[tuple[str, int]]:
    """Each field read from ``device`` (``device.x``, not ``y.device.x``) and the offset of its ``.``
    (where cel-go places a selection)."""
    tokens = _tokens(expression)
    return [
        (tokens[i + 2][0], tokens[i + 1][1])
        for i, (name, _) in enumerate(tokens[:-2])
        if name == "device"
        and tokens[i + 1][0] == "."
        and _is_name(tokens[i + 2][0])
        and (i == 0 or tokens[i - 1][0] != ".")
    ]


def _is_name(word: str) -> bool:
    return bool(_WORD.fullmatch(word)) and not word[0].isdigit()


def _string_end(expression: str, start: re.Match[str]) -> int:
    """Where the string literal that ``start`` opens ends (raw strings have no escapes)."""
    quote = start.group(2)
    raw = "r" in start.group(1).lower()
    index = start.end()
    while index < len(expression):
        if not raw and expression[index] == "\\":
            index += 2
        elif expression.startswith(quote, index):
            return index + len(quote)
        else:
            index += 1
    return index


def _compile_error(expression: str, offset: int, message: str) -> str:
    """One error as cel-go formats it: position (1-based line and column), the line, and a caret."""
    line_start = expression.rfind("\n", 0, offset) + 1
    line_end = expression.find("\n", offset)
    line = expression[line_start : len(expression) if line_end < 0 else line_end]
    column = offset - line_start
    number = expression.count("\n", 0, offset) + 1
    return f"ERROR: <input>:{number}:{column + 1}: {message}\n | {line}\n | {'.' * column}^"


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
