"""The cost tree of the cel-python backend: the celpy AST as cost.py's :class:`~.checked_ast.Node` tree.

Shaped as cel-cpp's checked AST after engine.py's rewrite (macros expanded into comprehensions,
unknown-domain lookups as ``orValue``, constant constructors folded), so both engines estimate the same
cost for the same expression (tests/dra/test_cel_backends.py checks it on the conformance file).
"""

from __future__ import annotations

from .celpy_syntax import Call, Comprehension, Const, Expr, Ident, ListLit, MapLit, Select
from .checked_ast import Node

_DOMAIN_MAPS = ("attributes", "capacity")
_DEVICE_SHADOWED = "#device"


def cost_node(expr: Expr) -> Node:
    """The tree cost.py estimates, shaped as cel-cpp's checked AST after engine.py's rewrite."""
    return _CostTree().node(expr, frozenset())


def written_node(expr: Expr) -> Node:
    """The tree as written, shaped as cel-cpp's checked AST before any rewrite (for device_types.py)."""
    return _CostTree(as_written=True).node(expr, frozenset())


class _CostTree:
    def __init__(self, *, as_written: bool = False) -> None:
        self.as_written = as_written

    def node(self, expr: Expr, aliases: frozenset[str]) -> Node:
        built = self._node(expr, aliases)
        if built.offset < 0:
            built.offset = expr.offset
        return built

    def _node(self, expr: Expr, aliases: frozenset[str]) -> Node:
        if isinstance(expr, Const):
            return Node("const", name=expr.kind, value=expr.value)
        if isinstance(expr, Ident):
            return Node("ident", name=expr.name)
        if isinstance(expr, Select):
            operand = self.node(expr.operand, aliases)
            if not expr.test_only and self._domain_map(expr.operand, aliases):
                return self._or_empty(operand, Node("const", name="string", value=expr.field))
            return Node("select", name=expr.field, children=[operand], test_only=expr.test_only)
        if isinstance(expr, Call):
            if not self.as_written and expr.tree is not None and expr.tree.data == "constant":
                return Node("const", value=expr.tree.children[0])  # folded, as in engine.py's rewrite
            if expr.function == "_[_]" and self._domain_map(expr.args[0], aliases):
                return self._or_empty(self.node(expr.args[0], aliases), self.node(expr.args[1], aliases))
            children = [self.node(a, aliases) for a in ((expr.target,) if expr.target else ()) + expr.args]
            return Node("call", name=expr.function, children=children, has_target=expr.target is not None)
        if isinstance(expr, ListLit):
            return Node("list", children=[self.node(i, aliases) for i in expr.items])
        if isinstance(expr, MapLit):
            return Node("map", children=[self.node(p, aliases) for entry in expr.entries for p in entry])
        return self._comprehension(expr, aliases)

    def _domain_map(self, expr: Expr, aliases: frozenset[str]) -> bool:
        if self.as_written:
            return False
        if isinstance(expr, Ident):
            return expr.name in aliases
        return (
            isinstance(expr, Select)
            and not expr.test_only
            and expr.field in _DOMAIN_MAPS
            and isinstance(expr.operand, Ident)
            and expr.operand.name == "device"
            and _DEVICE_SHADOWED not in aliases
        )

    @staticmethod
    def _or_empty(domains: Node, key: Node) -> Node:
        lookup = Node("call", name="_[?_]", children=[domains, key])
        return Node("call", name="orValue", children=[lookup, Node("map")], has_target=True)

    def _comprehension(self, expr: Comprehension, aliases: frozenset[str]) -> Node:
        inner = aliases - set(expr.variables)
        if "device" in expr.variables:
            inner |= {_DEVICE_SHADOWED}
        if expr.macro == "cel.bind":
            init, body = expr.args
            bound = inner | {expr.variables[0]} if self._domain_map(init, aliases) else inner
            return Node(
                "comprehension",
                name="#unused",
                value=expr.variables[0],
                iter_range=Node("list", offset=expr.offset),
                accu_init=self.node(init, aliases),
                loop_condition=Node("const", name="bool", value=False, offset=expr.offset),
                loop_step=Node("ident", name=expr.variables[0], offset=expr.offset),
                result=self.node(body, bound),
            )
        assert expr.target is not None
        accu = Node("ident", name="@result", offset=expr.offset)
        parts = [self.node(a, inner) for a in expr.args]
        step, start, condition, result = _macro_shape(
            expr.macro, parts, expr.variables[-1], accu, expr.offset
        )
        return Node(
            "comprehension",
            name=expr.variables[0],
            value="@result",
            iter_range=self.node(expr.target, aliases),
            accu_init=start,
            loop_condition=condition,
            loop_step=step,
            result=result,
            iter_var2=expr.variables[1] if len(expr.variables) > 1 else "",
        )


def _macro_shape(
    macro: str, parts: list[Node], value_var: str, accu: Node, offset: int
) -> tuple[Node, Node, Node, Node]:
    """(loop step, accumulator init, loop condition, result) as cel-cpp expands each macro; the nodes a
    macro adds sit where the macro's call does, as in cel-go."""
    true = Node("const", name="bool", value=True, offset=offset)
    false = Node("const", name="bool", value=False, offset=offset)

    def call(name: str, *children: Node) -> Node:
        return Node("call", name=name, children=list(children), offset=offset)

    if macro == "all":
        return call("_&&_", accu, parts[-1]), true, call("@not_strictly_false", accu), accu
    if macro == "exists":
        return call("_||_", accu, parts[-1]), false, call("@not_strictly_false", call("!_", accu)), accu
    if macro in ("exists_one", "existsOne"):
        one = Node("const", name="int", value=1, offset=offset)
        step = call("_?_:_", parts[-1], call("_+_", accu, one), accu)
        return step, Node("const", name="int", value=0, offset=offset), true, call("_==_", accu, one)
    empty = Node("list", offset=offset)
    if macro == "filter":
        element = Node("ident", name=value_var, offset=offset)
        appended = call("_+_", accu, Node("list", children=[element], offset=offset))
        return call("_?_:_", parts[0], appended, accu), empty, true, accu
    # map, transformList, transformMap…: append the transform, behind the filter if there is one
    appended = call("_+_", accu, Node("list", children=[parts[-1]], offset=offset))
    step = call("_?_:_", parts[0], appended, accu) if len(parts) == 2 else appended
    return step, empty, true, accu
