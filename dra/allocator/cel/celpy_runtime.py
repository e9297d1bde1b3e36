"""The evaluator of the cel-python backend: celpy's interpreter with the Kubernetes environment.

:class:`KubernetesEvaluator` adds the macros of the Kubernetes environment (two-variable comprehensions,
``transformList``, ``map`` with a filter, ``cel.bind``) and CEL's error semantics for ``&&``, ``||``,
``?:`` and the comprehensions; :func:`prepare` makes the parse tree cheaper to walk; :class:`Program`
runs it. Values and operators are in celpy_values, functions in celpy_functions (the celpy adapter).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import celpy.celtypes as ct
import lark
from celpy.evaluation import Activation, CELEvalError, Evaluator

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
from .celpy_values import (
    MISSING,
    NO_SUCH_KEY_HINT,
    RELATIONS,
    KubeValue,
    device_data,
    error,
    find_key,
    first_error,
    kind,
    label,
    runtime_message,
    to_native,
)
from .device import DeviceInput
from .errors import CelError
from .rewrite import CONSTANT_CONSTRUCTORS
from .type_names import not_iterable_message


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
        return RELATIONS[str(operator_tree.data)](left, self.visit(right_tree))

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
        failed = first_error(*args)
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
                return error(f"no such key: {tree.children[1]}{NO_SUCH_KEY_HINT}")
        return error(f"type '{label(operand)}' does not support field selection")

    def member_index(self, tree: Any) -> Any:
        operand, key = (self.visit(c) for c in tree.children)
        failed = first_error(operand, key)
        if failed is not None:
            return failed
        try:
            return operand[key]
        except KeyError:
            return error(f"no such key: {key}{NO_SUCH_KEY_HINT}")
        except IndexError:
            return error(f"index out of range: {key} (size {len(operand)})")
        except TypeError:
            return error(f"no such overload: {kind(operand)}[{kind(key)}]")

    def mapinits(self, tree: Any) -> Any:
        parts = [self.visit(c) for c in tree.children]
        failed = first_error(*parts)
        if failed is not None:
            return failed
        out = ct.MapType()
        for key, value in zip(parts[0::2], parts[1::2], strict=True):
            if find_key(out, key) is not MISSING:
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
            return error(not_iterable_message(to_native(target)))
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
