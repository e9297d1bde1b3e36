"""Worst-case cost estimate of a selector, checked against the DRA limit of 1,000,000.

cel-expr-python exposes no cost tracking, so this is a static estimate over the checked AST, computed
once per expression. What it counts (an approximation of cel-go's cost units):

* 1 per identifier, field selection, function call and operator; 0 per constant;
  10 per list literal, 30 per map literal (cel-go's creation costs), plus their elements.
* A comprehension (``all``, ``exists``, ``exists_one``, ``map``, ``filter``, two-variable forms,
  ``cel.bind``) costs its range and initialiser, plus *N* × (loop condition + loop step), plus its result,
  where *N* is the size of the range: exact for list and map literals (and for variables bound to them,
  and ``map``/``filter`` results over them), otherwise the upstream size bounds for device data: 64 list
  elements, 32 map entries.
* ``includes`` costs 48 more (upstream's charge); ``x in list`` costs the list's size more.

Calibration: for the cost cases in upstream's ``dynamic-resource-allocation/cel/compile_test.go`` the
estimate lands within 0.5-1.5x of cel-go's (86.7 M vs 85.6 M for its "expensive" seven nested ``all``);
``tests/allocation/test_cel_cost.py`` keeps it there.

It is a worst case: short-circuiting ``exists``/``all`` are charged for every element, like the API
server's admission-time estimate (which rejects such selectors before they reach the scheduler). An
expression whose estimate exceeds the limit compiles, and ``matches`` raises ``CelError`` saying the
cost limit was exceeded, so the allocator aborts as upstream does at runtime.
"""

from __future__ import annotations

from .checked_ast import Node
from .tagged import EQUALITY_GUARD_FUNCTION

COST_LIMIT = 1_000_000
MAX_EXPRESSION_BYTES = 10 * 1024  # upstream's limit on a selector's length
DEFAULT_LIST_SIZE = 64  # upstream: max(attribute value length 64, list attribute values 48)
INCLUDES_COST = 48  # upstream charges `includes` the longest list attribute
DEFAULT_STRING_LIST_SIZE = 64
DEFAULT_MAP_SIZE = 32
_LIST_LITERAL_COST = 10
_MAP_LITERAL_COST = 30
_CAP = 10**18  # keep arithmetic bounded for absurd nestings


def estimate_cost(root: Node) -> int:
    return _Estimator().cost(root, {})


class _Estimator:
    def size(self, node: Node | None, scope: dict[str, int]) -> int:
        """Upper bound of the number of elements of a list/map-valued node."""
        if node is None:
            return 0
        if node.kind == "list":
            return len(node.children)
        if node.kind == "map":
            return len(node.children) // 2
        if node.kind == "ident":
            return scope.get(node.name, DEFAULT_LIST_SIZE)
        if node.kind == "comprehension":
            # map/filter produce at most one element per range element; cel.bind yields its body.
            if (
                node.iter_range is not None
                and node.iter_range.kind == "list"
                and not node.iter_range.children
            ):
                inner = dict(scope)
                inner[_accu_name(node)] = self.size(node.accu_init, scope)
                return self.size(node.result, inner)
            return self.size(node.iter_range, scope)
        if node.kind == "call":
            if node.name == "_+_":
                return min(_CAP, sum(self.size(child, scope) for child in node.children))
            if node.name == "split":
                return DEFAULT_STRING_LIST_SIZE
            if node.name in ("_?_:_",) and len(node.children) == 3:
                return max(self.size(node.children[1], scope), self.size(node.children[2], scope))
        if _is_domain_map(node):
            return DEFAULT_MAP_SIZE
        return DEFAULT_LIST_SIZE

    def element_size(self, node: Node | None, scope: dict[str, int]) -> int:
        if node is not None and node.kind == "list" and node.children:
            return max(self.size(child, scope) for child in node.children)
        return DEFAULT_LIST_SIZE

    def cost(self, node: Node | None, scope: dict[str, int]) -> int:
        if node is None:
            return 0
        kind = node.kind
        if kind == "const":
            return 0
        if kind == "ident":
            return 1
        if kind == "select":
            return 1 + sum(self.cost(child, scope) for child in node.children)
        if kind == "call":
            if (
                node.name == "_?_:_"
                and len(node.children) == 3
                and node.children[0].name == EQUALITY_GUARD_FUNCTION
            ):
                return self.cost(node.children[1], scope)  # the engine's own guard is not the user's work
            extra = 0
            if node.name == "includes":
                extra = INCLUDES_COST
            elif node.name == "@in" and len(node.children) == 2 and not _is_domain_map(node.children[1]):
                extra = self.size(node.children[1], scope)
            return min(_CAP, 1 + extra + sum(self.cost(child, scope) for child in node.children))
        if kind == "list":
            return min(_CAP, _LIST_LITERAL_COST + sum(self.cost(child, scope) for child in node.children))
        if kind == "map" and not node.children:
            return 1  # the `{}` default the unknown-domain rewrite inserts; not user work
        if kind == "map":
            return min(_CAP, _MAP_LITERAL_COST + sum(self.cost(child, scope) for child in node.children))
        if kind == "comprehension":
            return self._comprehension_cost(node, scope)
        return 1

    def _comprehension_cost(self, node: Node, scope: dict[str, int]) -> int:
        iterations = self.size(node.iter_range, scope)
        inner = dict(scope)
        inner[node.name] = self.element_size(node.iter_range, scope)
        inner[_accu_name(node)] = self.size(node.accu_init, scope) if node.accu_init is not None else 0
        if node.iter_range is not None and node.iter_range.kind == "list" and not node.iter_range.children:
            # cel.bind: zero iterations; the bound value is the accumulator seen by the result.
            inner[_accu_name(node)] = self.size(node.accu_init, scope)
        per_iteration = self.cost(node.loop_condition, inner) + self.cost(node.loop_step, inner)
        total = (
            self.cost(node.iter_range, scope)
            + self.cost(node.accu_init, scope)
            + iterations * per_iteration
            + self.cost(node.result, inner)
        )
        return min(_CAP, total)


def _is_domain_map(node: Node) -> bool:
    """device.attributes / device.capacity or one domain of them: a map, so `in` is a hash lookup."""
    if node.kind == "select" and node.name in ("attributes", "capacity"):
        return True
    return (
        node.kind == "call"
        and node.name in ("orValue", "_[_]")
        and bool(node.children)
        and (
            _is_domain_map(node.children[0])
            or (node.children[0].kind == "call" and _is_domain_map(node.children[0].children[0]))
        )
    )


def _accu_name(node: Node) -> str:
    return node.value if isinstance(node.value, str) else "@result"
