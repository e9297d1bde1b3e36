"""Upstream's types for ``device``, which both engines declare as ``map<string, dyn>``.

Upstream (dynamic-resource-allocation ``cel/compile.go``) declares ``device`` as the object type
``kubernetes.DRADevice``: ``driver`` a string, ``allowMultipleAllocations`` a bool, ``attributes`` a
``map(string, map(string, dyn))`` and ``capacity`` a ``map(string, map(string, kubernetes.Quantity))``.
cel-cpp has no object types without protobuf descriptors and celpy has no checker, so both engines
declare a map of ``dyn``: without this pass ``device.driver < 1`` compiles and then fails on every device,
where kube-apiserver refuses the DeviceClass or ResourceClaim.

:func:`device_type_problem` walks the expression as written (the engines' :class:`~.checked_ast.Node`
trees before any rewrite, macros expanded as both parsers expand them), types each node as cel-go's
checker does where it can tell, and reports cel-go's error, at cel-go's place, wherever a value whose type
only upstream's declaration gives meets no overload: an operator or function, a field selection, a
comprehension range, a non-bool condition or result. A type it cannot tell is ``dyn``, which matches
anything, so an incomplete guess never becomes an error; misuse of values the engines type themselves is
left to their own checkers. Known gaps: field selection on a Quantity, and mixed list or map literals of
device values, are left to evaluation.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

from . import library
from .checked_ast import Node


@dataclass(frozen=True)
class CelType:
    """A type as cel-go's checker names it: ``string``, ``list(int)``, ``map(string, kubernetes.Quantity)``."""

    name: str
    params: tuple[CelType, ...] = ()

    def __str__(self) -> str:  # cel-go's FormatCELType, used in checker errors
        return self.name if not self.params else f"{self.name}({', '.join(map(str, self.params))})"

    def declared(self) -> str:
        """cel-go's ``Type.String()``, used in "must evaluate to bool …, not <type>"."""
        if self.params:
            return f"{self.name}({', '.join(p.declared() for p in self.params)})"
        return _DECLARED_NAMES.get(self.name, self.name)


def list_of(element: CelType) -> CelType:
    return CelType("list", (element,))


def map_of(key: CelType, value: CelType) -> CelType:
    return CelType("map", (key, value))


DYN, BOOL, INT, UINT, DOUBLE = (
    CelType("dyn"),
    CelType("bool"),
    CelType("int"),
    CelType("uint"),
    CelType("double"),
)
STRING, BYTES, NULL = CelType("string"), CelType("bytes"), CelType("null")
TIMESTAMP, DURATION = CelType("timestamp"), CelType("duration")
QUANTITY, SEMVER = CelType("kubernetes.Quantity"), CelType("kubernetes.Semver")
IP, CIDR = CelType("net.IP"), CelType("net.CIDR")
DEVICE = CelType("kubernetes.DRADevice")
# type parameters of the standard overloads, e.g. `_==_(A, A)`, `_[_](map(A, B), A) -> B`
A, B = CelType("<A>"), CelType("<B>")
_PARAMS = (A, B)
_DECLARED_NAMES = {
    "null": "null_type",
    "timestamp": "google.protobuf.Timestamp",
    "duration": "google.protobuf.Duration",
}

#: the fields of `device` (compile.go, the StoredExpressions environment: every 1.37 declaration)
DEVICE_FIELDS: dict[str, CelType] = {
    "driver": STRING,
    "allowMultipleAllocations": BOOL,
    "attributes": map_of(STRING, map_of(STRING, DYN)),
    "capacity": map_of(STRING, map_of(STRING, QUANTITY)),
}
_CONST_TYPES = {
    "bool": BOOL,
    "int": INT,
    "uint": UINT,
    "double": DOUBLE,
    "string": STRING,
    "bytes": BYTES,
    "null": NULL,
}


@dataclass(frozen=True)
class Overload:
    member: bool
    params: tuple[CelType, ...]  # the receiver first for a member overload
    result: CelType


def _o(result: CelType, *params: CelType, member: bool = False) -> Overload:
    return Overload(member, params, result)


def _m(result: CelType, *params: CelType) -> Overload:
    return Overload(True, params, result)


