"""A read-only view of cel-expr-python's serialized AST (``cel.expr.CheckedExpr`` / ``ParsedExpr``).

Field numbers follow ``cel/expr/checked.proto`` and ``syntax.proto``; messages are read with the small
wire codec in :mod:`._wire`.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass, field

from . import _wire as w

# cel.expr.Expr field numbers
ID, CONST, IDENT, SELECT, CALL, LIST, STRUCT, COMPREHENSION = 2, 3, 4, 5, 6, 7, 8, 9
# cel.expr.CheckedExpr field numbers
REFERENCE_MAP, TYPE_MAP, EXPR = 2, 3, 4
# cel.expr.ParsedExpr field number of its expression
PARSED_EXPR = 2
# source info (node id -> offset) in a CheckedExpr and in a ParsedExpr
SOURCE_INFO, PARSED_SOURCE_INFO = 5, 3

DYN_TYPE = w.encode(w.Message([w.length_field(1, b"")]))
STRING_TYPE = w.encode(w.Message([w.varint_field(3, 5)]))
BOOL_TYPE = w.encode(w.Message([w.varint_field(3, 1)]))
BYTES_TYPE = w.encode(w.Message([w.varint_field(3, 6)]))
MAP_DYN_DYN_TYPE = w.encode(
    w.Message([w.length_field(7, w.Message([w.length_field(1, DYN_TYPE), w.length_field(2, DYN_TYPE)]))])
)


@dataclass
class Node:
    """A read-only view of one CEL expression node (enough for cost estimation)."""

    kind: str  # const | ident | select | call | list | map | comprehension
    name: str = ""  # ident name, select field, call function, comprehension iter var, constant's type
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
    iter_var2: str = ""  # a two-variable comprehension's second variable
    offset: int = -1  # where cel-go places the node in the expression (code points), when known


_CONST_KINDS = {1: "null", 2: "bool", 3: "int", 4: "uint", 5: "double", 6: "string", 7: "bytes"}


def const_kind(message: w.Message) -> str:
    f = message.fields[0] if message.fields else None
    return _CONST_KINDS.get(f.number, "") if f is not None else "null"


def const_value(message: w.Message) -> object:
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


def _optional_node(body: w.Message, number: int, positions: dict[int, int] | None) -> Node | None:
    sub = body.message_of(number)
    return to_node(sub, positions) if sub is not None else None


def to_node(expr: w.Message, positions: dict[int, int] | None = None) -> Node:
    """The view of an expression; ``positions`` (source info: node id to offset) fills in ``offset``."""
    node = _to_node(expr, positions)
    if positions is not None:
        node.offset = positions.get(expr.int_of(ID) or 0, -1)
    return node


def _to_node(expr: w.Message, positions: dict[int, int] | None) -> Node:
    for f in expr.fields:
        if f.number == ID or not isinstance(f.value, bytes):
            continue
        body = w.decode_shared(f.value)
        if f.number == CONST:
            return Node("const", name=const_kind(body), value=const_value(body))
        if f.number == IDENT:
            return Node("ident", name=body.string_of(1) or "")
        if f.number == SELECT:
            operand = body.message_of(1)
            return Node(
                "select",
                name=body.string_of(2) or "",
                children=[to_node(operand, positions)] if operand is not None else [],
                test_only=bool(body.int_of(3)),
            )
        if f.number == CALL:
            target = body.message_of(1)
            children = [to_node(target, positions)] if target is not None else []
            children += [
                to_node(w.decode_shared(a.value), positions)
                for a in body.get_all(3)
                if isinstance(a.value, bytes)
            ]
            return Node(
                "call", name=body.string_of(2) or "", children=children, has_target=target is not None
            )
        if f.number == LIST:
            return Node(
                "list",
                children=[
                    to_node(w.decode_shared(e.value), positions)
                    for e in body.get_all(1)
                    if isinstance(e.value, bytes)
                ],
            )
        if f.number == STRUCT:
            items: list[Node] = []
            for entry_field in body.get_all(2):
                assert isinstance(entry_field.value, bytes)
                entry = w.decode_shared(entry_field.value)
                for entry_part in (entry.message_of(3), entry.message_of(4)):
                    if entry_part is not None:
                        items.append(to_node(entry_part, positions))
            return Node("map", name=body.string_of(1) or "", children=items)
        if f.number == COMPREHENSION:
            return Node(
                "comprehension",
                name=body.string_of(1) or "",
                value=body.string_of(3) or "@result",
                iter_range=_optional_node(body, 2, positions),
                accu_init=_optional_node(body, 4, positions),
                loop_condition=_optional_node(body, 5, positions),
                loop_step=_optional_node(body, 6, positions),
                result=_optional_node(body, 7, positions),
                iter_var2=body.string_of(8) or "",
            )
    return Node("const", value=None)


NESTED_EXPRS = {SELECT: (1,), CALL: (1, 3), LIST: (1,), COMPREHENSION: (2, 4, 5, 6, 7)}


def max_expr_id(expr: w.Message) -> int:
    highest = expr.int_of(ID) or 0
    for f in expr.fields:
        if not isinstance(f.value, bytes):
            continue
        if f.number in NESTED_EXPRS:
            body = w.decode(f.value)
            for g in body.fields:
                if g.number in NESTED_EXPRS[f.number] and isinstance(g.value, bytes):
                    highest = max(highest, max_expr_id(w.decode(g.value)))
        elif f.number == STRUCT:
            for entry_field in w.decode(f.value).get_all(2):
                if isinstance(entry_field.value, bytes):
                    entry = w.decode(entry_field.value)
                    highest = max(highest, entry.int_of(1) or 0)
                    for part in (entry.message_of(3), entry.message_of(4)):
                        if part is not None:
                            highest = max(highest, max_expr_id(part))
    return highest


_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_TYPE_KINDS = {1: "dyn", 2: "null", 6: "list", 7: "map", 9: "message", 11: "type", 12: "error"}


def type_name(serialized: bytes) -> str:
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


def node_types(container: w.Message) -> dict[int, bytes]:
    types: dict[int, bytes] = {}
    for f in container.get_all(TYPE_MAP):
        if isinstance(f.value, bytes):
            entry = w.decode(f.value)
            types[entry.int_of(1) or 0] = entry.bytes_of(2) or b""
    return types


def overload_choices(container: w.Message) -> dict[int, list[str]]:
    choices: dict[int, list[str]] = {}
    for f in container.get_all(REFERENCE_MAP):
        if isinstance(f.value, bytes):
            entry = w.decode(f.value)
            reference = entry.message_of(2)
            if reference is not None:
                ids = [g.value.decode() for g in reference.get_all(3) if isinstance(g.value, bytes)]
                choices[entry.int_of(1) or 0] = ids
    return choices


@functools.lru_cache(maxsize=1024)
def contains_optional(serialized: bytes) -> bool:
    """Whether a serialized cel.expr.Type is, or contains, ``optional_type``."""
    message = w.decode(serialized)
    for f in message.fields:
        if not isinstance(f.value, bytes):
            continue
        if f.number == 14:  # abstract_type {name, parameter_types}
            abstract = w.decode(f.value)
            if abstract.string_of(1) == "optional_type":
                return True
            return any(contains_optional(p.value) for p in abstract.get_all(2) if isinstance(p.value, bytes))
        if f.number == 6:  # list_type {elem_type}
            elem = w.decode(f.value).bytes_of(1)
            return elem is not None and contains_optional(elem)
        if f.number == 7:  # map_type {key_type, value_type}
            entry = w.decode(f.value)
            return any(contains_optional(part) for part in (entry.bytes_of(1), entry.bytes_of(2)) if part)
    return False


def written_tree(serialized: bytes) -> Node:
    """The expression of a serialized ``CheckedExpr`` or ``ParsedExpr`` as written (before any rewrite),
    each node with its offset in the source."""
    any_message = w.decode(serialized)
    checked_form = (any_message.string_of(1) or "").endswith("CheckedExpr")
    container = w.decode(any_message.bytes_of(2) or b"")
    source_info = container.message_of(SOURCE_INFO if checked_form else PARSED_SOURCE_INFO)
    positions: dict[int, int] = {}
    if source_info is not None:
        for f in source_info.get_all(4):
            if isinstance(f.value, bytes):
                node_id, offset = _varint_pair(f.value)
                positions[node_id] = offset
    expr = container.message_of(EXPR if checked_form else PARSED_EXPR) or w.Message()
    return to_node(expr, positions)


def _varint_pair(entry: bytes) -> tuple[int, int]:
    """A map entry ``{1: key, 2: value}`` of two varints (read without building a message: there is one
    per node)."""
    values = {1: 0, 2: 0}
    pos = 0
    while pos < len(entry):
        key, pos = w.read_varint(entry, pos)
        values[key >> 3], pos = w.read_varint(entry, pos)
    return values[1], values[2]
