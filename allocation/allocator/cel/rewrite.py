"""Edits on the checked AST (``cel.expr.CheckedExpr``) that cel-expr-python serializes.

1. Constant folding: ``quantity("40Gi")`` and ``semver("1.2.0")`` with literal arguments become
   tagged-bytes literals, so evaluation makes no Python call for them.
2. Unknown domain → empty map. ``device.attributes[d]`` and ``device.capacity[d]`` (and the select form
   ``device.attributes.d``) become ``device.attributes[?d].orValue({})``. Only direct lookups on
   ``device.attributes``/``device.capacity`` are rewritten; a lookup through an alias
   (``cel.bind(a, device.attributes, a["x"])``) keeps cel-cpp's "no such key" behaviour.
3. The tree is also returned as plain :class:`Node` objects for the cost estimator.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from . import _wire as w
from .quantity import Quantity
from .semver import Semver
from .tagged import TAGGED_STRING_FUNCTION, encode_quantity, encode_semver

# cel.expr.Expr field numbers
_ID, _CONST, _IDENT, _SELECT, _CALL, _LIST, _STRUCT, _COMPREHENSION = 2, 3, 4, 5, 6, 7, 8, 9
# cel.expr.CheckedExpr field numbers
_REFERENCE_MAP, _TYPE_MAP, _EXPR = 2, 3, 4
# cel.expr.ParsedExpr field number of its expression
_PARSED_EXPR = 2

_DYN_TYPE = w.encode(w.Message([w.length_field(1, b"")]))
_STRING_TYPE = w.encode(w.Message([w.varint_field(3, 5)]))
_MAP_DYN_DYN_TYPE = w.encode(
    w.Message([w.length_field(7, w.Message([w.length_field(1, _DYN_TYPE), w.length_field(2, _DYN_TYPE)]))])
)
_DOMAIN_MAPS = ("attributes", "capacity")


@dataclass
class Node:
    """A read-only view of one CEL expression node (enough for cost estimation)."""

    kind: str  # const | ident | select | call | list | map | comprehension
    name: str = ""  # ident name, select field, call function, comprehension iter var
    value: object = None  # constant value
    children: list[Node] = field(default_factory=list)  # call: [target?] + args; list/map: items
    has_target: bool = False
    test_only: bool = False
    # comprehension parts
    iter_range: Node | None = None
    accu_init: Node | None = None
    loop_condition: Node | None = None
    loop_step: Node | None = None
    result: Node | None = None


def _const_value(message: w.Message) -> object:
    f = message.fields[0] if message.fields else None
    if f is None:
        return None
    if f.number == 1:
        return None
    if f.number == 2:
        return bool(f.value)
    if f.number in (3, 4):
        assert isinstance(f.value, int)
        return f.value - (1 << 64) if f.number == 3 and f.value >= 1 << 63 else f.value
    if f.number == 5:
        assert isinstance(f.value, bytes)
        return struct.unpack("<d", f.value)[0]
    if f.number == 6:
        assert isinstance(f.value, bytes)
        return f.value.decode("utf-8")
    return f.value


def _optional_node(body: w.Message, number: int) -> Node | None:
    sub = body.message_of(number)
    return to_node(sub) if sub is not None else None


def to_node(expr: w.Message) -> Node:
    for f in expr.fields:
        if f.number == _ID or not isinstance(f.value, bytes):
            continue
        body = w.decode(f.value)
        if f.number == _CONST:
            return Node("const", value=_const_value(body))
        if f.number == _IDENT:
            return Node("ident", name=body.string_of(1) or "")
        if f.number == _SELECT:
            operand = body.message_of(1)
            return Node(
                "select",
                name=body.string_of(2) or "",
                children=[to_node(operand)] if operand is not None else [],
                test_only=bool(body.int_of(3)),
            )
        if f.number == _CALL:
            target = body.message_of(1)
            children = [to_node(target)] if target is not None else []
            children += [to_node(w.decode(a.value)) for a in body.get_all(3) if isinstance(a.value, bytes)]
            return Node(
                "call", name=body.string_of(2) or "", children=children, has_target=target is not None
            )
        if f.number == _LIST:
            return Node(
                "list",
                children=[to_node(w.decode(e.value)) for e in body.get_all(1) if isinstance(e.value, bytes)],
            )
        if f.number == _STRUCT:
            items: list[Node] = []
            for entry_field in body.get_all(2):
                assert isinstance(entry_field.value, bytes)
                entry = w.decode(entry_field.value)
                for entry_part in (entry.message_of(3), entry.message_of(4)):
                    if entry_part is not None:
                        items.append(to_node(entry_part))
            return Node("map", name=body.string_of(1) or "", children=items)
        if f.number == _COMPREHENSION:
            return Node(
                "comprehension",
                name=body.string_of(1) or "",
                value=body.string_of(3) or "@result",
                iter_range=_optional_node(body, 2),
                accu_init=_optional_node(body, 4),
                loop_condition=_optional_node(body, 5),
                loop_step=_optional_node(body, 6),
                result=_optional_node(body, 7),
            )
    return Node("const", value=None)


_ORDERING = ("_<_", "_<=_", "_>_", "_>=_")
_LITERAL_ARGUMENTS = {
    "duration": "duration",
    "timestamp": "timestamp",
    "matches": "re2",
    "find": "python-regex",
    "findAll": "python-regex",
}


class _Rewriter:
    def __init__(self, next_id: int, overloads: dict[int, list[str]], node_types: dict[int, bytes]) -> None:
        self.overloads = overloads  # the checker's overload choices per call id
        self.aliases: frozenset[str] = frozenset()  # names bound to device.attributes/capacity (cel.bind)
        self.node_types = node_types  # the checker's type per node id (serialized cel.expr.Type)
        self.problems: list[str] = []
        self.literals: list[tuple[str, str]] = []
        self.next_id = next_id
        self.references: dict[int, bytes] = {}
        self.types: dict[int, bytes] = {}
        self.dropped_references: set[int] = set()
        self.changed = False

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def expr(self, message: w.Message) -> w.Message:
        """Rewrite children first, then this node."""
        expr_id = message.int_of(_ID) or 0
        self._check_ordering(expr_id, message)
        self._check_homogeneous_literal(message)
        self._collect_literal(message)
        out = w.Message()
        for f in message.fields:
            if f.number in (_SELECT, _CALL, _LIST, _STRUCT, _COMPREHENSION) and isinstance(f.value, bytes):
                out.fields.append(w.length_field(f.number, self._body(f.number, w.decode(f.value))))
            else:
                out.fields.append(f)
        self._route_tagged_string(expr_id, out)
        folded = self._fold_constant_constructor(expr_id, out)
        if folded is not None:
            return folded
        domain_lookup = self._domain_lookup(out)
        if domain_lookup is None:
            return out
        map_operand, key = domain_lookup
        return self._optional_lookup(expr_id, map_operand, key)

    def _check_ordering(self, expr_id: int, message: w.Message) -> None:
        """Quantity and Semver travel as bytes, so `<` would silently work on them; upstream has no such overload."""
        call = message.message_of(_CALL)
        if call is None or call.string_of(2) not in _ORDERING:
            return
        chosen = self.overloads.get(expr_id, [])
        if not chosen or not all(overload.endswith("_bytes") for overload in chosen):
            return
        args = [to_node(w.decode(a.value)) for a in call.get_all(3) if isinstance(a.value, bytes)]
        if all(a.kind == "const" and isinstance(a.value, bytes) for a in args):
            return  # genuine bytes literals
        self.problems.append(
            f"found no matching overload for '{call.string_of(2)}' applied to Kubernetes values "
            "(Quantity, Semver, IP, CIDR); use compareTo(), isLessThan() or isGreaterThan()"
        )

    def _collect_literal(self, message: w.Message) -> None:
        """Literal durations, timestamps and regexes, which Kubernetes validates at compile time."""
        call = message.message_of(_CALL)
        if call is None:
            return
        name = call.string_of(2) or ""
        kind = _LITERAL_ARGUMENTS.get(name)
        if kind is None:
            return
        args = [to_node(w.decode(a.value)) for a in call.get_all(3) if isinstance(a.value, bytes)]
        # duration("…")/timestamp("…"): the first argument; matches/find/findAll: the pattern, last of
        # the receiver-style arguments (global `matches(s, re)` has two args, member forms one or two).
        index = 0 if kind in ("duration", "timestamp") else (1 if call.first(1) is None else 0)
        if index < len(args) and args[index].kind == "const" and isinstance(args[index].value, str):
            self.literals.append((kind, str(args[index].value)))

    def _route_tagged_string(self, expr_id: int, message: w.Message) -> None:
        """`string(x)` on bytes: cel-cpp owns that overload; Kubernetes values need their own conversion."""
        call_field = next(
            (f for f in message.fields if f.number == _CALL and isinstance(f.value, bytes)), None
        )
        if call_field is None:
            return
        assert isinstance(call_field.value, bytes)
        call = w.decode(call_field.value)
        if (
            call.string_of(2) != "string"
            or call.first(1) is not None
            or self.overloads.get(expr_id) != ["bytes_to_string"]
        ):
            return
        call.fields = [w.length_field(2, TAGGED_STRING_FUNCTION) if f.number == 2 else f for f in call.fields]
        call_field.value = w.encode(call)
        self.changed = True
        self.references[expr_id] = _reference(TAGGED_STRING_FUNCTION, "kubernetes_tagged_to_string")
        self.dropped_references.add(expr_id)

    def _check_homogeneous_literal(self, message: w.Message) -> None:
        """Kubernetes enables HomogeneousAggregateLiterals: `[1, "a"]` is a compile error; cel-cpp allows it."""
        groups: list[list[int]] = []
        listed = message.message_of(_LIST)
        if listed is not None:
            groups.append(
                [w.decode(e.value).int_of(_ID) or 0 for e in listed.get_all(1) if isinstance(e.value, bytes)]
            )
        built = message.message_of(_STRUCT)
        if built is not None and not built.string_of(1):
            keys, values = [], []
            for entry_field in built.get_all(2):
                if isinstance(entry_field.value, bytes):
                    entry = w.decode(entry_field.value)
                    key, value = entry.message_of(3), entry.message_of(4)
                    keys.append(key.int_of(_ID) or 0 if key is not None else 0)
                    values.append(value.int_of(_ID) or 0 if value is not None else 0)
            groups += [keys, values]
        for ids in groups:
            kinds = [self.node_types.get(i) for i in ids]
            concrete = [k for k in kinds if k is not None and k != _DYN_TYPE]
            if len(set(concrete)) > 1:
                first, other = concrete[0], next(k for k in concrete if k != concrete[0])
                self.problems.append(
                    f"expected type '{_type_name(first)}' but found '{_type_name(other)}' in a list or map literal"
                )
                return

    def _fold_constant_constructor(self, expr_id: int, message: w.Message) -> w.Message | None:
        """``quantity("40Gi")`` / ``semver("1.2.0")`` with literal arguments become their tagged-bytes literal.

        Saves a Python callback per evaluation. Invalid literals are left alone so they still fail at
        runtime, as upstream does.
        """
        call = message.message_of(_CALL)
        if call is None or call.first(1) is not None or call.string_of(2) not in _CONSTANT_CONSTRUCTORS:
            return None
        args = [to_node(w.decode(a.value)) for a in call.get_all(3) if isinstance(a.value, bytes)]
        if not args or any(a.kind != "const" for a in args):
            return None
        try:
            tagged = _CONSTANT_CONSTRUCTORS[call.string_of(2) or ""](*[a.value for a in args])
        except (ValueError, TypeError):
            return None
        self.changed = True
        self.dropped_references.add(expr_id)
        return w.Message(
            [w.varint_field(_ID, expr_id), w.length_field(_CONST, w.Message([w.length_field(7, tagged)]))]
        )

    def _body(self, kind: int, body: w.Message) -> w.Message:
        # Every nested Expr lives in a length-delimited field; which ones depends on the node kind.
        nested = {
            _SELECT: {1},
            _CALL: {1, 3},
            _LIST: {1},
            _COMPREHENSION: {2, 4, 5, 6, 7},
        }.get(kind, set())
        inner_aliases = self._comprehension_aliases(body) if kind == _COMPREHENSION else self.aliases
        out = w.Message()
        for f in body.fields:
            if f.number in nested and isinstance(f.value, bytes):
                if kind == _COMPREHENSION and f.number in (5, 6, 7):
                    outer, self.aliases = self.aliases, inner_aliases
                    out.fields.append(w.length_field(f.number, self.expr(w.decode(f.value))))
                    self.aliases = outer
                else:
                    out.fields.append(w.length_field(f.number, self.expr(w.decode(f.value))))
            elif kind == _STRUCT and f.number == 2 and isinstance(f.value, bytes):
                entry = w.decode(f.value)
                new_entry = w.Message(
                    [
                        w.length_field(e.number, self.expr(w.decode(e.value)))
                        if e.number in (3, 4) and isinstance(e.value, bytes)
                        else e
                        for e in entry.fields
                    ]
                )
                out.fields.append(w.length_field(2, new_entry))
            else:
                out.fields.append(f)
        return out

    def _comprehension_aliases(self, body: w.Message) -> frozenset[str]:
        """Names bound to ``device.attributes``/``device.capacity`` inside a comprehension's body.

        ``cel.bind(a, device.attributes, …)`` is a comprehension over an empty list whose accumulator is
        the bound value; the comprehension's own variables shadow outer aliases.
        """
        bound = {body.string_of(n) for n in (1, 3, 8)} - {None}
        aliases = self.aliases - bound
        iter_range, accu_init = body.message_of(2), body.message_of(4)
        empty_range = (
            iter_range is not None
            and (listed := iter_range.message_of(_LIST)) is not None
            and not listed.fields
        )
        if empty_range and accu_init is not None and self._is_device_domain_map(accu_init):
            aliases |= {body.string_of(3) or ""}
        return frozenset(aliases)

    def _is_device_domain_map(self, message: w.Message) -> bool:
        ident = message.message_of(_IDENT)
        if ident is not None:
            return ident.string_of(1) in self.aliases
        select = message.message_of(_SELECT)
        if select is None or select.int_of(3) or select.string_of(2) not in _DOMAIN_MAPS:
            return False
        operand = select.message_of(1)
        ident = operand.message_of(_IDENT) if operand is not None else None
        return ident is not None and ident.string_of(1) == "device"

    def _domain_lookup(self, message: w.Message) -> tuple[w.Message, w.Message] | None:
        """(the device.attributes/capacity node, the key node) when this node looks a domain up."""
        call = message.message_of(_CALL)
        if call is not None:
            args = [w.decode(a.value) for a in call.get_all(3) if isinstance(a.value, bytes)]
            if (
                call.string_of(2) == "_[_]"
                and call.first(1) is None
                and len(args) == 2
                and self._is_device_domain_map(args[0])
            ):
                return args[0], args[1]
            return None
        select = message.message_of(_SELECT)
        if select is not None and not select.int_of(3):
            operand = select.message_of(1)
            if operand is not None and self._is_device_domain_map(operand):
                key_id = self.new_id()
                self.types[key_id] = _STRING_TYPE
                key = w.Message(
                    [
                        w.varint_field(_ID, key_id),
                        w.length_field(_CONST, w.Message([w.length_field(6, select.string_of(2) or "")])),
                    ]
                )
                return operand, key
        return None

    def _optional_lookup(self, expr_id: int, map_operand: w.Message, key: w.Message) -> w.Message:
        self.changed = True
        inner_id, empty_id = self.new_id(), self.new_id()
        inner = w.Message(
            [
                w.varint_field(_ID, inner_id),
                w.length_field(
                    _CALL,
                    w.Message(
                        [w.length_field(2, "_[?_]"), w.length_field(3, map_operand), w.length_field(3, key)]
                    ),
                ),
            ]
        )
        empty = w.Message([w.varint_field(_ID, empty_id), w.length_field(_STRUCT, b"")])
        self.types[inner_id] = _DYN_TYPE
        self.types[empty_id] = _MAP_DYN_DYN_TYPE
        self.references[inner_id] = _reference("_[?_]", "map_optindex_optional_value")
        self.references[expr_id] = _reference("orValue", "optional_orValue_value")
        self.dropped_references.add(expr_id)
        return w.Message(
            [
                w.varint_field(_ID, expr_id),
                w.length_field(
                    _CALL,
                    w.Message(
                        [w.length_field(1, inner), w.length_field(2, "orValue"), w.length_field(3, empty)]
                    ),
                ),
            ]
        )


def _string_const(expr_id: int, text: str) -> w.Message:
    return w.Message(
        [w.varint_field(_ID, expr_id), w.length_field(_CONST, w.Message([w.length_field(6, text)]))]
    )


def _fold_quantity(text: object) -> bytes:
    if not isinstance(text, str):
        raise TypeError(text)
    return encode_quantity(Quantity.parse(text))


def _fold_semver(text: object, normalize: object = False) -> bytes:
    if not isinstance(text, str) or not isinstance(normalize, bool):
        raise TypeError(text)
    return encode_semver(Semver.parse(text, normalize=normalize))


_CONSTANT_CONSTRUCTORS: dict[str, Callable[..., bytes]] = {
    "quantity": _fold_quantity,
    "semver": _fold_semver,
}


def _reference(name: str, overload_id: str) -> bytes:
    return w.encode(w.Message([w.length_field(1, name), w.length_field(3, overload_id)]))


_NESTED_EXPRS = {_SELECT: (1,), _CALL: (1, 3), _LIST: (1,), _COMPREHENSION: (2, 4, 5, 6, 7)}


def _max_expr_id(expr: w.Message) -> int:
    highest = expr.int_of(_ID) or 0
    for f in expr.fields:
        if not isinstance(f.value, bytes):
            continue
        if f.number in _NESTED_EXPRS:
            body = w.decode(f.value)
            for g in body.fields:
                if g.number in _NESTED_EXPRS[f.number] and isinstance(g.value, bytes):
                    highest = max(highest, _max_expr_id(w.decode(g.value)))
        elif f.number == _STRUCT:
            for entry_field in w.decode(f.value).get_all(2):
                if isinstance(entry_field.value, bytes):
                    entry = w.decode(entry_field.value)
                    highest = max(highest, entry.int_of(1) or 0)
                    for part in (entry.message_of(3), entry.message_of(4)):
                        if part is not None:
                            highest = max(highest, _max_expr_id(part))
    return highest


@dataclass
class Rewritten:
    serialized: bytes | None  # the edited AST, or None when nothing changed
    root: Node  # the (edited) expression tree, for the cost estimator
    problems: list[str]  # compile-time errors found while walking (reported as CelError by the engine)
    literals: list[tuple[str, str]]  # (kind, text) of literal arguments the engine validates at compile time


_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_TYPE_KINDS = {1: "dyn", 2: "null", 6: "list", 7: "map", 9: "message", 11: "type", 12: "error"}


def _type_name(serialized: bytes) -> str:
    message = w.decode(serialized)
    first = message.fields[0] if message.fields else None
    if first is None:
        return "unknown"
    if first.number == 3 and isinstance(first.value, int):
        return _PRIMITIVES.get(first.value, "primitive")
    if first.number == 4 and isinstance(first.value, int):
        return {1: "any", 2: "bool", 3: "int", 4: "uint", 5: "double", 6: "string", 7: "bytes"}.get(
            first.value, "wrapper"
        )
    if first.number == 5 and isinstance(first.value, int):
        return {1: "google.protobuf.Any", 2: "timestamp", 3: "duration"}.get(first.value, "well-known")
    return _TYPE_KINDS.get(first.number, "type")


def _node_types(container: w.Message) -> dict[int, bytes]:
    types: dict[int, bytes] = {}
    for f in container.get_all(_TYPE_MAP):
        if isinstance(f.value, bytes):
            entry = w.decode(f.value)
            types[entry.int_of(1) or 0] = entry.bytes_of(2) or b""
    return types


def _overload_choices(container: w.Message) -> dict[int, list[str]]:
    choices: dict[int, list[str]] = {}
    for f in container.get_all(_REFERENCE_MAP):
        if isinstance(f.value, bytes):
            entry = w.decode(f.value)
            reference = entry.message_of(2)
            if reference is not None:
                ids = [g.value.decode() for g in reference.get_all(3) if isinstance(g.value, bytes)]
                choices[entry.int_of(1) or 0] = ids
    return choices


def rewrite_checked_expr(serialized: bytes) -> Rewritten:
    """Edit the AST: fold constant constructors, default unknown domains, find ordering misuse.

    Accepts a serialized ``CheckedExpr`` (normal case) or ``ParsedExpr`` (expressions compiled without
    the type checker, see the engine's cross-type numeric comparison fallback).
    """
    any_message = w.decode(serialized)
    checked_form = (any_message.string_of(1) or "").endswith("CheckedExpr")
    expr_field = _EXPR if checked_form else _PARSED_EXPR
    container = w.decode(any_message.bytes_of(2) or b"")
    expr = container.message_of(expr_field) or w.Message()
    rewriter = _Rewriter(
        _max_expr_id(expr),
        _overload_choices(container) if checked_form else {},
        _node_types(container) if checked_form else {},
    )
    new_expr = rewriter.expr(expr)
    root = to_node(new_expr)
    if not rewriter.changed:
        return Rewritten(None, root, rewriter.problems, rewriter.literals)
    new_container = w.Message()
    for f in container.fields:
        if f.number == expr_field:
            continue
        if (
            checked_form
            and f.number == _REFERENCE_MAP
            and isinstance(f.value, bytes)
            and (w.decode(f.value).int_of(1) or 0) in rewriter.dropped_references
        ):
            continue
        new_container.fields.append(f)
    if checked_form:
        for ref_id, reference in rewriter.references.items():
            new_container.fields.append(
                w.length_field(
                    _REFERENCE_MAP, w.Message([w.varint_field(1, ref_id), w.length_field(2, reference)])
                )
            )
        for type_id, type_bytes in rewriter.types.items():
            new_container.fields.append(
                w.length_field(
                    _TYPE_MAP, w.Message([w.varint_field(1, type_id), w.length_field(2, type_bytes)])
                )
            )
    new_container.fields.append(w.length_field(expr_field, new_expr))
    new_any = w.Message(
        [f if f.number != 2 else w.length_field(2, new_container) for f in any_message.fields]
    )
    return Rewritten(w.encode(new_any), root, rewriter.problems, rewriter.literals)