def _same(result: CelType, kinds: Iterable[CelType]) -> list[Overload]:
    return [_o(result, k, k) for k in kinds]


_NUMBERS = (INT, UINT, DOUBLE)
_ORDERED = [*_same(BOOL, (BOOL, *_NUMBERS, STRING, BYTES, TIMESTAMP, DURATION))] + [
    _o(BOOL, left, right) for left in _NUMBERS for right in _NUMBERS if left != right
]
_ARITHMETIC = [_o(k, k, k) for k in _NUMBERS]
_SIZE = (STRING, BYTES, list_of(A), map_of(A, B))


@functools.cache
def overloads() -> dict[str, tuple[Overload, ...]]:
    """cel-go's standard declarations, the strings extension and the Kubernetes library (library.py's
    table, with its Kubernetes values typed as upstream types them)."""
    table: dict[str, list[Overload]] = {
        "_==_": [_o(BOOL, A, A)],
        "_!=_": [_o(BOOL, A, A)],
        "_<_": _ORDERED,
        "_<=_": _ORDERED,
        "_>_": _ORDERED,
        "_>=_": _ORDERED,
        "_+_": [
            *_ARITHMETIC,
            _o(STRING, STRING, STRING),
            _o(BYTES, BYTES, BYTES),
            _o(list_of(A), list_of(A), list_of(A)),
            _o(DURATION, DURATION, DURATION),
            _o(TIMESTAMP, DURATION, TIMESTAMP),
            _o(TIMESTAMP, TIMESTAMP, DURATION),
        ],
        "_-_": [
            *_ARITHMETIC,
            _o(DURATION, DURATION, DURATION),
            _o(TIMESTAMP, TIMESTAMP, DURATION),
            _o(DURATION, TIMESTAMP, TIMESTAMP),
        ],
        "_*_": _ARITHMETIC,
        "_/_": _ARITHMETIC,
        "_%_": [_o(INT, INT, INT), _o(UINT, UINT, UINT)],
        "-_": [_o(INT, INT), _o(DOUBLE, DOUBLE)],
        "!_": [_o(BOOL, BOOL)],
        "_?_:_": [_o(A, BOOL, A, A)],
        "_[_]": [_o(A, list_of(A), INT), _o(B, map_of(A, B), A)],
        "@in": [_o(BOOL, A, list_of(A)), _o(BOOL, A, map_of(A, B))],
        "size": [_o(INT, k) for k in _SIZE] + [_m(INT, k) for k in _SIZE],
        "contains": [_m(BOOL, STRING, STRING)],
        "startsWith": [_m(BOOL, STRING, STRING)],
        "endsWith": [_m(BOOL, STRING, STRING)],
        "matches": [_m(BOOL, STRING, STRING), _o(BOOL, STRING, STRING)],
        "bool": [_o(BOOL, BOOL), _o(BOOL, STRING)],
        "bytes": [_o(BYTES, BYTES), _o(BYTES, STRING)],
        "double": [_o(DOUBLE, k) for k in (DOUBLE, INT, UINT, STRING)],
        "int": [_o(INT, k) for k in (INT, UINT, DOUBLE, STRING, TIMESTAMP, DURATION)],
        "uint": [_o(UINT, k) for k in (UINT, INT, DOUBLE, STRING)],
        "string": [
            _o(STRING, k) for k in (STRING, INT, UINT, DOUBLE, BYTES, BOOL, TIMESTAMP, DURATION, IP, CIDR)
        ],
        "duration": [_o(DURATION, DURATION), _o(DURATION, STRING)],
        "timestamp": [_o(TIMESTAMP, TIMESTAMP), _o(TIMESTAMP, STRING), _o(TIMESTAMP, INT)],
        "dyn": [_o(DYN, A)],
        # strings extension
        "charAt": [_m(STRING, STRING, INT)],
        "lowerAscii": [_m(STRING, STRING)],
        "upperAscii": [_m(STRING, STRING)],
        "trim": [_m(STRING, STRING)],
        "reverse": [_m(STRING, STRING)],
        "replace": [_m(STRING, STRING, STRING, STRING), _m(STRING, STRING, STRING, STRING, INT)],
        "split": [_m(list_of(STRING), STRING, STRING), _m(list_of(STRING), STRING, STRING, INT)],
        "substring": [_m(STRING, STRING, INT), _m(STRING, STRING, INT, INT)],
        "join": [_m(STRING, list_of(STRING)), _m(STRING, list_of(STRING), STRING)],
        "indexOf": [_m(INT, STRING, STRING), _m(INT, STRING, STRING, INT)],
        "lastIndexOf": [_m(INT, STRING, STRING), _m(INT, STRING, STRING, INT)],
    }
    for name, group in library.overloads().items():
        if name.startswith("kubernetes."):  # the engine's own helpers (tagged.py), not for users
            continue
        for o in group:
            table.setdefault(name, []).extend(_library_overloads(o))
    return {name: tuple(group) for name, group in table.items()}


