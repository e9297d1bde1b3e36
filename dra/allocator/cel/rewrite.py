"""Edits on the checked AST that cel-expr-python serializes, loaded back with ``Env.deserialize``.

1. Constant folding: ``quantity("40Gi")``, ``semver("1.2.0")``, ``ip("…")`` and ``cidr("…")`` with
   literal arguments become tagged-bytes literals, so evaluation makes no Python call for them.
2. Unknown domain → empty map: ``device.attributes[d]`` and ``device.capacity[d]`` (and the select form
   ``device.attributes.d``, and the same through a ``cel.bind`` name for them) become
   ``device.attributes[?d].orValue({})``.
3. ``string(x)`` on bytes goes to the Kubernetes conversion (``kubernetes.string``).
4. Checks Kubernetes makes and cel-cpp does not: homogeneous aggregate literals, no ordering operators
   on Kubernetes values; literal durations, timestamps and regexes are collected for the engine to
   validate.
The edited tree is also returned as :class:`~.checked_ast.Node` objects for the cost estimator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dra.quantity import Quantity

from . import _wire as w
from . import library_net
from .checked_ast import (
    BOOL_TYPE,
    BYTES_TYPE,
    CALL,
    COMPREHENSION,
    CONST,
    DYN_TYPE,
    EXPR,
    ID,
    IDENT,
    LIST,
    MAP_DYN_DYN_TYPE,
    NESTED_EXPRS,
    PARSED_EXPR,
    REFERENCE_MAP,
    SELECT,
    STRING_TYPE,
    STRUCT,
    TYPE_MAP,
    Node,
    contains_optional,
    max_expr_id,
    node_types,
    overload_choices,
    to_node,
    type_name,
)
from .semver import Semver
from .tagged import (
    EQUALITY_GUARD_FUNCTION,
    ITERABLE_GUARD_FUNCTION,
    TAGGED_STRING_FUNCTION,
    encode_quantity,
    encode_semver,
)

_DOMAIN_MAPS = ("attributes", "capacity")
_DEVICE_SHADOWED = "#device"  # in aliases: a comprehension variable named `device` hides the real one
_OPTIONAL_CONSTRUCTS = frozenset(
    {
        "_?._",
        "_[?_]",
        "of",
        "none",
        "ofNonZeroValue",
        "optional.of",
        "optional.none",
        "optional.ofNonZeroValue",
    }
)  # expressions that make optional values (refused in unchecked expressions)


_ORDERING = ("_<_", "_<=_", "_>_", "_>=_")
_BYTES_OPERATORS = (*_ORDERING, "_+_")
_LITERAL_ARGUMENTS = {
    "duration": "duration",
    "timestamp": "timestamp",
    "matches": "re2",
    "find": "python-regex",
    "findAll": "python-regex",
}


class _Rewriter:
    def __init__(
        self,
        next_id: int,
        overloads: dict[int, list[str]],
        node_types: dict[int, bytes],
        python_functions: frozenset[str],
        checked: bool,
        raw_references: dict[int, bytes] | None = None,
        guard_ranges: bool = False,
    ) -> None:
        self.python_functions = python_functions
        self.guard_ranges = guard_ranges  # wrap comprehension ranges in the iterable guard (diagnosis)
        self.raw_references = raw_references or {}  # serialized cel.expr.Reference per node id
        self.checked = checked
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
        expr_id = message.int_of(ID) or 0
        self._check_ordering(expr_id, message)
        self._check_optional_flow(expr_id, message)
        self._check_homogeneous_literal(message)
        self._collect_literal(message)
        out = w.Message()
        for f in message.fields:
            if f.number in (SELECT, CALL, LIST, STRUCT, COMPREHENSION) and isinstance(f.value, bytes):
                # read-only: shared with the written tree device_types.py read before
                out.fields.append(w.length_field(f.number, self._body(f.number, w.decode_shared(f.value))))
            else:
                out.fields.append(f)
        self._route_tagged_string(expr_id, out)
        guarded = self._guard_equality(expr_id, out)
        if guarded is not None:
            return guarded
        folded = self._fold_constant_constructor(expr_id, out)
        if folded is not None:
            return folded
        domain_lookup = self._domain_lookup(out)
        if domain_lookup is None:
            return out
        map_operand, key = domain_lookup
        return self._optional_lookup(expr_id, map_operand, key)

    def _check_optional_flow(self, expr_id: int, message: w.Message) -> None:
        """Keep optional values away from Python: cel-expr-python crashes the process converting them.

        Checked expressions: an optional-typed value may not be an argument of a Python-implemented
        function or of ``dyn()``, nor be hidden inside a ternary or literal whose type is not optional.
        Unchecked expressions (see the engine's cross-type fallback) have no types, so optional
        constructs are refused outright there.
        """
        call = message.message_of(CALL)
        name = call.string_of(2) if call is not None else None
        if not self.checked:
            if name in _OPTIONAL_CONSTRUCTS:
                self.problems.append(
                    "optional values cannot be combined with int/double comparisons such as 1 < 2.5 "
                    "(cel-expr-python limitation); compare numbers of one type"
                )
            return
        self._check_hidden_optional_index(name, message)
        children = _child_ids(message)
        if not any(contains_optional(self.node_types.get(child, b"")) for child in children):
            return
        if call is not None and (name in self.python_functions or name == "dyn"):
            self.problems.append(
                f"an optional value cannot be passed to {name}(); unwrap it first with .orValue(default)"
            )
            return
        hides = (call is not None and name == "_?_:_") or message.message_of(LIST) is not None
        hides = hides or message.message_of(STRUCT) is not None
        if hides and not contains_optional(self.node_types.get(expr_id, b"")):
            self.problems.append(
                "an optional value is mixed with other values here; unwrap it first with .orValue(default)"
            )

    def _check_hidden_optional_index(self, name: str | None, message: w.Message) -> None:
        """``x[?k]`` on a ``dyn`` x is typed ``dyn`` by the checker although it yields an optional.

        Such a value may only be unwrapped right away (``.orValue()``, ``.hasValue()``, ``.value()``,
        ``.or()``, or chained ``[?…]``/``.?``); anything else could carry it into Python.
        """
        for role, child in _direct_children(message):
            child_call = child.message_of(CALL)
            if child_call is None or child_call.string_of(2) != "_[?_]":
                continue
            if contains_optional(self.node_types.get(child.int_of(ID) or 0, b"")):
                continue  # statically optional: the type-based checks cover it
            unwrapped = (role == "target" and name in _OPTIONAL_CONSUMERS) or (
                role == "arg0" and name in ("_?._", "_[?_]")
            )
            if not unwrapped:
                self.problems.append(
                    "an optional lookup x[?key] on a dynamic value must be unwrapped right away, "
                    "e.g. x[?key].orValue(default)"
                )
                return

    def _check_ordering(self, expr_id: int, message: w.Message) -> None:
        """Kubernetes values travel as bytes, so `<` or `+` would silently work on them; upstream refuses."""
        call = message.message_of(CALL)
        if call is None or call.string_of(2) not in _BYTES_OPERATORS:
            return
        chosen = self.overloads.get(expr_id, [])
        if not chosen or not all(overload.endswith("_bytes") for overload in chosen):
            return
        args = [to_node(w.decode(a.value)) for a in call.get_all(3) if isinstance(a.value, bytes)]
        if all(a.kind == "const" and isinstance(a.value, bytes) for a in args):
            return  # genuine bytes literals
        hint = (
            "add() or sub()" if call.string_of(2) == "_+_" else "compareTo(), isLessThan() or isGreaterThan()"
        )
        self.problems.append(
            f"found no matching overload for '{call.string_of(2)}' applied to Kubernetes values "
            f"(Quantity, Semver, IP, CIDR); use {hint}"
        )

    def _collect_literal(self, message: w.Message) -> None:
        """Literal durations, timestamps and regexes, which Kubernetes validates at compile time."""
        call = message.message_of(CALL)
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
            (f for f in message.fields if f.number == CALL and isinstance(f.value, bytes)), None
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
        listed = message.message_of(LIST)
        if listed is not None:
            groups.append(
                [w.decode(e.value).int_of(ID) or 0 for e in listed.get_all(1) if isinstance(e.value, bytes)]
            )
        built = message.message_of(STRUCT)
        if built is not None and not built.string_of(1):
            keys, values = [], []
            for entry_field in built.get_all(2):
                if isinstance(entry_field.value, bytes):
                    entry = w.decode(entry_field.value)
                    key, value = entry.message_of(3), entry.message_of(4)
                    keys.append(key.int_of(ID) or 0 if key is not None else 0)
                    values.append(value.int_of(ID) or 0 if value is not None else 0)
            groups += [keys, values]
        for ids in groups:
            kinds = [self.node_types.get(i) for i in ids]
            concrete = [k for k in kinds if k is not None and k != DYN_TYPE]
            if len(set(concrete)) > 1:
                first, other = concrete[0], next(k for k in concrete if k != concrete[0])
                self.problems.append(
                    f"expected type '{type_name(first)}' but found '{type_name(other)}' in a list or map literal"
                )
                return

    def _fold_constant_constructor(self, expr_id: int, message: w.Message) -> w.Message | None:
        """``quantity("40Gi")`` / ``semver("1.2.0")`` with literal arguments become their tagged-bytes literal.

        Saves a Python callback per evaluation. Invalid literals are left alone so they still fail at
        runtime, as upstream does.
        """
        call = message.message_of(CALL)
        if call is None or call.first(1) is not None or call.string_of(2) not in CONSTANT_CONSTRUCTORS:
            return None
        args = [to_node(w.decode(a.value)) for a in call.get_all(3) if isinstance(a.value, bytes)]
        if not args or any(a.kind != "const" for a in args):
            return None
        try:
            tagged = CONSTANT_CONSTRUCTORS[call.string_of(2) or ""](*[a.value for a in args])
        except (ValueError, TypeError):
            return None
        self.changed = True
        self.dropped_references.add(expr_id)
        return w.Message(
            [w.varint_field(ID, expr_id), w.length_field(CONST, w.Message([w.length_field(7, tagged)]))]
        )

    def _body(self, kind: int, body: w.Message) -> w.Message:
        # Every nested Expr lives in a length-delimited field; which ones depends on the node kind.
        nested = {
            SELECT: {1},
            CALL: {1, 3},
            LIST: {1},
            COMPREHENSION: {2, 4, 5, 6, 7},
        }.get(kind, set())
        inner_aliases = self._comprehension_aliases(body) if kind == COMPREHENSION else self.aliases
        out = w.Message()
        for f in body.fields:
            if f.number in nested and isinstance(f.value, bytes):
                if kind == COMPREHENSION and f.number in (5, 6, 7):
                    outer, self.aliases = self.aliases, inner_aliases
                    out.fields.append(w.length_field(f.number, self.expr(w.decode_shared(f.value))))
                    self.aliases = outer
                elif kind == COMPREHENSION and f.number == 2 and self.guard_ranges:
                    out.fields.append(
                        w.length_field(f.number, self._guard_range(self.expr(w.decode_shared(f.value))))
                    )
                else:
                    out.fields.append(w.length_field(f.number, self.expr(w.decode_shared(f.value))))
            elif kind == STRUCT and f.number == 2 and isinstance(f.value, bytes):
                entry = w.decode_shared(f.value)
                new_entry = w.Message(
                    [
                        w.length_field(e.number, self.expr(w.decode_shared(e.value)))
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
        if "device" in bound:
            aliases |= {_DEVICE_SHADOWED}
        iter_range, accu_init = body.message_of(2), body.message_of(4)
        empty_range = (
            iter_range is not None
            and (listed := iter_range.message_of(LIST)) is not None
            and not listed.fields
        )
        if empty_range and accu_init is not None and self._is_device_domain_map(accu_init):
            aliases |= {body.string_of(3) or ""}
        return frozenset(aliases)

    def _is_device_domain_map(self, message: w.Message) -> bool:
        ident = message.message_of(IDENT)
        if ident is not None:
            return ident.string_of(1) in self.aliases
        select = message.message_of(SELECT)
        if select is None or select.int_of(3) or select.string_of(2) not in _DOMAIN_MAPS:
            return False
        operand = select.message_of(1)
        ident = operand.message_of(IDENT) if operand is not None else None
        return ident is not None and ident.string_of(1) == "device"

    def _domain_lookup(self, message: w.Message) -> tuple[w.Message, w.Message] | None:
        """(the device.attributes/capacity node, the key node) when this node looks a domain up."""
        call = message.message_of(CALL)
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
        select = message.message_of(SELECT)
        if select is not None and not select.int_of(3):
            operand = select.message_of(1)
            if operand is not None and self._is_device_domain_map(operand):
                key_id = self.new_id()
                self.types[key_id] = STRING_TYPE
                key = w.Message(
                    [
                        w.varint_field(ID, key_id),
                        w.length_field(CONST, w.Message([w.length_field(6, select.string_of(2) or "")])),
                    ]
                )
                return operand, key
        return None

    def _guard_equality(self, expr_id: int, message: w.Message) -> w.Message | None:
        """``a == b`` with a dynamic ``a``: upstream errors when ``a`` is a Semver, IP or CIDR and ``b`` is not.

        cel-go calls ``a.Equal(b)``, and those types answer "no such overload" for a foreign ``b``
        (Quantity answers false, like cel-cpp). cel-cpp would just say false, so the comparison becomes
        ``kubernetes.equalityGuard(a, b) ? a == b : false``; the guard raises in exactly that case.
        """
        call = message.message_of(CALL)
        if not self.checked or call is None or call.string_of(2) not in ("_==_", "_!=_") or call.first(1):
            return None
        args = [w.decode(a.value) for a in call.get_all(3) if isinstance(a.value, bytes)]
        if len(args) != 2:
            return None
        left, right = (self.node_types.get(arg.int_of(ID) or 0, b"") for arg in args)
        if contains_optional(left) or contains_optional(right):
            return None  # never hand optionals to Python
        if not (left == DYN_TYPE or (left == BYTES_TYPE and right == DYN_TYPE)):
            return None
        self.changed = True
        guard_id, false_id, ternary_id = self.new_id(), self.new_id(), self.new_id()
        guard = w.Message(
            [
                w.varint_field(ID, guard_id),
                w.length_field(
                    CALL,
                    w.Message(
                        [
                            w.length_field(2, EQUALITY_GUARD_FUNCTION),
                            w.length_field(3, self._clone(args[0])),
                            w.length_field(3, self._clone(args[1])),
                        ]
                    ),
                ),
            ]
        )
        false = w.Message(
            [w.varint_field(ID, false_id), w.length_field(CONST, w.Message([w.varint_field(2, 0)]))]
        )
        for node_id in (guard_id, false_id, ternary_id):
            self.types[node_id] = BOOL_TYPE
        self.references[guard_id] = _reference(EQUALITY_GUARD_FUNCTION, "kubernetes_equality_guard")
        self.references[ternary_id] = _reference("_?_:_", "conditional")
        return w.Message(
            [
                w.varint_field(ID, ternary_id),
                w.length_field(
                    CALL,
                    w.Message(
                        [
                            w.length_field(2, "_?_:_"),
                            w.length_field(3, guard),
                            w.length_field(3, message),
                            w.length_field(3, false),
                        ]
                    ),
                ),
            ]
        )

    def _guard_range(self, iter_range: w.Message) -> w.Message:
        """``kubernetes.iterableGuard(range)``: the range itself, or cel-go's error naming its type.

        Only in the program the engine builds to explain cel-cpp's "no matching overloads found :
        <iter_range>" (which names no type); list literals (and ``cel.bind``'s empty range) need none.
        """
        if iter_range.message_of(LIST) is not None:
            return iter_range
        self.changed = True
        guard_id = self.new_id()
        self.types[guard_id] = DYN_TYPE
        self.references[guard_id] = _reference(ITERABLE_GUARD_FUNCTION, "kubernetes_iterable_guard")
        return w.Message(
            [
                w.varint_field(ID, guard_id),
                w.length_field(
                    CALL,
                    w.Message([w.length_field(2, ITERABLE_GUARD_FUNCTION), w.length_field(3, iter_range)]),
                ),
            ]
        )

    def _clone(self, message: w.Message) -> w.Message:
        """A copy of an expression with fresh node ids (ids must stay unique), types and references kept."""
        old_id = message.int_of(ID) or 0
        new_id = self.new_id()
        node_type = self.types.get(old_id) or self.node_types.get(old_id)
        if node_type:
            self.types[new_id] = node_type
        reference = self.references.get(old_id)
        if reference is None and old_id not in self.dropped_references:
            reference = self.raw_references.get(old_id)
        if reference is not None:
            self.references[new_id] = reference
        out = w.Message()
        for f in message.fields:
            if f.number == ID:
                out.fields.append(w.varint_field(ID, new_id))
            elif f.number in NESTED_EXPRS and isinstance(f.value, bytes):
                body = w.decode(f.value)
                out.fields.append(
                    w.length_field(
                        f.number,
                        w.Message(
                            [
                                w.length_field(g.number, self._clone(w.decode(g.value)))
                                if g.number in NESTED_EXPRS[f.number] and isinstance(g.value, bytes)
                                else g
                                for g in body.fields
                            ]
                        ),
                    )
                )
            elif f.number == STRUCT and isinstance(f.value, bytes):
                entries = w.Message()
                for g in w.decode(f.value).fields:
                    if g.number == 2 and isinstance(g.value, bytes):
                        entry = w.decode(g.value)
                        entries.fields.append(
                            w.length_field(
                                2,
                                w.Message(
                                    [
                                        w.varint_field(1, self.new_id())
                                        if e.number == 1
                                        else w.length_field(e.number, self._clone(w.decode(e.value)))
                                        if e.number in (3, 4) and isinstance(e.value, bytes)
                                        else e
                                        for e in entry.fields
                                    ]
                                ),
                            )
                        )
                    else:
                        entries.fields.append(g)
                out.fields.append(w.length_field(STRUCT, entries))
            else:
                out.fields.append(f)
        return out

    def _optional_lookup(self, expr_id: int, map_operand: w.Message, key: w.Message) -> w.Message:
        self.changed = True
        inner_id, empty_id = self.new_id(), self.new_id()
        inner = w.Message(
            [
                w.varint_field(ID, inner_id),
                w.length_field(
                    CALL,
                    w.Message(
                        [w.length_field(2, "_[?_]"), w.length_field(3, map_operand), w.length_field(3, key)]
                    ),
                ),
            ]
        )
        empty = w.Message([w.varint_field(ID, empty_id), w.length_field(STRUCT, b"")])
        self.types[inner_id] = DYN_TYPE
        self.types[empty_id] = MAP_DYN_DYN_TYPE
        self.references[inner_id] = _reference("_[?_]", "map_optindex_optional_value")
        self.references[expr_id] = _reference("orValue", "optional_orValue_value")
        self.dropped_references.add(expr_id)
        return w.Message(
            [
                w.varint_field(ID, expr_id),
                w.length_field(
                    CALL,
                    w.Message(
                        [w.length_field(1, inner), w.length_field(2, "orValue"), w.length_field(3, empty)]
                    ),
                ),
            ]
        )


def _fold_quantity(text: object) -> bytes:
    if not isinstance(text, str):
        raise TypeError(text)
    return encode_quantity(Quantity.parse(text))


def _fold_semver(text: object, normalize: object = False) -> bytes:
    if not isinstance(text, str) or not isinstance(normalize, bool):
        raise TypeError(text)
    return encode_semver(Semver.parse(text, normalize=normalize))


def _fold_ip(text: object) -> bytes:
    if not isinstance(text, str):
        raise TypeError(text)
    return library_net.encode_ip(library_net.parse_ip(text))


def _fold_cidr(text: object) -> bytes:
    if not isinstance(text, str):
        raise TypeError(text)
    return library_net.encode_cidr(library_net.parse_cidr(text))


CONSTANT_CONSTRUCTORS: dict[str, Callable[..., bytes]] = {
    "quantity": _fold_quantity,
    "semver": _fold_semver,
    "ip": _fold_ip,
    "cidr": _fold_cidr,
}


def _reference(name: str, overload_id: str) -> bytes:
    return w.encode(w.Message([w.length_field(1, name), w.length_field(3, overload_id)]))


@dataclass
class Rewritten:
    serialized: bytes | None  # the edited AST, or None when nothing changed
    root: Node  # the (edited) expression tree, for the cost estimator
    problems: list[str]  # compile-time errors found while walking (reported as CelError by the engine)
    literals: list[tuple[str, str]]  # (kind, text) of literal arguments the engine validates at compile time


_OPTIONAL_CONSUMERS = frozenset({"orValue", "value", "hasValue", "or"})


def _direct_children(message: w.Message) -> list[tuple[str, w.Message]]:
    """Every direct sub-expression with its role: target, arg0 (first argument), or other."""
    out: list[tuple[str, w.Message]] = []
    call = message.message_of(CALL)
    if call is not None:
        target = call.message_of(1)
        if target is not None:
            out.append(("target", target))
        for index, arg in enumerate(a for a in call.get_all(3) if isinstance(a.value, bytes)):
            assert isinstance(arg.value, bytes)
            out.append(("arg0" if index == 0 else "other", w.decode_shared(arg.value)))
        return out
    select = message.message_of(SELECT)
    if select is not None:
        operand = select.message_of(1)
        return [("other", operand)] if operand is not None else []
    listed = message.message_of(LIST)
    if listed is not None:
        return [("other", w.decode_shared(e.value)) for e in listed.get_all(1) if isinstance(e.value, bytes)]
    built = message.message_of(STRUCT)
    if built is not None:
        for entry_field in built.get_all(2):
            if isinstance(entry_field.value, bytes):
                entry = w.decode_shared(entry_field.value)
                out += [
                    ("other", part) for part in (entry.message_of(3), entry.message_of(4)) if part is not None
                ]
        return out
    comprehension = message.message_of(COMPREHENSION)
    if comprehension is not None:
        parts = (comprehension.message_of(n) for n in (2, 4, 5, 6, 7))
        return [("other", part) for part in parts if part is not None]
    return out


def _raw_references(container: w.Message) -> dict[int, bytes]:
    references: dict[int, bytes] = {}
    for f in container.get_all(REFERENCE_MAP):
        if isinstance(f.value, bytes):
            entry = w.decode(f.value)
            references[entry.int_of(1) or 0] = entry.bytes_of(2) or b""
    return references


def _child_ids(message: w.Message) -> list[int]:
    """Ids of a call's target and arguments, a list's elements, a map's keys and values.

    Optional list elements (``[?x]``) and map entries (``{?k: v}``) are skipped: they are unwrapped.
    """
    ids: list[int] = []
    call = message.message_of(CALL)
    if call is not None:
        for f in call.fields:
            if f.number in (1, 3) and isinstance(f.value, bytes):
                ids.append(w.decode(f.value).int_of(ID) or 0)
        return ids
    listed = message.message_of(LIST)
    if listed is not None:
        optional_indices: set[int] = set()
        for f in listed.get_all(2):  # optional_indices: packed or one per field
            if isinstance(f.value, int):
                optional_indices.add(f.value)
            else:
                data, pos = f.value, 0
                while pos < len(data):
                    value, pos = w.read_varint(data, pos)
                    optional_indices.add(value)
        elements = [w.decode(e.value) for e in listed.get_all(1) if isinstance(e.value, bytes)]
        return [e.int_of(ID) or 0 for i, e in enumerate(elements) if i not in optional_indices]
    built = message.message_of(STRUCT)
    if built is not None:
        for entry_field in built.get_all(2):
            if isinstance(entry_field.value, bytes):
                entry = w.decode(entry_field.value)
                if entry.int_of(5):
                    continue
                for part in (entry.message_of(3), entry.message_of(4)):
                    if part is not None:
                        ids.append(part.int_of(ID) or 0)
    return ids


def rewrite_checked_expr(
    serialized: bytes, python_functions: frozenset[str] = frozenset(), *, guard_ranges: bool = False
) -> Rewritten:
    """Edit the AST: fold constant constructors, default unknown domains, find ordering misuse.

    Accepts a serialized ``CheckedExpr`` (normal case) or ``ParsedExpr`` (expressions compiled without
    the type checker, see the engine's cross-type numeric comparison fallback). ``guard_ranges`` also
    wraps every comprehension range in the iterable guard (the engine's diagnosis program).
    """
    any_message = w.decode(serialized)
    checked_form = (any_message.string_of(1) or "").endswith("CheckedExpr")
    expr_field = EXPR if checked_form else PARSED_EXPR
    container = w.decode(any_message.bytes_of(2) or b"")
    expr = container.message_of(expr_field) or w.Message()
    types = node_types(container) if checked_form else {}
    rewriter = _Rewriter(
        max_expr_id(expr),
        overload_choices(container) if checked_form else {},
        types,
        python_functions,
        checked_form,
        _raw_references(container) if checked_form else {},
        guard_ranges,
    )
    if contains_optional(types.get(expr.int_of(ID) or 0, b"")):
        rewriter.problems.append("the result is an optional value; unwrap it with .orValue(default)")
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
            and f.number == REFERENCE_MAP
            and isinstance(f.value, bytes)
            and (w.decode(f.value).int_of(1) or 0) in rewriter.dropped_references
        ):
            continue
        new_container.fields.append(f)
    if checked_form:
        for ref_id, reference in rewriter.references.items():
            new_container.fields.append(
                w.length_field(
                    REFERENCE_MAP, w.Message([w.varint_field(1, ref_id), w.length_field(2, reference)])
                )
            )
        for type_id, type_bytes in rewriter.types.items():
            new_container.fields.append(
                w.length_field(
                    TYPE_MAP, w.Message([w.varint_field(1, type_id), w.length_field(2, type_bytes)])
                )
            )
    new_container.fields.append(w.length_field(expr_field, new_expr))
    new_any = w.Message(
        [f if f.number != 2 else w.length_field(2, new_container) for f in any_message.fields]
    )
    return Rewritten(w.encode(new_any), root, rewriter.problems, rewriter.literals)
