"""The syntax side of the cel-python backend: parse with celpy, lower to a small AST, find what it cannot run.

celpy's lark parse tree is kept for evaluation (``celpy_runtime``), with three edits made here so its
evaluator sees the Kubernetes environment: comprehension macros (``all``, ``exists``, two-variable forms,
``transformList``, ``map`` with a filter) become ``comprehension_macro`` nodes, qualified functions
(``sets.contains``, ``ip.isCanonical``, ``cel.bind``) become ``namespaced_call`` nodes, and the runtime
later turns literals and constant ``quantity("…")``-style calls into ``constant`` nodes (``prepare``).

The AST (:data:`Expr`) is what the checker (``celpy_check``) and the cost tree (``celpy_cost``) read.
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass, field

import celpy.celtypes as ct
import lark
from celpy.celparser import CELParseError, CELParser
from celpy.evaluation import celbytes, celstr

from .errors import CelError

ParseTree = lark.Tree[lark.Token]

# The constructs this backend refuses; each message names one of these and the expression.
OPTIONAL_SELECT = "optional field selection (.?)"
OPTIONAL_INDEX = "optional index ([?key])"
OPTIONAL_ENTRY = "optional list elements and map entries ([?x], {?key: value})"
OPTIONAL_VALUES = "optional values (optional.of, optional.none, orValue, hasValue, value, or)"
STRING_FORMAT = "string formatting (format)"
STRINGS_QUOTE = "strings.quote"
TRANSFORM_MAP = "transformMap and transformMapEntry"
TYPE_VALUES = "type values (type() and type names such as int)"
UNSUPPORTED = (
    OPTIONAL_SELECT,
    OPTIONAL_INDEX,
    OPTIONAL_ENTRY,
    OPTIONAL_VALUES,
    STRING_FORMAT,
    STRINGS_QUOTE,
    TRANSFORM_MAP,
    TYPE_VALUES,
)

# macro name -> {number of arguments: number of loop variables}
MACROS: dict[str, dict[int, int]] = {
    "all": {2: 1, 3: 2},
    "exists": {2: 1, 3: 2},
    "exists_one": {2: 1},
    "existsOne": {3: 2},
    "map": {2: 1, 3: 1},
    "filter": {2: 1},
    "transformList": {3: 2, 4: 2},
    "transformMap": {3: 2, 4: 2},
    "transformMapEntry": {3: 2, 4: 2},
}


# Every node has the offset where cel-go places it (code points into the expression): a literal or name
# where it starts, an operator at its symbol, a call at its "(", a selection at its "." and an index at
# its "[", so that errors point where upstream's do.


@dataclass(frozen=True, eq=False)
class Const:
    value: object  # celpy value (IntType, StringType, …) or None for null
    kind: str  # int | uint | double | string | bytes | bool | null
    offset: int = -1


@dataclass(frozen=True, eq=False)
class Ident:
    name: str
    offset: int = -1


@dataclass(frozen=True, eq=False)
class Select:
    operand: Expr
    field: str
    test_only: bool = False  # has(operand.field)
    offset: int = -1


@dataclass(frozen=True, eq=False)
class Call:
    """A function, method (``target``) or operator (cel-cpp names: ``_&&_``, ``@in``, ``_[_]`` …) call."""

    function: str
    args: tuple[Expr, ...]
    target: Expr | None = None
    tree: ParseTree | None = field(default=None, repr=False)  # the parse node the runtime may edit
    offset: int = -1


@dataclass(frozen=True, eq=False)
class ListLit:
    items: tuple[Expr, ...]
    offset: int = -1


@dataclass(frozen=True, eq=False)
class MapLit:
    entries: tuple[tuple[Expr, Expr], ...]
    offset: int = -1


@dataclass(frozen=True, eq=False)
class Comprehension:
    """A macro: ``target.all(x, p)`` …, or ``cel.bind(x, init, body)`` (``target`` None, args (init, body))."""

    macro: str
    target: Expr | None
    variables: tuple[str, ...]
    args: tuple[Expr, ...]
    offset: int = -1


Expr = Const | Ident | Select | Call | ListLit | MapLit | Comprehension


@dataclass(frozen=True)
class Parsed:
    tree: ParseTree  # celpy's parse tree, edited for the runtime
    root: Expr


def unsupported_error(construct: str, expression: str) -> CelError:
    shown = expression if len(expression) <= 160 else expression[:157] + "..."
    return CelError(
        f"compilation failed: not supported on the cel-python backend: {construct} "
        f"(use the cel-expr-python backend for it), in: {shown}"
    )


# ------------------------------------------------------------------------------------------ scanning
def prepare_source(expression: str) -> str:
    """Refuse the optional syntax celpy's grammar lacks; drop trailing commas, which it also lacks.

    Walks the text outside string literals and comments. A trailing comma (``[1, 2,]``) means nothing
    in CEL, so it becomes a space (positions in error messages stay right).
    """
    text = list(expression)
    stack: list[str] = []  # "(", "index", "list", "{"
    previous = ""  # the last significant character outside strings
    i, n = 0, len(expression)
    while i < n:
        c = expression[i]
        if c in "\"'" or (c in "rRbB" and _starts_string(expression, i)):
            i = _skip_string(expression, i)
            previous = '"'
            continue
        if c == "/" and expression.startswith("//", i):
            while i < n and expression[i] != "\n":
                i += 1
            continue
        if c.isspace():
            i += 1
            continue
        if c.isdigit() and (previous == "" or not (previous.isalnum() or previous in "_.")):
            i = _skip_number(expression, i, text)
            previous = "0"
            continue
        following = _next_significant(expression, i + 1)
        if c == "." and following == "?" and not previous.isdigit():
            raise unsupported_error(OPTIONAL_SELECT, expression)
        if c == "[":
            is_index = previous != "" and (previous.isalnum() or previous in '_)]"')
            if following == "?":
                raise unsupported_error(OPTIONAL_INDEX if is_index else OPTIONAL_ENTRY, expression)
            stack.append("index" if is_index else "list")
        elif c in "({":
            if c == "{" and following == "?":
                raise unsupported_error(OPTIONAL_ENTRY, expression)
            stack.append(c)
        elif c in ")]}":
            if stack:
                stack.pop()
        elif c == ",":
            if following == "?" and stack and stack[-1] in ("list", "{"):
                raise unsupported_error(OPTIONAL_ENTRY, expression)
            if following in (")", "]", "}"):
                text[i] = " "
        previous = c
        i += 1
    return "".join(text)


def _inserted(expression: str) -> tuple[str, list[int]]:
    """:func:`prepare_source`'s text, and where in it the spaces it inserted are (sorted)."""
    source = prepare_source(expression)
    if len(source) == len(expression):
        return source, []
    inserted, j = [], 0
    for c in expression:
        if source[j] != c and source[j] == " " and source[j + 1] == c and c != " ":
            inserted.append(j)
            j += 1
        j += 1
    return source, inserted


