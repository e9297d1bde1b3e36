"""The function table of the cel-python backend: the Kubernetes library (dispatched on library.py's
parameter types), the strings and sets extensions, RE2 ``matches``, ``string()`` and the arithmetic
operators. Part of the celpy adapter (see celpy_values).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from typing import Any

import celpy.celtypes as ct

from . import celpy_regex, library
from .celpy_values import KubeValue, arithmetic, equal, error, first_error, kind, label, to_cel, to_native
from .errors import CelError


def _guarded(function: Callable[..., Any]) -> Callable[..., Any]:
    """Errors in arguments propagate; exceptions inside become CEL error values with their message."""

    def call(*args: Any) -> Any:
        failed = first_error(*args)
        if failed is not None:
            return failed
        try:
            return function(*args)
        except CelError as exc:
            return error(str(exc))
        except (ValueError, TypeError, KeyError, IndexError, ArithmeticError) as exc:
            return error(str(exc) or type(exc).__name__)

    return call


_FITS: dict[str, Callable[[Any], bool]] = {
    "tagged": lambda v: isinstance(v, KubeValue),
    "int": lambda v: isinstance(v, ct.IntType),
    "bool": lambda v: isinstance(v, ct.BoolType),
    "string": lambda v: isinstance(v, str),
    "double": lambda v: isinstance(v, ct.DoubleType),
    "dyn": lambda v: True,
    "list": lambda v: isinstance(v, list),
    "list<string>": lambda v: isinstance(v, list),
}


def _library_function(name: str, group: Iterable[library.Overload]) -> Callable[..., Any]:
    overloads = tuple(group)

    def call(*args: Any) -> Any:
        for overload in overloads:
            if len(overload.params) == len(args) and all(
                _FITS[p](a) for p, a in zip(overload.params, args, strict=True)
            ):
                return to_cel(overload.impl(*[to_native(a) for a in args]))
        return error(f"no such overload: {name}({', '.join(label(a) for a in args)})")

    return call


def _string_or(function: Callable[..., Any], fallback: Callable[..., Any]) -> Callable[..., Any]:
    """Functions named in both the strings extension and the list library (indexOf, lastIndexOf)."""
    return lambda target, *args: (function if isinstance(target, str) else fallback)(target, *args)


def _index_in_range(text: str, index: int) -> None:
    if not 0 <= index <= len(text):
        raise IndexError(f"index out of range: {index}")


def _char_at(text: str, index: int) -> Any:
    _index_in_range(text, index)
    return ct.StringType(text[index : index + 1])


def _index_of(text: str, sub: str, offset: int = 0) -> Any:
    _index_in_range(text, offset)
    return ct.IntType(text.find(sub, offset))


def _last_index_of(text: str, sub: str, offset: int | None = None) -> Any:
    if offset is None:
        return ct.IntType(text.rfind(sub))
    _index_in_range(text, offset)
    return ct.IntType(text.rfind(sub, 0, offset + len(sub)))


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _replace(text: str, old: str, new: str, count: int = -1) -> Any:
    return ct.StringType(text.replace(old, new, count if count >= 0 else -1))


def _split(text: str, separator: str, limit: int = -1) -> Any:
    if limit == 0:
        return ct.ListType()
    if separator == "":
        parts = list(text) if limit < 0 or limit >= len(text) else [*text[: limit - 1], text[limit - 1 :]]
    else:
        parts = text.split(separator, limit - 1 if limit > 0 else -1)
    return ct.ListType([ct.StringType(p) for p in parts])


def _substring(text: str, start: int, end: int | None = None) -> Any:
    end = len(text) if end is None else end
    _index_in_range(text, start)
    _index_in_range(text, end)
    if end < start:
        raise IndexError(f"substring: end {end} is less than start {start}")
    return ct.StringType(text[start:end])


def _join(items: list[Any], separator: str = "") -> Any:
    if not all(isinstance(item, str) for item in items):
        raise TypeError("join() needs a list of strings")
    return ct.StringType(separator.join(items))


def _lists(a: Any, b: Any) -> None:
    if not isinstance(a, list) or not isinstance(b, list):
        raise TypeError(f"sets functions take two lists, not ({kind(a)}, {kind(b)})")


def _sets_contains(a: list[Any], b: list[Any]) -> Any:
    _lists(a, b)
    return ct.BoolType(all(any(equal(x, y) for x in a) for y in b))


def _sets_intersects(a: list[Any], b: list[Any]) -> Any:
    _lists(a, b)
    return ct.BoolType(any(equal(x, y) for x in a for y in b))


def _sets_equivalent(a: list[Any], b: list[Any]) -> Any:
    return ct.BoolType(bool(_sets_contains(a, b)) and bool(_sets_contains(b, a)))


def _matches(text: Any, pattern: Any) -> Any:
    if not isinstance(text, str) or not isinstance(pattern, str):
        raise TypeError(f"matches() on ({kind(text)}, {kind(pattern)})")
    try:
        return ct.BoolType(celpy_regex.matches(text, pattern))
    except celpy_regex.RegexError as exc:
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        raise ValueError(f"invalid regex {pattern!r}: {detail}") from exc


def _to_string(value: Any) -> Any:
    if isinstance(value, KubeValue):
        return ct.StringType(library._tagged_to_string(value.tagged))
    if isinstance(value, ct.BoolType):
        return ct.StringType("true" if value else "false")
    if isinstance(value, ct.DoubleType):
        return ct.StringType(format(float(value), "g"))
    if isinstance(value, bytes):
        return ct.StringType(bytes(value).decode("utf-8"))
    if kind(value) not in ("int", "uint", "string", "timestamp", "duration"):
        raise TypeError(f"no such overload: string({label(value)})")
    return ct.StringType(value)


def functions() -> dict[str, Callable[..., Any]]:
    """The function table of the Kubernetes environment (celpy's base functions fill in the rest)."""
    table: dict[str, Callable[..., Any]] = {
        name: _guarded(_library_function(name, group))
        for name, group in library.overloads().items()
        if not name.startswith("kubernetes.")
    }
    strings: dict[str, Callable[..., Any]] = {
        "charAt": _char_at,
        "indexOf": _index_of,
        "lastIndexOf": _last_index_of,
        "lowerAscii": lambda text: ct.StringType(text.translate(_ASCII_LOWER)),
        "upperAscii": lambda text: ct.StringType(text.translate(_ASCII_UPPER)),
        "trim": lambda text: ct.StringType(text.strip()),
        "reverse": lambda text: ct.StringType(text[::-1]),
        "replace": _replace,
        "split": _split,
        "substring": _substring,
        "join": _join,
    }
    for name, function in strings.items():
        table[name] = _guarded(_string_or(function, table[name]) if name in table else function)
    table |= {
        "sets.contains": _guarded(_sets_contains),
        "sets.intersects": _guarded(_sets_intersects),
        "sets.equivalent": _guarded(_sets_equivalent),
        "string": _guarded(_to_string),
        "matches": _guarded(_matches),
        "_+_": arithmetic("_+_", operator.add),
        "_-_": arithmetic("_-_", operator.sub),
        "_*_": arithmetic("_*_", operator.mul),
        "_/_": arithmetic("_/_", operator.truediv),
        "_%_": arithmetic("_%_", operator.mod),
    }
    return table
