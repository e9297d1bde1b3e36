"""The compile-time checks of the cel-python backend: a small type checker over the celpy AST.

celpy has no checker; cel-cpp's (and the API server's cel-go) reject undeclared names, unknown functions,
wrong argument types, mixed list literals, ordering on Kubernetes values and non-bool selectors before
any device is seen. This module makes the same decisions where the types are known statically (literals,
library results, ``device`` fields) and leaves ``dyn`` values (attributes) to the runtime, as cel-go
does. It also refuses the constructs the backend does not run (:data:`.celpy_syntax.UNSUPPORTED`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

import celpy.celtypes as ct
import lark

from . import library
from .celpy_regex import compile_re2
from .celpy_syntax import (
    OPTIONAL_VALUES,
    STRING_FORMAT,
    STRINGS_QUOTE,
    TRANSFORM_MAP,
    TYPE_VALUES,
    Call,
    Comprehension,
    Const,
    Expr,
    Ident,
    ListLit,
    MapLit,
    ParseTree,
    Select,
    unsupported_error,
)
from .device_types import DEVICE_FIELDS
from .errors import CelError

DYN, KUBE, DEVICE = "dyn", "kube", "device"
ANY = frozenset({"*"})
_NUMBERS = frozenset({"int", "uint", "double"})
# engine.py declares `device` as map<string, dyn>, so its fields are dyn here too; upstream's types for
# them (device_types.py) are checked before this checker runs, on both backends alike.
_DEVICE_FIELD_TYPES = dict.fromkeys(DEVICE_FIELDS, DYN)
_ORDERED = frozenset({"int", "uint", "double", "string", "bytes", "bool", "timestamp", "duration"})
_KUBE_HINT = "(Quantity, Semver, IP, CIDR); use {}"
_TYPE_NAMES = frozenset(
    {"int", "uint", "double", "string", "bool", "bytes", "list", "map", "null_type", "type"}
)
_OPTIONAL_METHODS = frozenset({"orValue", "hasValue", "value", "or", "optMap", "optFlatMap"})


@dataclass(frozen=True)
class Signature:
    member: bool
    params: tuple[frozenset[str], ...]
    result: str


def _sig(member: bool, result: str, *params: str) -> Signature:
    return Signature(member, tuple(ANY if p == "*" else frozenset(p.split("|")) for p in params), result)


_S, _I = "string", "int"
STANDARD: dict[str, tuple[Signature, ...]] = {
    "size": (_sig(False, _I, "string|bytes|list|map"), _sig(True, _I, "string|bytes|list|map")),
    "contains": (_sig(True, "bool", _S, _S),),
    "startsWith": (_sig(True, "bool", _S, _S),),
    "endsWith": (_sig(True, "bool", _S, _S),),
    "matches": (_sig(True, "bool", _S, _S), _sig(False, "bool", _S, _S)),
    "int": (_sig(False, _I, "int|uint|double|string|timestamp"),),
    "uint": (_sig(False, "uint", "int|uint|double|string"),),
    "double": (_sig(False, "double", "int|uint|double|string"),),
    "string": (_sig(False, _S, "int|uint|double|string|bytes|bool|timestamp|duration|kube"),),
    "bool": (_sig(False, "bool", "bool|string"),),
    "bytes": (_sig(False, "bytes", "bytes|string"),),
    "duration": (_sig(False, "duration", "string|duration"),),
    "timestamp": (_sig(False, "timestamp", "string|timestamp|int"),),
    "dyn": (_sig(False, DYN, "*"),),
    # strings extension (cel-go ext.Strings)
    "charAt": (_sig(True, _S, _S, _I),),
    "indexOf": (_sig(True, _I, _S, _S), _sig(True, _I, _S, _S, _I)),
    "lastIndexOf": (_sig(True, _I, _S, _S), _sig(True, _I, _S, _S, _I)),
    "lowerAscii": (_sig(True, _S, _S),),
    "upperAscii": (_sig(True, _S, _S),),
    "trim": (_sig(True, _S, _S),),
    "reverse": (_sig(True, _S, _S),),
    "replace": (_sig(True, _S, _S, _S, _S), _sig(True, _S, _S, _S, _S, _I)),
    "split": (_sig(True, "list", _S, _S), _sig(True, "list", _S, _S, _I)),
    "substring": (_sig(True, _S, _S, _I), _sig(True, _S, _S, _I, _I)),
    "join": (_sig(True, _S, "list"), _sig(True, _S, "list", _S)),
    # sets extension
    "sets.contains": (_sig(False, "bool", "list", "list"),),
    "sets.intersects": (_sig(False, "bool", "list", "list"),),
    "sets.equivalent": (_sig(False, "bool", "list", "list"),),
}
for _getter in ("getHours", "getMinutes", "getSeconds", "getMilliseconds"):
    STANDARD[_getter] = (_sig(True, _I, "timestamp|duration"), _sig(True, _I, "timestamp", _S))
for _getter in ("getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getMonth"):
    STANDARD[_getter] = (_sig(True, _I, "timestamp"), _sig(True, _I, "timestamp", _S))

_NEUTRAL_PARAMS = {"tagged": KUBE, "list<string>": "list"}


def _library_signatures() -> dict[str, tuple[Signature, ...]]:
    out: dict[str, tuple[Signature, ...]] = {}
    for name, group in library.overloads().items():
        if name.startswith("kubernetes."):  # the engine's own helpers (tagged.py), not for users
            continue
        sigs = []
        for o in group:
            params = tuple(ANY if p == "dyn" else frozenset({_NEUTRAL_PARAMS.get(p, p)}) for p in o.params)
            sigs.append(Signature(o.member, params, _NEUTRAL_PARAMS.get(o.result, o.result)))
        out[name] = tuple(sigs) + STANDARD.get(name, ())
    return out


@functools.cache
def signatures() -> dict[str, tuple[Signature, ...]]:
    """Every function the backend provides (standard, extensions, Kubernetes library) with its overloads."""
    return {**STANDARD, **_library_signatures()}


def type_label(kind: str) -> str:
    return {KUBE: "Kubernetes value", DEVICE: "map", "null": "null_type"}.get(kind, kind)


def check(expression: str, root: Expr, *, require_bool: bool) -> None:
    """Raise CelError for what cel-cpp's checker (or this backend) refuses."""
    checker = _Checker(expression, signatures())
    kind = checker.type_of(root, {DEVICE: DEVICE})
    if require_bool and kind not in ("bool", DYN):
        checker.problems.append(f"must evaluate to bool or the unknown type, not {type_label(kind)}")
    if checker.problems:
        raise CelError("compilation failed: " + "; ".join(dict.fromkeys(checker.problems)))