def _starts_string(text: str, i: int) -> bool:
    j = i
    while j < len(text) and text[j] in "rRbB" and j - i < 2:
        j += 1
    return (
        j < len(text) and text[j] in "\"'" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))
    )


def _skip_string(text: str, i: int) -> int:
    raw = False
    while text[i] in "rRbB":
        raw = raw or text[i] in "rR"
        i += 1
    quote = text[i] * 3 if text.startswith(text[i] * 3, i) else text[i]
    i += len(quote)
    while i < len(text):
        if not raw and text[i] == "\\":
            i += 2
            continue
        if text.startswith(quote, i):
            return i + len(quote)
        i += 1
    return i


def _skip_number(source: str, i: int, text: list[str]) -> int:
    """Past a number literal; ``1.f()`` is a method call on 1, which celpy would lex as ``1.`` + ``f``."""
    j = i
    while j < len(source) and (source[j].isalnum() or source[j] == "_"):
        j += 1  # digits, hex digits, u suffix, exponent letters
    digits = source[i:j]
    if j + 1 < len(source) and source[j] == "." and digits.isdigit():
        after = source[j + 1]
        if after.isalpha() or after == "_":
            text[j - 1] += " "  # "1 .f()": the same call, lexed as an int and a member
            return j
        j += 1
        while j < len(source) and (source[j].isalnum() or source[j] in "_+-" and source[j - 1] in "eE"):
            j += 1
    return j


