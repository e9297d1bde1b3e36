"""The runtime of the cel-python backend: celpy's evaluator with the Kubernetes environment.

celpy has no type hints for most values it passes around, so this adapter is where ``Any`` lives.

* Values: celpy's ``celtypes``; Quantity, Semver, IP and CIDR are :class:`KubeValue` objects holding
  the same tagged bytes cel-expr-python uses (``tagged.py``), so both engines call the very same
  library functions (``library.py``, dispatched on the table's parameter types) and compare values the
  same way. ``device.attributes``/``device.capacity`` are :class:`DomainMap`\\ s: an unknown domain reads
  as an empty map while ``in``, ``size`` and iteration see only the real ones (upstream's custom map).
* The evaluator (:class:`KubernetesEvaluator`) is celpy's, with the macros of the Kubernetes environment
  (two-variable comprehensions, ``transformList``, ``map`` with a filter, ``cel.bind``), CEL's error
  semantics for ``&&``, ``||``, ``?:`` and the comprehensions, heterogeneous equality (with cel-go's
  "the left operand decides" for Semver, IP and CIDR), cross-type numeric ordering, and no ordering or
  arithmetic operators on Kubernetes values.
"""

from __future__ import annotations

import datetime
import operator
from collections.abc import Callable, Iterable
from typing import Any

import celpy.celtypes as ct
import lark
from celpy.evaluation import Activation, CELEvalError, Evaluator

from . import celpy_regex, library
from .celpy_check import ARITHMETIC, KUBE
from .celpy_syntax import (
    MACROS,
    Call,
    Comprehension,
    Const,
    Expr,
    ListLit,
    MapLit,
    ParseTree,
    Select,
    bare_ident,
    literal,
)
from .device import DeviceInput, from_cel_value
from .errors import CelError
from .rewrite import CONSTANT_CONSTRUCTORS
from .tagged import describe

_NO_SUCH_KEY_HINT = "; use has() for attributes a device may lack"
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
        return f"no such key: {key}{_NO_SUCH_KEY_HINT}"
    if message == "no such key":
        return f"no such key: {detail[0] if detail else '?'}{_NO_SUCH_KEY_HINT}"
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
            other = _find_key(b, key)
            if other is _MISSING or not equal(value, dict.__getitem__(b, other)):
                return False
        return True
    return ka == "null" or bool(operator.eq(to_native(a), to_native(b)))


_MISSING = object()


def _find_key(mapping: dict[Any, Any], key: Any) -> Any:
    for candidate in dict.keys(mapping):
        if equal(candidate, key):
            return candidate
    return _MISSING


def _first_error(*values: Any) -> CELEvalError | None:
    for value in values:
        if isinstance(value, CELEvalError):
            return value
    return None


def _equals(a: Any, b: Any, *, guarded: bool = True) -> Any:
    failed = _first_error(a, b)
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
        failed = _first_error(a, b)
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
    failed = _first_error(item, container)
    if failed is not None:
        return failed
    if isinstance(container, list | dict):  # a map's keys (a DomainMap's real domains)
        return ct.BoolType(any(equal(item, element) for element in container))
    return error(f"no such overload: @in applied to ({kind(item)}, {kind(container)})")


def _arithmetic(name: str, apply_op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    allowed = ARITHMETIC[name]

    def apply(a: Any, b: Any) -> Any:
        failed = _first_error(a, b)
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


# ------------------------------------------------------------------------------------------ functions
def _guarded(function: Callable[..., Any]) -> Callable[..., Any]:
    """Errors in arguments propagate; exceptions inside become CEL error values with their message."""

    def call(*args: Any) -> Any:
        failed = _first_error(*args)
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
        "_+_": _arithmetic("_+_", operator.add),
        "_-_": _arithmetic("_-_", operator.sub),
        "_*_": _arithmetic("_*_", operator.mul),
        "_/_": _arithmetic("_/_", operator.truediv),
        "_%_": _arithmetic("_%_", operator.mod),
    }
    return table


