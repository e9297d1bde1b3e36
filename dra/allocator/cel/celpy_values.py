"""Values and operators of the cel-python backend (part of its celpy adapter, with celpy_functions and
celpy_runtime; celpy's values are untyped, so ``Any`` lives in these three modules).

Quantity, Semver, IP and CIDR are :class:`KubeValue` objects holding the same tagged bytes cel-expr-python
uses (``tagged.py``), so both engines call the very same library functions and compare values the same
way. ``device.attributes``/``device.capacity`` are each a :class:`DomainMap`: an unknown domain reads as an
empty map while ``in``, ``size`` and iteration see only the real ones (upstream's custom map). The
operators implement heterogeneous equality (with cel-go's "the left operand decides" for Semver, IP and
CIDR), cross-type numeric ordering, and no ordering or arithmetic on Kubernetes values.
"""

from __future__ import annotations

import datetime
import operator
from collections.abc import Callable
from typing import Any

import celpy.celtypes as ct
from celpy.evaluation import CELEvalError

from . import library
from .celpy_check import ARITHMETIC, KUBE
from .device import DeviceInput, from_cel_value
from .tagged import describe

#: upstream's hint (cel.EnhanceRuntimeError) less optional chaining, which this backend refuses
NO_SUCH_KEY_HINT = ". consider guarding the check with has() for optional fields"
_DEVICE_CACHE_KEY = "cel-python"  # DeviceInput caches its converted data under this key


class KubeValue:
    """A Quantity, Semver, IP or CIDR inside celpy: its canonical tagged bytes (see tagged.py)."""

    __slots__ = ("tagged",)

    def __init__(self, tagged: bytes) -> None:
        self.tagged = tagged

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KubeValue) and other.tagged == self.tagged

    def __hash__(self) -> int:
        return hash(self.tagged)

    def __repr__(self) -> str:
        return f"KubeValue({from_cel_value(self.tagged)!r})"


class DomainMap(ct.MapType):
    """``device.attributes``/``device.capacity``: a lookup of an unknown domain gives an empty map."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return _EMPTY_MAP


_EMPTY_MAP = ct.MapType()


# ------------------------------------------------------------------------------------------ values
def to_cel(value: Any) -> Any:
    """Python data (as library.py and DeviceInput.cel_data hold it) to celpy values."""
    if isinstance(value, bool):
        return ct.BoolType(value)
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise ValueError("overflow")
        return ct.IntType(value)
    if isinstance(value, float):
        return ct.DoubleType(value)
    if isinstance(value, str):
        return ct.StringType(value)
    if isinstance(value, ct.BytesType):  # CEL bytes handed back by a library function (min, max …)
        return value
    if isinstance(value, bytes | bytearray):
        return KubeValue(bytes(value))
    if isinstance(value, list | tuple):
        return ct.ListType([to_cel(item) for item in value])
    if isinstance(value, dict):
        return ct.MapType({to_cel(k): to_cel(v) for k, v in value.items()})
    return value


def to_native(value: Any) -> Any:
    """celpy values to the plain Python data library.py works on (Kubernetes values as tagged bytes)."""
    if isinstance(value, KubeValue):
        return value.tagged
    if isinstance(value, ct.BoolType):
        return bool(value)
    if isinstance(value, ct.IntType | ct.UintType):
        return int(value)
    if isinstance(value, ct.DoubleType):
        return float(value)
    if isinstance(value, ct.StringType):
        return str(value)
    if isinstance(value, ct.BytesType):
        return value  # stays CEL bytes: only plain bytes are Kubernetes values (see to_cel)
    if isinstance(value, list):
        return [to_native(item) for item in value]
    if isinstance(value, dict):
        return {to_native(k): to_native(v) for k, v in dict.items(value)}
    if isinstance(value, ct.DurationType):
        return datetime.timedelta(days=value.days, seconds=value.seconds, microseconds=value.microseconds)
    if isinstance(value, ct.TimestampType):
        return datetime.datetime.fromtimestamp(value.timestamp(), tz=datetime.UTC)
    return value


def to_python(value: Any) -> object:
    """A result for ``evaluate``: the same Python data cel-expr-python's engine returns."""
    return from_cel_value(to_native(value))