def _next_significant(text: str, i: int) -> str:
    while i < len(text) and text[i].isspace():
        i += 1
    return text[i] if i < len(text) else ""


# ------------------------------------------------------------------------------------------ parsing
_parser_lock = threading.Lock()
_parser: CELParser | None = None


class _PositionedParser(CELParser):
    """celpy's parser, except that ``true`` and ``false`` keep their place in the text (celpy's lexer
    callback makes them new tokens without one), so that errors after them point at the right column.
    The grammar is built once per process by the first parser made; this module makes the first."""

    @staticmethod
    def ambiguous_literals(t: lark.Token) -> lark.Token:
        if t.value in ("true", "false"):
            return lark.Token.new_borrow_pos("BOOL_LIT", t.value, t)
        return t


def parse(expression: str) -> Parsed:
    """Parse and lower ``expression``; CelError for syntax errors and what this backend cannot run."""
    global _parser
    source, inserted = _inserted(expression)
    with _parser_lock:  # one lark parser per process; parsing is not the hot path
        if _parser is None:
            _parser = _PositionedParser()
        try:
            tree = _parser.parse(source)
        except CELParseError as exc:
            raise CelError(f"compilation failed: Syntax error: {exc}") from exc
    return Parsed(tree, _Lowering(source, inserted).expr(tree, frozenset()))


def _token(node: ParseTree | lark.Token) -> str:
    assert isinstance(node, lark.Token)
    return str(node.value)


def _tree(node: ParseTree | lark.Token) -> ParseTree:
    assert isinstance(node, lark.Tree)
    return node


def _end(node: ParseTree | lark.Token) -> int:
    if isinstance(node, lark.Token):
        return node.end_pos or 0
    end = getattr(node.meta, "end_pos", None)
    if end is None:  # lark leaves a tree without positions when its tokens came from a callback
        tokens = list(node.scan_values(lambda v: isinstance(v, lark.Token)))
        return max((t.end_pos or 0 for t in tokens), default=0)
    return int(end)


def _start(node: ParseTree | lark.Token) -> int:
    if isinstance(node, lark.Token):
        return node.start_pos or 0
    start = getattr(node.meta, "start_pos", None)
    if start is None:
        tokens = list(node.scan_values(lambda v: isinstance(v, lark.Token)))
        return min((t.start_pos or 0 for t in tokens), default=-1)
    return int(start)


_SYMBOLS = {
    "relation_lt": "<",
    "relation_le": "<=",
    "relation_gt": ">",
    "relation_ge": ">=",
    "relation_eq": "==",
    "relation_ne": "!=",
    "relation_in": "in",
    "addition_add": "+",
    "addition_sub": "-",
    "multiplication_mul": "*",
    "multiplication_div": "/",
    "multiplication_mod": "%",
}
_BINARY = {
    "relation_lt": "_<_",
    "relation_le": "_<=_",
    "relation_gt": "_>_",
    "relation_ge": "_>=_",
    "relation_eq": "_==_",
    "relation_ne": "_!=_",
    "relation_in": "@in",
    "addition_add": "_+_",
    "addition_sub": "_-_",
    "multiplication_mul": "_*_",
    "multiplication_div": "_/_",
    "multiplication_mod": "_%_",
}