_RELATIONS: dict[str, Callable[[Any, Any], Any]] = {
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


# ------------------------------------------------------------------------------------------ evaluator
class KubernetesEvaluator(Evaluator):
    """celpy's interpreter with the Kubernetes environment's macros and CEL's error semantics."""

    def sub_evaluator(self, ast: Any) -> KubernetesEvaluator:
        return KubernetesEvaluator(ast, activation=self.activation)

    def _nested(self, evaluator: Evaluator, bindings: dict[str, Any]) -> Any:
        try:
            return evaluator.evaluate(bindings)
        except CELEvalError as exc:
            return exc

    def expr(self, tree: Any) -> Any:
        if len(tree.children) == 1:
            return self.visit(tree.children[0])
        condition = self.visit(tree.children[0])
        if isinstance(condition, CELEvalError):
            return condition
        if not isinstance(condition, ct.BoolType):
            return error(f"no such overload: {kind(condition)} ? _ : _")
        return self.visit(tree.children[1] if condition else tree.children[2])

    def conditionalor(self, tree: Any) -> Any:
        return self._logical(tree, True)

    def conditionaland(self, tree: Any) -> Any:
        return self._logical(tree, False)

    def _logical(self, tree: Any, decisive: bool) -> Any:
        """``a || b`` / ``a && b``: a decisive operand wins over an error on the other side."""
        if len(tree.children) == 1:
            return self.visit(tree.children[0])
        left = self.visit(tree.children[0])
        if isinstance(left, ct.BoolType) and bool(left) is decisive:
            return left  # the other side cannot change the answer: not evaluated
        right = self.visit(tree.children[1])
        if isinstance(right, ct.BoolType) and bool(right) is decisive:
            return right
        for value in (left, right):
            if isinstance(value, CELEvalError):
                return value
            if not isinstance(value, ct.BoolType):
                return error(f"no such overload: {'||' if decisive else '&&'} applied to {kind(value)}")
        return ct.BoolType(not decisive)

    def relation(self, tree: Any) -> Any:
        if len(tree.children) == 1:
            return self.visit(tree.children[0])
        operator_tree, right_tree = tree.children
        left = self.visit(operator_tree.children[0])
        return _RELATIONS[str(operator_tree.data)](left, self.visit(right_tree))

    def member_dot_arg(self, tree: Any) -> Any:
        """A method call (macros and qualified functions were renamed by celpy_syntax)."""
        target = self.visit(tree.children[0])
        args = [self.visit(c) for c in tree.children[2].children] if len(tree.children) > 2 else []
        return self._apply(str(tree.children[1]), [target, *args])

    def namespaced_call(self, tree: Any) -> Any:
        name = str(tree.children[0])
        arg_trees = tree.children[1].children if len(tree.children) > 1 else []
        if name == "cel.bind":
            variable = _name(arg_trees[0])
            value = self.visit(arg_trees[1])  # an error is bound as it is, and surfaces only if used
            return self._nested(self.sub_evaluator(arg_trees[2]), {variable: value})
        return self._apply(name, [self.visit(c) for c in arg_trees])

    def _apply(self, name: str, args: list[Any]) -> Any:
        failed = _first_error(*args)
        if failed is not None:
            return failed
        try:
            return self.activation.resolve_function(name)(*args)
        except KeyError:
            return error(f"undeclared reference to '{name}'")
        except (TypeError, AttributeError) as exc:
            return error(f"no such overload: {name}({', '.join(label(a) for a in args)}): {exc}")
        except ValueError as exc:
            return error(str(exc))

    def member_dot(self, tree: Any) -> Any:
        """``operand.field``: only maps have fields here (no protobuf messages)."""
        operand = self.visit(tree.children[0])
        if isinstance(operand, CELEvalError):
            return operand
        if isinstance(operand, dict):
            try:
                return operand[str(tree.children[1])]
            except KeyError:
                return error(f"no such key: {tree.children[1]}{_NO_SUCH_KEY_HINT}")
        return error(f"type '{label(operand)}' does not support field selection")

    def member_index(self, tree: Any) -> Any:
        operand, key = (self.visit(c) for c in tree.children)
        failed = _first_error(operand, key)
        if failed is not None:
            return failed
        try:
            return operand[key]
        except KeyError:
            return error(f"no such key: {key}{_NO_SUCH_KEY_HINT}")
        except IndexError:
            return error(f"index out of range: {key} (size {len(operand)})")
        except TypeError:
            return error(f"no such overload: {kind(operand)}[{kind(key)}]")

    def mapinits(self, tree: Any) -> Any:
        parts = [self.visit(c) for c in tree.children]
        failed = _first_error(*parts)
        if failed is not None:
            return failed
        out = ct.MapType()
        for key, value in zip(parts[0::2], parts[1::2], strict=True):
            if _find_key(out, key) is not _MISSING:
                return error(f"duplicate key in map literal: {key}")
            out[key] = value
        return out

    def constant(self, tree: Any) -> Any:
        return tree.children[0]

    def macro_has_eval(self, exprlist: Any) -> Any:
        node = exprlist.children[0]
        while isinstance(node, lark.Tree) and node.data != "member_dot" and len(node.children) == 1:
            node = node.children[0]
        assert isinstance(node, lark.Tree) and node.data == "member_dot"
        operand = self.visit(node.children[0])
        if isinstance(operand, CELEvalError):
            return operand
        if isinstance(operand, dict):
            return ct.BoolType(str(node.children[1]) in operand)
        return error(f"invalid type for field selection: {kind(operand)}")

    def comprehension_macro(self, tree: Any) -> Any:
        name = str(tree.children[1])
        target = self.visit(tree.children[0])
        if isinstance(target, CELEvalError):
            return target
        arg_trees = tree.children[2].children
        count = MACROS[name][len(arg_trees)]
        variables = [_name(a) for a in arg_trees[:count]]
        if isinstance(target, dict):
            pairs = list(dict.items(target))
        elif isinstance(target, list):
            pairs = [(ct.IntType(i), v) for i, v in enumerate(target)]
        else:
            return error(f"no such overload: {name}() over a {kind(target)}, not a list or map")
        if count == 1:
            elements = [{variables[0]: k if isinstance(target, dict) else v} for k, v in pairs]
        else:
            elements = [{variables[0]: k, variables[1]: v} for k, v in pairs]
        bodies: list[Evaluator] = [self.sub_evaluator(b) for b in arg_trees[count:]]
        return _MACRO_RUNNERS[name](self, bodies, elements)


def _name(node: Any) -> str:
    name = bare_ident(node)
    assert name is not None  # celpy_syntax refused anything else
    return name


def _quantifier(
    decisive: bool,
) -> Callable[[KubernetesEvaluator, list[Evaluator], list[dict[str, Any]]], Any]:
    """all (decisive false) / exists (decisive true): a decisive element wins over errors elsewhere."""

    def run(evaluator: KubernetesEvaluator, bodies: list[Evaluator], elements: list[dict[str, Any]]) -> Any:
        failed: CELEvalError | None = None
        for bindings in elements:
            value = evaluator._nested(bodies[0], bindings)
            if isinstance(value, ct.BoolType):
                if bool(value) is decisive:
                    return value
            elif failed is None:
                failed = (
                    value if isinstance(value, CELEvalError) else error(f"no such overload: {kind(value)}")
                )
        return failed or ct.BoolType(not decisive)

    return run


def _exists_one(
    evaluator: KubernetesEvaluator, bodies: list[Evaluator], elements: list[dict[str, Any]]
) -> Any:
    count = 0
    for bindings in elements:
        value = evaluator._nested(bodies[0], bindings)
        if isinstance(value, CELEvalError):
            return value
        if not isinstance(value, ct.BoolType):
            return error(f"no such overload: {kind(value)}")
        count += bool(value)
    return ct.BoolType(count == 1)


def _transform(
    evaluator: KubernetesEvaluator, bodies: list[Evaluator], elements: list[dict[str, Any]]
) -> Any:
    """map(x, t), map(x, p, t), transformList(i, v, t), transformList(i, v, p, t), filter(x, p)."""
    out = ct.ListType()
    *conditions, transform = bodies
    for bindings in elements:
        if conditions:
            keep = evaluator._nested(conditions[0], bindings)
            if isinstance(keep, CELEvalError):
                return keep
            if not isinstance(keep, ct.BoolType):
                return error(f"no such overload: {kind(keep)} as a filter condition")
            if not keep:
                continue
        value = evaluator._nested(transform, bindings)
        if isinstance(value, CELEvalError):
            return value
        out.append(value)
    return out


def _filter(evaluator: KubernetesEvaluator, bodies: list[Evaluator], elements: list[dict[str, Any]]) -> Any:
    out = ct.ListType()
    for bindings in elements:
        keep = evaluator._nested(bodies[0], bindings)
        if isinstance(keep, CELEvalError):
            return keep
        if not isinstance(keep, ct.BoolType):
            return error(f"no such overload: {kind(keep)} as a filter condition")
        if keep:
            out.append(next(iter(bindings.values())))
    return out


_MACRO_RUNNERS: dict[str, Callable[[KubernetesEvaluator, list[Evaluator], list[dict[str, Any]]], Any]] = {
    "all": _quantifier(False),
    "exists": _quantifier(True),
    "exists_one": _exists_one,
    "existsOne": _exists_one,
    "map": _transform,
    "transformList": _transform,
    "filter": _filter,
}


# ------------------------------------------------------------------------------------------ programs
def fold_constants(root: Expr) -> None:
    """``quantity("40Gi")``-style calls with literal arguments become constants in the parse tree.

    Invalid literals are left alone, so they fail at runtime as upstream does.
    """
    stack: list[Expr] = [root]
    while stack:
        expr = stack.pop()
        if isinstance(expr, Call):
            folder = CONSTANT_CONSTRUCTORS.get(expr.function)
            if folder is not None and expr.target is None and expr.tree is not None:
                values = [to_native(a.value) for a in expr.args if isinstance(a, Const)]
                if len(values) == len(expr.args):
                    try:
                        tagged = folder(*values)
                    except (ValueError, TypeError):
                        tagged = None
                    if tagged is not None:
                        _make_constant(expr.tree, KubeValue(tagged))
                        continue
            stack.extend(((expr.target,) if expr.target is not None else ()) + expr.args)
        elif isinstance(expr, Select):
            stack.append(expr.operand)
        elif isinstance(expr, ListLit):
            stack.extend(expr.items)
        elif isinstance(expr, MapLit):
            stack.extend(part for entry in expr.entries for part in entry)
        elif isinstance(expr, Comprehension):
            stack.extend(((expr.target,) if expr.target is not None else ()) + expr.args)


def _make_constant(node: Any, value: Any) -> None:
    node.data = lark.Token("RULE", "constant")
    node.children = [value]


# Nodes with one child that only pass it on (one per precedence level of the grammar).
_PASS_THROUGH = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary", "member"}
    | {"paren_expr"}
)