def _library_overloads(o: library.Overload) -> list[Overload]:
    """library.py's overload with upstream's types: its ``tagged`` is a Quantity, Semver, IP or CIDR."""
    kinds = [_tagged_kinds(o.overload_id, i) for i in range(len(o.params) + 1)]
    params = [_LIBRARY_TYPES.get(p) for p in o.params]
    if o.overload_id.startswith("tagged_"):  # compareTo & co.: Quantity with Quantity, Semver with Semver
        return [
            Overload(o.member, tuple(kind if p is None else p for p in params), _result(o.result, kind))
            for kind in (QUANTITY, SEMVER)
        ]
    typed = tuple(kinds[i] if p is None else p for i, p in enumerate(params))
    return [Overload(o.member, typed, _result(o.result, kinds[-1]))]


_LIBRARY_TYPES: dict[str, CelType | None] = {
    "tagged": None,
    "int": INT,
    "bool": BOOL,
    "string": STRING,
    "double": DOUBLE,
    "dyn": DYN,
    "list": list_of(A),
    "list<string>": list_of(STRING),
}


def _result(result: str, tagged: CelType) -> CelType:
    typed = _LIBRARY_TYPES[result]
    if typed is None:
        return tagged
    return list_of(DYN) if typed == list_of(A) else typed


def _tagged_kinds(overload_id: str, position: int) -> CelType:
    """The Kubernetes type of a ``tagged`` parameter (or, past the last one, result) of an overload."""
    if "quantity" in overload_id:
        return QUANTITY
    if "semver" in overload_id:
        return SEMVER
    if overload_id in ("string_to_ip", "cidr_contains_ip_ip"):
        return IP if position > 0 or overload_id == "string_to_ip" else CIDR
    if overload_id == "cidr_ip":
        return CIDR if position == 0 else IP
    if overload_id.startswith("ip_"):
        return IP
    return CIDR


# ------------------------------------------------------------------------------------------ checking
Typed = tuple[CelType, bool]  # the type, and whether only upstream's declaration of `device` tells it


@dataclass(frozen=True)
class Problem:
    offset: int  # where cel-go places the error (code points into the expression)
    message: str