class _Lowering:
    """lark tree -> AST, marking macro and qualified-function nodes for the runtime on the way."""

    def __init__(self, source: str, inserted: list[int]) -> None:
        self.source = source  # the text the parser read
        self.inserted = inserted  # where it has a space the expression has not (prepare_source)

    def at(self, offset: int) -> int:
        """The offset in the expression of an offset in the text the parser read."""
        return offset - bisect.bisect_left(self.inserted, offset) if self.inserted else offset

    def after(self, node: ParseTree | lark.Token) -> int:
        """Where the next token after ``node`` starts (past blanks and comments): an operator's place."""
        text, i = self.source, _end(node)
        while i < len(text):
            if text[i].isspace():
                i += 1
            elif text.startswith("//", i):
                end = text.find("\n", i)
                i = len(text) if end < 0 else end
            else:
                break
        return self.at(i)

    def expr(self, node: ParseTree, scope: frozenset[str]) -> Expr:
        kind = node.data
        children = node.children
        if kind == "expr":
            if len(children) == 1:
                return self.expr(_tree(children[0]), scope)
            parts = tuple(self.expr(_tree(c), scope) for c in children)
            return Call("_?_:_", parts, offset=self.after(children[0]))
        if kind in ("conditionalor", "conditionaland"):
            if len(children) == 1:
                return self.expr(_tree(children[0]), scope)
            name = "_||_" if kind == "conditionalor" else "_&&_"
            operands = (self.expr(_tree(children[0]), scope), self.expr(_tree(children[1]), scope))
            return Call(name, operands, offset=self.after(children[0]))
        if kind in ("relation", "addition", "multiplication"):
            if len(children) == 1:
                return self.expr(_tree(children[0]), scope)
            operator, right = _tree(children[0]), _tree(children[1])
            left = self.expr(_tree(operator.children[0]), scope)
            # == and != keep their node: the checker marks the ones cel-go decides statically
            offset = self.at(_end(operator) - len(_SYMBOLS[str(operator.data)]))
            return Call(
                _BINARY[str(operator.data)], (left, self.expr(right, scope)), tree=operator, offset=offset
            )
        if kind == "unary":
            if len(children) == 1:
                return self.expr(_tree(children[0]), scope)
            name = "!_" if _tree(children[0]).data == "unary_not" else "-_"
            return Call(name, (self.expr(_tree(children[1]), scope),), offset=self.at(_start(children[0])))
        if kind == "primary" and _tree(children[0]).data == "ident_arg":
            return self._function_call(node, _tree(children[0]), scope)
        if kind in ("member", "primary", "paren_expr"):
            return self.expr(_tree(children[0]), scope)
        if kind == "member_dot":
            return Select(
                self.expr(_tree(children[0]), scope), _token(children[1]), offset=self.after(children[0])
            )
        if kind == "member_index":
            operand, key = (self.expr(_tree(c), scope) for c in children)
            return Call("_[_]", (operand, key), offset=self.after(children[0]))
        if kind == "member_dot_arg":
            return self._member_call(node, scope)
        if kind == "member_object":
            raise CelError("compilation failed: message construction (Type{field: value}) is not supported")
        if kind in ("ident", "dot_ident"):
            return Ident(_token(children[0]), offset=self.at(_start(children[0])))
        if kind == "dot_ident_arg":
            raise CelError("compilation failed: a function call with a leading dot (.f()) is not supported")
        if kind == "list_lit":
            return ListLit(self._args(children, scope), offset=self.at(_start(node)))
        if kind == "map_lit":
            items = [self.expr(_tree(c), scope) for c in (_tree(children[0]).children if children else [])]
            return MapLit(tuple(zip(items[0::2], items[1::2], strict=True)), offset=self.at(_start(node)))
        if kind == "literal":
            constant = literal(children[0])
            return Const(constant.value, constant.kind, self.at(constant.offset))
        raise CelError(f"compilation failed: unexpected syntax {kind!r}")

    def _function_call(self, primary: ParseTree, call: ParseTree, scope: frozenset[str]) -> Expr:
        name = _token(call.children[0])
        args = self._args(call.children[1:], scope)
        offset = self.after(call.children[0])
        if name == "has":
            if len(args) != 1 or not isinstance(args[0], Select):
                raise CelError("compilation failed: invalid argument to has() macro")
            return Select(args[0].operand, args[0].field, test_only=True, offset=offset)
        return Call(name, args, tree=primary, offset=offset)

    def _args(self, nodes: list[ParseTree | lark.Token], scope: frozenset[str]) -> tuple[Expr, ...]:
        if not nodes:
            return ()
        listed = _tree(nodes[0])
        return tuple(self.expr(_tree(c), scope) for c in listed.children)

    def _member_call(self, node: ParseTree, scope: frozenset[str]) -> Expr:
        target_tree, name = _tree(node.children[0]), _token(node.children[1])
        offset = self.after(node.children[1])
        arg_trees = [_tree(c) for c in _tree(node.children[2]).children] if len(node.children) > 2 else []
        namespace = bare_ident(target_tree)
        if namespace is not None and namespace not in scope and namespace != "device":
            qualified = f"{namespace}.{name}"
            node.data = lark.Token("RULE", "namespaced_call")
            node.children = [lark.Token("IDENT", qualified), *node.children[2:]]
            if qualified == "cel.bind":
                if len(arg_trees) != 3:
                    raise CelError("compilation failed: cel.bind() takes a name, a value and an expression")
                variable = self._variable(arg_trees[0])
                init = self.expr(arg_trees[1], scope)
                body = self.expr(arg_trees[2], scope | {variable})
                return Comprehension("cel.bind", None, (variable,), (init, body), offset=offset)
            return Call(qualified, tuple(self.expr(a, scope) for a in arg_trees), tree=node, offset=offset)
        counts = MACROS.get(name)
        if counts is not None and len(arg_trees) in counts:
            variables = tuple(self._variable(a) for a in arg_trees[: counts[len(arg_trees)]])
            node.data = lark.Token("RULE", "comprehension_macro")
            target = self.expr(target_tree, scope)
            inner = scope | set(variables)
            bodies = tuple(self.expr(a, inner) for a in arg_trees[len(variables) :])
            return Comprehension(name, target, variables, bodies, offset=offset)
        target = self.expr(target_tree, scope)
        return Call(name, tuple(self.expr(a, scope) for a in arg_trees), target=target, offset=offset)

    def _variable(self, node: ParseTree) -> str:
        name = bare_ident(node)
        if name is None:
            raise CelError("compilation failed: argument is not a simple name (a macro's variable)")
        return name