def kind(value: Any) -> str:
    """The CEL type name of a celpy value."""
    if isinstance(value, KubeValue):
        return KUBE
    for cls, name in _KINDS:
        if isinstance(value, cls):
            return name
    return "null" if value is None else type(value).__name__


_KINDS: tuple[tuple[type, str], ...] = (
    (ct.BoolType, "bool"),
    (ct.IntType, "int"),
    (ct.UintType, "uint"),
    (ct.DoubleType, "double"),
    (str, "string"),
    (bytes, "bytes"),
    (list, "list"),
    (dict, "map"),
    (ct.TimestampType, "timestamp"),
    (ct.DurationType, "duration"),
    (ct.NullType, "null"),
)
_NUMBERS = frozenset({"int", "uint", "double"})


def is_bool(value: Any) -> bool:
    return isinstance(value, ct.BoolType)


def label(value: Any) -> str:
    return describe(value.tagged) if isinstance(value, KubeValue) else kind(value)


def device_data(device: DeviceInput) -> ct.MapType:
    """The device as celpy values, converted once per DeviceInput (shared by threads: it is never changed)."""
    cached = device._activations.get(_DEVICE_CACHE_KEY)
    if cached is None:
        data = device.cel_data
        cached = ct.MapType(
            {
                ct.StringType("driver"): ct.StringType(data["driver"]),
                ct.StringType("attributes"): DomainMap(to_cel(data["attributes"])),
                ct.StringType("capacity"): DomainMap(to_cel(data["capacity"])),
                ct.StringType("allowMultipleAllocations"): ct.BoolType(data["allowMultipleAllocations"]),
            }
        )
        device._activations[_DEVICE_CACHE_KEY] = cached
    assert isinstance(cached, ct.MapType)
    return cached


# ------------------------------------------------------------------------------------------ errors
def error(message: str) -> CELEvalError:
    return CELEvalError(message)


def runtime_message(exc: CELEvalError) -> str:
    """celpy's error values carry (message, exception class, exception args); say what happened."""
    args = exc.args
    message = str(args[0]) if args else "error"
    detail = args[2] if len(args) > 2 and isinstance(args[2], tuple) else ()
    if message.startswith("no such member in mapping: "):
        key = message.removeprefix("no such member in mapping: ").strip("'\"")
        return f"no such key: {key}{NO_SUCH_KEY_HINT}"
    if message == "no such key":
        return f"no such key: {detail[0] if detail else '?'}{NO_SUCH_KEY_HINT}"
    if message == "return error for overflow":
        return "integer overflow" if detail in ((), ("overflow",)) else str(detail[0])
    if message == "invalid_argument":
        return f"index out of range: {detail[0] if detail else ''}".rstrip(": ")
    if message == "match error":
        return f"invalid regex: {detail[0] if detail else ''}"
    if " (in activation" in message:  # celpy appends the whole activation
        message = message.split(" (in activation", 1)[0]
    if detail and message == "no such overload":
        return f"no such overload: {detail[0]}"
    return message


# ------------------------------------------------------------------------------------------ equality
def equal(a: Any, b: Any) -> bool:
    """CEL equality between two values (heterogeneous: different kinds are unequal, numbers compare)."""
    if isinstance(a, KubeValue) or isinstance(b, KubeValue):
        return isinstance(a, KubeValue) and isinstance(b, KubeValue) and a.tagged == b.tagged
    ka, kb = kind(a), kind(b)
    if ka in _NUMBERS and kb in _NUMBERS:
        return bool(to_native(a) == to_native(b))
    if ka != kb:
        return False
    if ka == "list":
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if ka == "map":
        if len(a) != len(b):
            return False
        for key, value in dict.items(a):
            other = find_key(b, key)
            if other is MISSING or not equal(value, dict.__getitem__(b, other)):
                return False
        return True
    return ka == "null" or bool(operator.eq(to_native(a), to_native(b)))