class _Checker:
    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.functions = overloads()

    def report(self, node: Node, message: str) -> None:
        self.problems.append(Problem(node.offset, message))

    def type_of(self, node: Node | None, scope: dict[str, Typed]) -> Typed:
        if node is None:
            return DYN, False
        kind = node.kind
        if kind == "const":
            return _CONST_TYPES.get(node.name, DYN), False
        if kind == "ident":
            return scope.get(node.name, (DYN, False))
        if kind == "select":
            return self._select(node, scope)
        if kind == "call":
            return self._call(node, scope)
        if kind in ("list", "map"):
            return self._literal(node, scope)
        if kind == "comprehension":
            return self._comprehension(node, scope)
        return DYN, False

    def _select(self, node: Node, scope: dict[str, Typed]) -> Typed:
        operand, upstream = self.type_of(node.children[0] if node.children else None, scope)
        if operand == DEVICE:
            field = DEVICE_FIELDS.get(node.name)
            if field is None:
                self.report(node, f"undefined field '{node.name}'")
                return DYN, False
            return (BOOL, False) if node.test_only else (field, True)
        if operand.name == "map":
            return (BOOL, False) if node.test_only else (operand.params[1], upstream)
        if upstream and operand not in (DYN, QUANTITY) and operand.name not in _PARAMS_NAMES:
            self.report(node, f"type '{operand}' does not support field selection")
        return (BOOL, False) if node.test_only else (DYN, False)

    def _call(self, node: Node, scope: dict[str, Typed]) -> Typed:
        name, children, member = node.name, node.children, node.has_target
        if member and children and children[0].kind == "ident" and children[0].name not in scope:
            # `sets.contains(…)` as parsed: a namespaced function, not a member call (cel-go tries it first)
            name, children, member = f"{children[0].name}.{name}", children[1:], False
        args = [self.type_of(child, scope) for child in children]
        if name in ("_&&_", "_||_", "@not_strictly_false"):
            for child, (kind, upstream) in zip(children, args, strict=True):
                if upstream and not _assignable(BOOL, kind, {}):
                    self.report(child, f"expected type 'bool' but found '{kind}'")
            return BOOL, False
        if name not in self.functions:
            return DYN, False
        upstream = any(flag for _, flag in args)
        kinds = tuple(kind for kind, _ in args)
        results = _results(name, member, kinds)
        if not results:
            if upstream:
                shown = [str(_substitute(k, {})) for k in kinds]
                where = f"{shown[0]}.({', '.join(shown[1:])})" if member else f"({', '.join(shown)})"
                self.report(node, f"found no matching overload for '{name}' applied to '{where}'")
            return DYN, False
        result = results[0] if all(r == results[0] for r in results) else DYN
        return result, upstream and result != DYN

    def _literal(self, node: Node, scope: dict[str, Typed]) -> Typed:
        typed = [self.type_of(child, scope) for child in node.children]
        upstream = any(flag for _, flag in typed)
        if node.kind == "list":
            return list_of(_common(kind for kind, _ in typed)), upstream
        keys, values = typed[0::2], typed[1::2]
        return map_of(_common(k for k, _ in keys), _common(v for v, _ in values)), upstream

    def _comprehension(self, node: Node, scope: dict[str, Typed]) -> Typed:
        range_type, range_upstream = self.type_of(node.iter_range, scope)
        accu = self.type_of(node.accu_init, scope)
        if range_type.name == "list":
            first, second = range_type.params[0], range_type.params[0]
            if node.iter_var2:
                first = INT
        elif range_type.name == "map":
            first, second = range_type.params
        else:
            if range_upstream and range_type != DYN and node.iter_range is not None:
                self.report(
                    node.iter_range,
                    f"expression of type '{range_type}' cannot be range of a comprehension "
                    "(must be list, map, or dynamic)",
                )
            first = second = DYN
        inner = {**scope, str(node.value): accu, node.name: (first, range_upstream)}
        if node.iter_var2:
            inner[node.iter_var2] = (second, range_upstream)
        self.type_of(node.loop_condition, inner)
        step = self.type_of(node.loop_step, inner)
        if _assignable(accu[0], step[0], {}) and _more_specific(step[0], accu[0]):
            accu = step  # `[]` then `accu + [x]`: the accumulator is a list of x's type
        return self.type_of(node.result, {**scope, str(node.value): accu})


_PARAMS_NAMES = frozenset(p.name for p in _PARAMS)


@functools.lru_cache(maxsize=4096)
def _results(name: str, member: bool, kinds: tuple[CelType, ...]) -> tuple[CelType, ...]:
    """The result of each of the function's overloads that takes these arguments (the same calls recur
    in every selector: a cache)."""
    return tuple(result for o in overloads()[name] if (result := _resolve(o, member, kinds)) is not None)


def _resolve(overload: Overload, member: bool, kinds: tuple[CelType, ...]) -> CelType | None:
    """The overload's result for these arguments, or None when it does not take them."""
    if overload.member != member or len(overload.params) != len(kinds):
        return None
    bindings: dict[str, CelType] = {}
    if all(_assignable(p, k, bindings) for p, k in zip(overload.params, kinds, strict=True)):
        return _substitute(overload.result, bindings)
    return None