class _Checker:
    def __init__(self, expression: str, functions: Mapping[str, tuple[Signature, ...]]) -> None:
        self.expression = expression
        self.functions = functions
        self.problems: list[str] = []

    def unsupported(self, construct: str) -> CelError:
        return unsupported_error(construct, self.expression)

    def type_of(self, expr: Expr, scope: dict[str, str]) -> str:
        if isinstance(expr, Const):
            return expr.kind
        if isinstance(expr, Ident):
            return self._ident(expr.name, scope)
        if isinstance(expr, Select):
            return self._select(expr, scope)
        if isinstance(expr, ListLit):
            self._homogeneous([self.type_of(i, scope) for i in expr.items])
            return "list"
        if isinstance(expr, MapLit):
            keys = [self.type_of(k, scope) for k, _ in expr.entries]
            values = [self.type_of(v, scope) for _, v in expr.entries]
            for key in keys:
                if key not in ("int", "uint", "bool", "string", DYN):
                    self.problems.append(f"unsupported map key type: {type_label(key)}")
            self._homogeneous(keys)
            self._homogeneous(values)
            return "map"
        if isinstance(expr, Comprehension):
            return self._comprehension(expr, scope)
        return self._call(expr, scope)

    def _ident(self, name: str, scope: dict[str, str]) -> str:
        if name in scope:
            return scope[name]
        if name in _TYPE_NAMES:
            raise self.unsupported(TYPE_VALUES)
        self.problems.append(f"undeclared reference to '{name}'")
        return DYN

    def _select(self, expr: Select, scope: dict[str, str]) -> str:
        operand = self.type_of(expr.operand, scope)
        if operand == DEVICE:  # an unknown field was refused by device_types.py
            return "bool" if expr.test_only else _DEVICE_FIELD_TYPES.get(expr.field, DYN)
        if operand not in ("map", DYN):
            self.problems.append(f"type '{type_label(operand)}' does not support field selection")
        return "bool" if expr.test_only else DYN

    def _homogeneous(self, kinds: list[str]) -> None:
        concrete = [k for k in kinds if k != DYN]
        if len(set(concrete)) > 1:
            other = next(k for k in concrete if k != concrete[0])
            self.problems.append(
                f"expected type '{type_label(concrete[0])}' but found '{type_label(other)}' in a list or map literal"
            )

    def _comprehension(self, expr: Comprehension, scope: dict[str, str]) -> str:
        if expr.macro in ("transformMap", "transformMapEntry"):
            raise self.unsupported(TRANSFORM_MAP)
        if expr.macro == "cel.bind":
            init, body = expr.args
            return self.type_of(body, {**scope, expr.variables[0]: self.type_of(init, scope)})
        assert expr.target is not None
        target = self.type_of(expr.target, scope)
        if target not in ("list", "map", DYN, DEVICE):
            self.problems.append(
                f"expression of type '{type_label(target)}' cannot be the range of a comprehension"
            )
        inner = {**scope, **dict.fromkeys(expr.variables, DYN)}
        kinds = [self.type_of(a, inner) for a in expr.args]
        predicates = kinds if expr.macro not in ("map", "transformList") else kinds[:-1]
        for kind in predicates:
            if kind not in ("bool", DYN):
                self.problems.append(
                    f"the condition of {expr.macro}() must be a bool, not {type_label(kind)}"
                )
        return "bool" if expr.macro in ("all", "exists", "exists_one", "existsOne") else "list"

    def _call(self, expr: Call, scope: dict[str, str]) -> str:
        name = expr.function
        if name.startswith("optional.") or (expr.target is not None and name in _OPTIONAL_METHODS):
            raise self.unsupported(OPTIONAL_VALUES)
        if name == "format" and expr.target is not None:
            raise self.unsupported(STRING_FORMAT)
        if name == "strings.quote":
            raise self.unsupported(STRINGS_QUOTE)
        if name == "type" and expr.target is None:
            raise self.unsupported(TYPE_VALUES)
        target = self.type_of(expr.target, scope) if expr.target is not None else None
        args = [self.type_of(a, scope) for a in expr.args]
        if name == "@in" and isinstance(expr.args[1], ListLit) and args[0] != DYN:
            elements = {self.type_of(i, scope) for i in expr.args[1].items} - {DYN}
            if len(elements) == 1 and args[0] not in elements and not {args[0], *elements} <= _NUMBERS:
                self.problems.append(_no_overload(name, [args[0], f"list({type_label(elements.pop())})"]))
        if name in _OPERATORS:
            if name in ("_==_", "_!=_") and expr.tree is not None:
                _mark_static_equality(expr.tree, args)
            return _OPERATORS[name](self, name, args)
        self._literal_arguments(expr)
        return self._function(name, target, args)

    def _function(self, name: str, target: str | None, args: list[str]) -> str:
        group = self.functions.get(name)
        if group is None:
            self.problems.append(f"undeclared reference to '{name}'")
            return DYN
        actual = ([target] if target is not None else []) + args
        actual = ["map" if a == DEVICE else a for a in actual]
        matching = [
            s
            for s in group
            if s.member == (target is not None)
            and len(s.params) == len(actual)
            and all(a == DYN or p == ANY or a in p for a, p in zip(actual, s.params, strict=True))
        ]
        if not matching:
            if not any(s.member == (target is not None) for s in group):
                self.problems.append(f"undeclared reference to '{name}'")
                return DYN
            shown = ", ".join(type_label(a) for a in args)
            where = f"{type_label(target)}.({shown})" if target is not None else f"({shown})"
            self.problems.append(f"found no matching overload for '{name}' applied to '{where}'")
            return DYN
        results = {s.result for s in matching}
        return results.pop() if len(results) == 1 else DYN

    def _literal_arguments(self, expr: Call) -> None:
        """Literal durations, timestamps and regexes, which Kubernetes validates at compile time."""
        name = expr.function
        position = {
            "duration": 0,
            "timestamp": 0,
            "matches": 0 if expr.target else 1,
            "find": 0,
            "findAll": 0,
        }
        index = position.get(name)
        if index is None or index >= len(expr.args):
            return
        literal = expr.args[index]
        if not isinstance(literal, Const) or literal.kind != "string":
            return
        text = str(literal.value)
        try:
            if name == "duration":
                ct.DurationType(text)
            elif name == "timestamp":
                ct.TimestampType(text)
            elif name == "matches":
                compile_re2(text)
            else:  # find/findAll run on Python's re (library.py)
                re.compile(text, re.ASCII)
        except Exception as exc:  # noqa: BLE001 - each parser raises its own exception types
            what = "regex" if name in ("matches", "find", "findAll") else name
            self.problems.append(f"invalid {what} literal {text!r}: {exc}")