_PASS_THROUGH = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary"}
    | {"member", "primary"}
)


def bare_ident(node: ParseTree) -> str | None:
    """The name if ``node`` is nothing but an identifier (through the precedence levels)."""
    while node.data != "ident":
        only = node.children[0] if len(node.children) == 1 else None
        if node.data not in _PASS_THROUGH or not isinstance(only, lark.Tree):
            return None
        node = only
    return _token(node.children[0])


def literal(token: ParseTree | lark.Token) -> Const:
    """A literal token's value, as celpy's evaluator would make it."""
    assert isinstance(token, lark.Token)
    text = str(token.value)
    kind = str(token.type)
    offset = token.start_pos or 0
    try:
        if kind == "FLOAT_LIT":
            return Const(ct.DoubleType(text), "double", offset)
        if kind == "INT_LIT":
            return Const(ct.IntType(text), "int", offset)
        if kind == "UINT_LIT":
            return Const(ct.UintType(text[:-1]), "uint", offset)
        if kind in ("MLSTRING_LIT", "STRING_LIT"):
            return Const(celstr(token), "string", offset)
        if kind == "BYTES_LIT":
            return Const(celbytes(token), "bytes", offset)
        if kind == "BOOL_LIT":
            return Const(ct.BoolType(text == "true"), "bool", offset)
    except ValueError as exc:
        raise CelError(f"compilation failed: invalid literal {text}: {exc}") from exc
    return Const(None, "null", offset)