def _assignable(param: CelType, arg: CelType, bindings: dict[str, CelType]) -> bool:
    """Whether ``arg`` may be passed as ``param``, binding type parameters (cel-go's isAssignable, with
    ``dyn`` and ``null`` taken as matching anything: this pass only reports what it is sure of)."""
    if param.name in _PARAMS_NAMES:
        bound = bindings.get(param.name)
        if bound is None:
            bindings[param.name] = arg
            return True
        if not _compatible(bound, arg):
            return False
        bindings[param.name] = _most_general(bound, arg)
        return True
    if param == DYN or arg in (DYN, NULL):
        return True
    if param.name != arg.name or len(param.params) != len(arg.params):
        return False
    return all(_assignable(p, a, bindings) for p, a in zip(param.params, arg.params, strict=True))


def _compatible(left: CelType, right: CelType) -> bool:
    if DYN in (left, right) or NULL in (left, right):
        return True
    return (
        left.name == right.name
        and len(left.params) == len(right.params)
        and all(_compatible(a, b) for a, b in zip(left.params, right.params, strict=True))
    )


def _more_specific(candidate: CelType, than: CelType) -> bool:
    if than == DYN:
        return candidate != DYN
    return any(_more_specific(c, t) for c, t in zip(candidate.params, than.params, strict=False))


def _substitute(kind: CelType, bindings: dict[str, CelType]) -> CelType:
    if kind.name in _PARAMS_NAMES:
        return bindings.get(kind.name, DYN)
    if not kind.params:
        return kind
    return CelType(kind.name, tuple(_substitute(p, bindings) for p in kind.params))


def _most_general(left: CelType, right: CelType) -> CelType:
    """Of two compatible types the less specific, where ``dyn`` anywhere wins (cel-go's mostGeneral)."""
    if DYN in (left, right):
        return DYN
    if NULL in (left, right):
        return right if left == NULL else left
    return CelType(
        left.name, tuple(_most_general(a, b) for a, b in zip(left.params, right.params, strict=True))
    )


def _common(kinds: Iterable[CelType]) -> CelType:
    """The element type of a list or map literal: the elements' types joined as cel-go joins them;
    ``dyn`` for mixed ones (cel-go refuses those, and so do both engines)."""
    joined: CelType | None = None
    for kind in kinds:
        if joined is None:
            joined = kind
        elif _compatible(joined, kind):
            joined = _most_general(joined, kind)
        else:
            return DYN
    return DYN if joined is None else joined


# ------------------------------------------------------------------------------------------ reporting
def device_type_problem(expression: str, root: Node, *, require_bool: bool) -> str | None:
    """Why upstream's checker refuses ``expression`` for the types of ``device``, in its words; or None.

    ``root`` is the expression as written (see the module docstring). The result check is made only for
    a result whose type only upstream's declaration tells (the engines check the others themselves).
    """
    checker = _Checker()
    result, upstream = checker.type_of(root, {"device": (DEVICE, True)})
    if checker.problems:
        return "compilation failed: " + checker_errors(expression, checker.problems)
    if require_bool and (upstream or result == DEVICE) and result not in (BOOL, DYN):
        return f"must evaluate to bool or the unknown type, not {result.declared()}"
    return None


_DOT, _CARET, _WIDE_DOT, _WIDE_CARET = ".", "^", "\uff0e", "\uff3e"


def checker_errors(expression: str, problems: Iterable[Problem]) -> str:
    """Errors as cel-go prints them: ``ERROR: <input>:line:column: message``, the line, a caret under
    the place; in order of place."""
    shown = []
    for problem in sorted(problems, key=lambda p: max(p.offset, 0)):
        offset = min(max(problem.offset, 0), len(expression))
        line_start = expression.rfind("\n", 0, offset) + 1
        line_end = expression.find("\n", offset)
        line = expression[line_start : len(expression) if line_end < 0 else line_end].replace("\t", " ")
        column = offset - line_start
        number = expression.count("\n", 0, offset) + 1
        dots = "".join(_WIDE_DOT if len(c.encode()) > 1 else _DOT for c in line[:column])
        caret = _WIDE_CARET if column < len(line) and len(line[column].encode()) > 1 else _CARET
        shown.append(f"ERROR: <input>:{number}:{column + 1}: {problem.message}\n | {line}\n | {dots}{caret}")
    return "\n".join(shown)