def _mark_static_equality(node: ParseTree, args: list[str]) -> None:
    """cel-go asks the left operand; engine.py guards ``a == b`` only where that is a runtime question.

    A dynamic left operand (or a Kubernetes value against a dynamic one) may be a Semver, IP or CIDR
    meeting a foreign value: "no such overload". Statically typed operands are compared plainly.
    """
    left, right = args
    if not (left == DYN or (left == KUBE and right == DYN)):
        node.data = lark.Token("RULE", f"{node.data}_static")


def _logical(checker: _Checker, name: str, args: list[str]) -> str:
    if any(a not in ("bool", DYN) for a in args):
        checker.problems.append(_no_overload(name, args))
    return "bool"


def _equality(checker: _Checker, name: str, args: list[str]) -> str:
    left, right = ("map" if a == DEVICE else a for a in args)
    nullable = {left, right} - {"null"} <= {"duration", "timestamp"}  # message types compare with null
    if DYN not in (left, right) and left != right and not nullable:
        checker.problems.append(_no_overload(name, args))
    return "bool"


def _ordering(checker: _Checker, name: str, args: list[str]) -> str:
    left, right = args
    if KUBE in args:
        checker.problems.append(_kube_overload(name, "compareTo(), isLessThan() or isGreaterThan()"))
    elif DYN not in args and not (left == right and left in _ORDERED) and not {left, right} <= _NUMBERS:
        checker.problems.append(_no_overload(name, args))
    return "bool"