MISSING = object()


def find_key(mapping: dict[Any, Any], key: Any) -> Any:
    for candidate in dict.keys(mapping):
        if equal(candidate, key):
            return candidate
    return MISSING


def first_error(*values: Any) -> CELEvalError | None:
    for value in values:
        if isinstance(value, CELEvalError):
            return value
    return None


def _equals(a: Any, b: Any, *, guarded: bool = True) -> Any:
    failed = first_error(a, b)
    if failed is not None:
        return failed
    if guarded and isinstance(a, KubeValue):
        try:
            library._equality_guard(a.tagged, to_native(b))
        except library.LibraryError as exc:
            return error(str(exc))
    return ct.BoolType(equal(a, b))


def _not_equals(a: Any, b: Any, *, guarded: bool = True) -> Any:
    result = _equals(a, b, guarded=guarded)
    return result if isinstance(result, CELEvalError) else ct.BoolType(not result)


def _kube_refusal(name: str, hint: str) -> CELEvalError:
    return error(
        f"found no matching overload for '{name}' applied to Kubernetes values (Quantity, Semver, IP, CIDR); "
        f"use {hint}"
    )


def _ordering(name: str, compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    def apply(a: Any, b: Any) -> Any:
        failed = first_error(a, b)
        if failed is not None:
            return failed
        if isinstance(a, KubeValue) or isinstance(b, KubeValue):
            return _kube_refusal(name, "compareTo(), isLessThan() or isGreaterThan()")
        ka, kb = kind(a), kind(b)
        if (ka in _NUMBERS and kb in _NUMBERS) or (ka == kb and ka in _ORDERED):
            return ct.BoolType(compare(to_native(a), to_native(b)))
        return error(f"no such overload: {name} applied to ({ka}, {kb})")

    return apply


_ORDERED = frozenset({"string", "bytes", "bool", "timestamp", "duration"})


def _membership(item: Any, container: Any) -> Any:
    failed = first_error(item, container)
    if failed is not None:
        return failed
    if isinstance(container, list | dict):  # a map's keys (a DomainMap's real domains)
        return ct.BoolType(any(equal(item, element) for element in container))
    return error(f"no such overload: @in applied to ({kind(item)}, {kind(container)})")


def arithmetic(name: str, apply_op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    allowed = ARITHMETIC[name]

    def apply(a: Any, b: Any) -> Any:
        failed = first_error(a, b)
        if failed is not None:
            return failed
        if isinstance(a, KubeValue) or isinstance(b, KubeValue):
            return _kube_refusal(
                name, "add() or sub()" if name == "_+_" else "sub(), mul(), div() or divInt()"
            )
        if (kind(a), kind(b)) not in allowed:
            return error(f"no such overload: {name} applied to ({kind(a)}, {kind(b)})")
        try:
            result = apply_op(a, b)
        except ZeroDivisionError:
            return error("divide by zero" if name == "_/_" else "modulus by zero")
        except (ValueError, OverflowError) as exc:
            return error("integer overflow" if str(exc) == "overflow" else str(exc))
        except TypeError as exc:
            return error(f"no such overload: {exc}")
        if isinstance(result, list) and not isinstance(result, ct.ListType):
            return ct.ListType(result)
        if isinstance(result, str) and not isinstance(result, ct.StringType):
            return ct.StringType(result)
        if isinstance(result, bytes) and not isinstance(result, ct.BytesType):
            return ct.BytesType(result)
        return result

    return apply


RELATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "relation_eq": _equals,
    "relation_ne": _not_equals,
    "relation_eq_static": lambda a, b: _equals(a, b, guarded=False),
    "relation_ne_static": lambda a, b: _not_equals(a, b, guarded=False),
    "relation_lt": _ordering("_<_", operator.lt),
    "relation_le": _ordering("_<=_", operator.le),
    "relation_gt": _ordering("_>_", operator.gt),
    "relation_ge": _ordering("_>=_", operator.ge),
    "relation_in": _membership,
}