def prepare(tree: ParseTree) -> ParseTree:
    """Literals become constants (parsed once, not per evaluation) and pass-through chains are cut.

    celpy visits every precedence level of the grammar for every operand (``expr`` → … → ``member`` →
    ``primary``); the evaluator's methods read their operands through ``visit``, so a chain of single-child
    levels can be replaced by the node it leads to. A ``primary`` stays where it holds an identifier or a
    call, since celpy's ``primary`` evaluates those.
    """
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        children = node.children
        if node.data == "primary" and isinstance(children[0], lark.Tree) and children[0].data == "literal":
            _make_constant(node, literal(children[0].children[0]).value)
            continue
        for index, child in enumerate(children):
            while _skippable(child):
                child = child.children[0]
            children[index] = child
            if isinstance(child, lark.Tree) and child.data != "constant":
                stack.append(child)
    while _skippable(tree) or (tree.data == "primary" and _skippable_primary(tree)):
        tree = tree.children[0]  # type: ignore[assignment]
    return tree


def _skippable(node: Any) -> bool:
    if (
        not isinstance(node, lark.Tree)
        or len(node.children) != 1
        or not isinstance(node.children[0], lark.Tree)
    ):
        return False
    return node.data in _PASS_THROUGH or (node.data == "primary" and _skippable_primary(node))


def _skippable_primary(node: Any) -> bool:
    return isinstance(node.children[0], lark.Tree) and node.children[0].data in ("paren_expr", "constant")


class Program:
    """A parsed expression ready to evaluate: thread-safe (a fresh evaluator per evaluation)."""

    def __init__(self, tree: ParseTree, function_table: dict[str, Callable[..., Any]]) -> None:
        self.tree = tree
        self.activation = Activation(functions=function_table)

    def run(self, device: DeviceInput) -> Any:
        """The raw celpy result; CelError on a runtime error."""
        evaluator = KubernetesEvaluator(self.tree, activation=self.activation)
        try:
            return evaluator.evaluate({"device": device_data(device)})
        except CELEvalError as exc:
            raise CelError(f"CEL runtime error: {runtime_message(exc)}") from exc
        except RecursionError as exc:
            raise CelError("CEL runtime error: the expression nests too deeply") from exc
        except CelError:
            raise
        except Exception as exc:  # noqa: BLE001 - celpy raises plain Python errors on some bad input
            raise CelError(f"CEL runtime error: {type(exc).__name__}: {exc}") from exc