def _membership(checker: _Checker, name: str, args: list[str]) -> str:
    if args[1] not in ("list", "map", DYN, DEVICE):
        checker.problems.append(_no_overload(name, args))
    return "bool"


ARITHMETIC = {
    "_+_": {("int", "int"): "int", ("uint", "uint"): "uint", ("double", "double"): "double"}
    | {("string", "string"): "string", ("bytes", "bytes"): "bytes", ("list", "list"): "list"}
    | {("timestamp", "duration"): "timestamp", ("duration", "timestamp"): "timestamp"}
    | {("duration", "duration"): "duration"},
    "_-_": {("int", "int"): "int", ("uint", "uint"): "uint", ("double", "double"): "double"}
    | {("timestamp", "timestamp"): "duration", ("timestamp", "duration"): "timestamp"}
    | {("duration", "duration"): "duration"},
    "_*_": {("int", "int"): "int", ("uint", "uint"): "uint", ("double", "double"): "double"},
    "_/_": {("int", "int"): "int", ("uint", "uint"): "uint", ("double", "double"): "double"},
    "_%_": {("int", "int"): "int", ("uint", "uint"): "uint"},
}


def _arithmetic(checker: _Checker, name: str, args: list[str]) -> str:
    left, right = args
    if KUBE in args:
        hint = "add() or sub()" if name == "_+_" else "sub(), mul(), div() or divInt()"
        checker.problems.append(_kube_overload(name, hint))
        return DYN
    if DYN in args:
        return DYN
    result = ARITHMETIC[name].get((left, right))
    if result is None:
        checker.problems.append(_no_overload(name, args))
        return DYN
    return result


def _negation(checker: _Checker, name: str, args: list[str]) -> str:
    allowed = ("bool", DYN) if name == "!_" else ("int", "double", DYN)
    if args[0] not in allowed:
        checker.problems.append(_no_overload(name, args))
    return "bool" if name == "!_" else args[0]


def _conditional(checker: _Checker, name: str, args: list[str]) -> str:
    condition, left, right = args
    if condition not in ("bool", DYN) or (DYN not in (left, right) and left != right):
        checker.problems.append(_no_overload(name, args))
    return left if left == right else DYN


def _index(checker: _Checker, name: str, args: list[str]) -> str:
    operand, key = args
    if operand == "list" and key not in ("int", "uint", DYN) or operand not in ("list", "map", DYN, DEVICE):
        checker.problems.append(_no_overload(name, args))
    return DYN


def _no_overload(name: str, args: list[str]) -> str:
    return f"found no matching overload for '{name}' applied to '({', '.join(type_label(a) for a in args)})'"


def _kube_overload(name: str, hint: str) -> str:
    return f"found no matching overload for '{name}' applied to Kubernetes values {_KUBE_HINT.format(hint)}"


_OPERATORS = {
    "_&&_": _logical,
    "_||_": _logical,
    "_==_": _equality,
    "_!=_": _equality,
    "_<_": _ordering,
    "_<=_": _ordering,
    "_>_": _ordering,
    "_>=_": _ordering,
    "@in": _membership,
    "_+_": _arithmetic,
    "_-_": _arithmetic,
    "_*_": _arithmetic,
    "_/_": _arithmetic,
    "_%_": _arithmetic,
    "!_": _negation,
    "-_": _negation,
    "_?_:_": _conditional,
    "_[_]": _index,
}
