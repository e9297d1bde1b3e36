"""The Kubernetes CEL libraries DRA selectors use, as Python overloads shared by both engines.

Quantity and Semver (and IP/CIDR, :mod:`.library_net`) travel through CEL as tagged bytes (see
:mod:`.tagged`). They share one type (``tagged``, CEL ``bytes`` in cel-expr-python), so a member
function such as ``compareTo`` has one overload that checks the tag in Python. Exceptions raised here
come back from CEL as error values, which the engines turn into ``CelError``.

The table (:func:`overloads`) names parameter and result types with engine-neutral words
(:data:`TYPES`); each engine maps them to its own types: cel-expr-python declares them to its checker
(``engine.py``), the cel-python adapter dispatches on them at runtime (``celpy_runtime.py``).

Upstream sources (semantics only): ``apiserver/pkg/cel/library/{quantity,semverlib,lists,regex}.go``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from dra.quantity import Quantity, QuantityError

from . import library_net
from .semver import Semver, SemverError
from .tagged import (
    EQUALITY_GUARD_FUNCTION,
    ITERABLE_GUARD_FUNCTION,
    TAGGED_STRING_FUNCTION,
    TagError,
    decode_quantity,
    decode_semver,
    describe,
    encode_quantity,
    encode_semver,
    is_quantity,
    is_semver,
)
from .type_names import not_iterable_message

#: The parameter and result types of the table; "tagged" is a Kubernetes value (Quantity, Semver, IP, CIDR).
TYPES = ("tagged", "int", "bool", "string", "double", "dyn", "list", "list<string>")
TAGGED, _INT, _BOOL, _STRING, _DOUBLE, _DYN, _LIST_DYN, _LIST_STRING = TYPES
_INCLUDES_MAX_LIST = 48


class LibraryError(ValueError):
    """A runtime failure inside a library function (becomes a CEL error value)."""


def _quantity(value: Any) -> Quantity:
    try:
        return decode_quantity(value) if isinstance(value, bytes | bytearray) else _wrong(value, "Quantity")
    except TagError as exc:
        raise LibraryError(str(exc)) from exc


def _semver(value: Any) -> Semver:
    try:
        return decode_semver(value) if isinstance(value, bytes | bytearray) else _wrong(value, "Semver")
    except TagError as exc:
        raise LibraryError(str(exc)) from exc


def _wrong(value: Any, expected: str) -> NoReturn:
    raise LibraryError(f"no such overload: expected a {expected}, got {describe(value)}")


# ---------------------------------------------------------------------------------------- quantity
def _parse_quantity(text: str) -> bytes:
    try:
        return encode_quantity(Quantity.parse(text))
    except QuantityError as exc:
        raise LibraryError(str(exc)) from exc


def _is_quantity_string(text: str) -> bool:
    try:
        Quantity.parse(text)
    except QuantityError:
        return False
    return True


def _compare(left: Any, right: Any) -> int:
    # The encodings sort like the values, so only the kinds need checking.
    if left[:1] != right[:1] or not (is_quantity(left) or is_semver(left)):
        raise LibraryError(f"no such overload: {describe(left)}.compareTo({describe(right)})")
    return int(left > right) - int(left < right)


def _add(left: Any, right: Any) -> bytes:
    other: Quantity | int = right if isinstance(right, int) else _quantity(right)
    return encode_quantity(_quantity(left) + other)


def _sub(left: Any, right: Any) -> bytes:
    other: Quantity | int = right if isinstance(right, int) else _quantity(right)
    return encode_quantity(_quantity(left) - other)


def _as_integer(value: Any) -> int:
    try:
        return _quantity(value).as_integer()
    except QuantityError as exc:
        raise LibraryError("cannot convert value to integer") from exc


def _div(value: Any, divisor: int, decimals: int = 4) -> bytes:
    try:
        return encode_quantity(_quantity(value).div(divisor, decimals))
    except QuantityError as exc:
        raise LibraryError(str(exc)) from exc


def _div_int(value: Any, divisor: int) -> bytes:
    try:
        return encode_quantity(_quantity(value).div_int(divisor))
    except QuantityError as exc:
        raise LibraryError(str(exc)) from exc


# ---------------------------------------------------------------------------------------- semver
def _parse_semver(text: str, normalize: bool = False) -> bytes:
    try:
        return encode_semver(Semver.parse(text, normalize=normalize))
    except SemverError as exc:
        raise LibraryError(str(exc)) from exc


def _is_semver_string(text: str, normalize: bool = False) -> bool:
    return Semver.is_valid(text, normalize=normalize)


# ---------------------------------------------------------------------------------------- lists
def _sort_key(value: Any) -> Any:
    if isinstance(value, dict):
        raise LibraryError(f"no such overload: {describe(value)} is not comparable in a list function")
    return value


def _check_homogeneous(items: Sequence[Any]) -> None:
    kinds = {
        bool if isinstance(i, bool) else (float if isinstance(i, int | float) else type(i)) for i in items
    }
    if len(kinds) > 1:
        raise LibraryError("no such overload: list elements of mixed types cannot be compared")


def _is_sorted(items: list[Any]) -> bool:
    _check_homogeneous(items)
    keys = [_sort_key(i) for i in items]
    return all(not (a > b) for a, b in zip(keys, keys[1:], strict=False))


def _sum(items: list[Any]) -> Any:
    if not items:
        return 0
    _check_homogeneous(items)
    if not all(isinstance(i, int | float) and not isinstance(i, bool) for i in items):
        # Durations too upstream; cel-expr-python cannot return a duration from Python.
        raise LibraryError("no such overload: sum() needs a list of numbers")
    total = sum(items)
    if isinstance(total, int) and not -(2**63) <= total < 2**63:
        raise LibraryError("integer overflow")
    return total


def _min(items: list[Any]) -> Any:
    if not items:
        raise LibraryError("min called on empty list")
    _check_homogeneous(items)
    return min(items, key=_sort_key)


def _max(items: list[Any]) -> Any:
    if not items:
        raise LibraryError("max called on empty list")
    _check_homogeneous(items)
    return max(items, key=_sort_key)


def _cel_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    return bool(a == b)


def _index_of(items: list[Any], item: Any) -> int:
    for index, value in enumerate(items):
        if _cel_equal(value, item):
            return index
    return -1


def _last_index_of(items: list[Any], item: Any) -> int:
    for index in range(len(items) - 1, -1, -1):
        if _cel_equal(items[index], item):
            return index
    return -1


def _includes(target: Any, item: Any) -> bool:
    if isinstance(target, list):
        if len(target) > _INCLUDES_MAX_LIST:
            raise LibraryError(
                f"'includes' function cannot be applied to lists longer than {_INCLUDES_MAX_LIST} values"
            )
        return any(_cel_equal(value, item) for value in target)
    return _cel_equal(target, item)


# ---------------------------------------------------------------------------------------- regex
_REGEX_CACHE: dict[str, re.Pattern[str]] = {}


def _regex(pattern: str) -> re.Pattern[str]:
    compiled = _REGEX_CACHE.get(pattern)
    if compiled is None:
        try:
            compiled = re.compile(pattern, re.ASCII)  # RE2: \d, \w, \s are ASCII-only
        except re.error as exc:
            raise LibraryError(f"Illegal regex: {exc}") from exc
        if len(_REGEX_CACHE) > 1024:
            _REGEX_CACHE.clear()
        _REGEX_CACHE[pattern] = compiled
    return compiled


def _find(text: str, pattern: str) -> str:
    match = _regex(pattern).search(text)
    return match.group(0) if match else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    found: list[str] = []
    for match in _regex(pattern).finditer(text):
        found.append(match.group(0))
        if 0 < limit <= len(found):
            break
    return found


# ---------------------------------------------------------------------------------------- declarations
@dataclass(frozen=True)
class Overload:
    """One overload of a library function; ``params`` include the receiver of a member function."""

    overload_id: str
    result: str
    params: tuple[str, ...]
    impl: Callable[..., Any]
    member: bool = True


def _overload(
    overload_id: str,
    result: str,
    params: list[str],
    impl: Callable[..., Any],
    *,
    member: bool = True,
) -> Overload:
    return Overload(overload_id, result, tuple(params), impl, member)


def python_function_names() -> frozenset[str]:
    """Functions implemented in Python: optional values must never reach them (cel-expr-python crashes)."""
    return frozenset(overloads())


@functools.cache
def overloads() -> dict[str, tuple[Overload, ...]]:
    """Every Kubernetes library function by name, with the types the checker (or dispatcher) needs."""
    return {name: tuple(group) for name, group in _declarations().items()}


def _declarations() -> dict[str, list[Overload]]:
    q = TAGGED
    decls: dict[str, list[Overload]] = {
        # quantity
        "quantity": [_overload("string_to_quantity", q, [_STRING], _parse_quantity, member=False)],
        "isQuantity": [_overload("is_quantity_string", _BOOL, [_STRING], _is_quantity_string, member=False)],
        "sign": [
            _overload("quantity_sign", _INT, [q], lambda v: _quantity(v).sign(), member=False),
            _overload("quantity_sign_member", _INT, [q], lambda v: _quantity(v).sign()),
        ],
        "asInteger": [_overload("quantity_get_int", _INT, [q], _as_integer)],
        "isInteger": [_overload("quantity_is_integer", _BOOL, [q], lambda v: _quantity(v).is_integer())],
        "asApproximateFloat": [
            _overload("quantity_get_float", _DOUBLE, [q], lambda v: _quantity(v).as_approximate_float())
        ],
        "add": [
            _overload("quantity_add", q, [q, q], _add),
            _overload("quantity_add_int", q, [q, _INT], _add),
        ],
        "sub": [
            _overload("quantity_sub", q, [q, q], _sub),
            _overload("quantity_sub_int", q, [q, _INT], _sub),
        ],
        "div": [
            _overload("quantity_divide_int_default_rounding", q, [q, _INT], _div),
            _overload("quantity_divide_int_round", q, [q, _INT, _INT], _div),
        ],
        "divInt": [_overload("quantity_divide_int", q, [q, _INT], _div_int)],
        "mul": [
            _overload(
                "quantity_multiply_int", q, [q, _INT], lambda v, n: encode_quantity(_quantity(v).mul(n))
            )
        ],
        # quantity and semver share these (one CEL type; Python dispatches on the tag)
        "compareTo": [_overload("tagged_compare_to", _INT, [q, q], _compare)],
        "isGreaterThan": [
            _overload("tagged_is_greater_than", _BOOL, [q, q], lambda a, b: _compare(a, b) == 1)
        ],
        "isLessThan": [_overload("tagged_is_less_than", _BOOL, [q, q], lambda a, b: _compare(a, b) == -1)],
        # semver
        "semver": [
            _overload("string_to_semver", q, [_STRING], _parse_semver, member=False),
            _overload("string_bool_to_semver", q, [_STRING, _BOOL], _parse_semver, member=False),
        ],
        "isSemver": [
            _overload("is_semver_string", _BOOL, [_STRING], _is_semver_string, member=False),
            _overload("is_semver_string_bool", _BOOL, [_STRING, _BOOL], _is_semver_string, member=False),
        ],
        "major": [_overload("semver_major", _INT, [q], lambda v: _semver(v).major)],
        "minor": [_overload("semver_minor", _INT, [q], lambda v: _semver(v).minor)],
        "patch": [_overload("semver_patch", _INT, [q], lambda v: _semver(v).patch)],
        # lists (Kubernetes library; the string forms of indexOf/lastIndexOf come from the strings extension)
        "isSorted": [_overload("list_is_sorted", _BOOL, [_LIST_DYN], _is_sorted)],
        "sum": [_overload("list_sum", _DYN, [_LIST_DYN], _sum)],
        "min": [_overload("list_min", _DYN, [_LIST_DYN], _min)],
        "max": [_overload("list_max", _DYN, [_LIST_DYN], _max)],
        "indexOf": [_overload("list_a_index_of_int", _INT, [_LIST_DYN, _DYN], _index_of)],
        "lastIndexOf": [_overload("list_a_last_index_of_int", _INT, [_LIST_DYN, _DYN], _last_index_of)],
        "includes": [_overload("list_includes_dyn_dyn", _BOOL, [_DYN, _DYN], _includes)],
        # regex
        "find": [_overload("string_find_string", _STRING, [_STRING, _STRING], _find)],
        "findAll": [
            _overload("string_find_all_string", _LIST_STRING, [_STRING, _STRING], _find_all),
            _overload("string_find_all_string_int", _LIST_STRING, [_STRING, _STRING, _INT], _find_all),
        ],
    }
    for name, net_overloads in library_net.function_decls().items():
        decls[name] = [
            _overload(oid, result, params, impl, member=member)
            for oid, result, params, impl, member in net_overloads
        ]
    # `string(x)` on a Kubernetes value; the AST rewrite routes bytes-typed string() calls here.
    decls[EQUALITY_GUARD_FUNCTION] = [
        _overload("kubernetes_equality_guard", _BOOL, [_DYN, _DYN], _equality_guard, member=False)
    ]
    decls[ITERABLE_GUARD_FUNCTION] = [
        _overload("kubernetes_iterable_guard", _DYN, [_DYN], _iterable_guard, member=False)
    ]
    decls[TAGGED_STRING_FUNCTION] = [
        _overload("kubernetes_tagged_to_string", _STRING, [q], _tagged_to_string, member=False)
    ]
    return decls


def _equality_guard(left: Any, right: Any) -> bool:
    """Semver, IP and CIDR compare only with their own kind upstream; anything else is no such overload."""
    if isinstance(left, bytes | bytearray) and left[:1] in (b"V", b"I", b"C"):
        same_kind = isinstance(right, bytes | bytearray) and right[:1] == left[:1]
        if not same_kind:
            raise LibraryError(f"no such overload: {describe(left)} == {describe(right)}")
    return True


def _iterable_guard(value: Any) -> Any:
    """A comprehension's range: lists and maps pass; anything else is cel-go's "expected iterable type"."""
    if isinstance(value, list | dict):
        return value
    raise LibraryError(not_iterable_message(value))


def _tagged_to_string(value: Any) -> str:
    if is_quantity(value) or is_semver(value):
        kind = "kubernetes.Quantity" if is_quantity(value) else "kubernetes.Semver"
        raise LibraryError(f"type conversion error from '{kind}' to 'string'")
    text = library_net.net_text(value)
    if text is not None:
        return text
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LibraryError("invalid UTF-8 in bytes, cannot convert to string") from exc
