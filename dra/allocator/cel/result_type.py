"""The type upstream gives a selector's result where both engines' declarations only say ``dyn``.

Both engines declare ``device`` as ``map<string, dyn>``; upstream declares an object whose ``driver`` is a
string, ``attributes`` a map of maps of ``dyn`` (attribute values), ``capacity`` a map of maps of Quantity
and ``allowMultipleAllocations`` a bool (dra-api.md §6.1). So upstream refuses ``device.driver`` or
``device.capacity["d"].memory`` as a selector at validation ("must evaluate to bool or the unknown type,
not string"), while a ``dyn`` result here would only fail when evaluated, on every device.

``non_bool_result`` follows the result of the cost tree (``checked_ast.Node``, the same shapes for both
backends, after the unknown-domain rewrite) through device fields, domain lookups, conditionals and
``cel.bind``, and names that type when upstream's checker knows it is not bool. Anything else (an
attribute's value, ``dyn(...)``) is left to the engine's own checker and to evaluation.
"""

from __future__ import annotations

from .checked_ast import Node

DEVICE = "device"
ATTRIBUTES, CAPACITY = "map-of-attribute-domains", "map-of-capacity-domains"
ATTRIBUTE_DOMAIN, CAPACITY_DOMAIN = "map-of-attributes", "map-of-capacities"
_FIELDS = {
    "driver": "string",
    "attributes": ATTRIBUTES,
    "capacity": CAPACITY,
    "allowMultipleAllocations": "bool",
}
_DOMAIN_OF = {ATTRIBUTES: ATTRIBUTE_DOMAIN, CAPACITY: CAPACITY_DOMAIN}
_VALUE_OF = {CAPACITY_DOMAIN: "Quantity"}  # an attribute's value is dyn upstream too
#: how an error names a type
_SHOWN = {ATTRIBUTES: "map", CAPACITY: "map", ATTRIBUTE_DOMAIN: "map", CAPACITY_DOMAIN: "map"}


def non_bool_result(root: Node) -> str | None:
    """The name of the result's type when upstream knows it and it is not bool; None otherwise."""
    kind = _type(root, {DEVICE: DEVICE})
    return None if kind in (None, "bool", DEVICE) else _SHOWN.get(kind, kind)


def _type(node: Node | None, scope: dict[str, str | None]) -> str | None:
    if node is None:
        return None
    if node.kind == "const":
        return "string" if isinstance(node.value, str) else None
    if node.kind == "ident":
        return scope.get(node.name)
    if node.kind == "select" and node.children:
        if node.test_only:
            return "bool"
        return _member(_type(node.children[0], scope), node.name)
    if node.kind == "call":
        return _call(node, scope)
    if node.kind == "comprehension":
        return _bind(node, scope)
    return None


def _member(operand: str | None, name: str) -> str | None:
    if operand == DEVICE:
        return _FIELDS.get(name)
    if operand in _DOMAIN_OF:
        return _DOMAIN_OF[operand]
    return _VALUE_OF.get(operand or "")


def _call(node: Node, scope: dict[str, str | None]) -> str | None:
    args = node.children
    if node.name == "_[_]" and len(args) == 2:
        return _member(_type(args[0], scope), "")
    if node.name == "orValue" and node.has_target and args and args[0].name == "_[?_]" and args[0].children:
        # the engine's rewrite of a domain lookup: `device.attributes[?d].orValue({})`
        operand = _type(args[0].children[0], scope)
        return _DOMAIN_OF.get(operand or "")
    if node.name == "_?_:_" and len(args) == 3:
        left, right = _type(args[1], scope), _type(args[2], scope)
        return left if left == right else None
    return None


def _bind(node: Node, scope: dict[str, str | None]) -> str | None:
    """`cel.bind(name, value, body)`: a comprehension over an empty list whose accumulator is the name."""
    is_bind = (
        node.iter_range is not None
        and node.iter_range.kind == "list"
        and not node.iter_range.children
        and isinstance(node.value, str)
    )
    if not is_bind:
        return None
    assert isinstance(node.value, str)
    inner = {**scope, node.name: None, node.value: _type(node.accu_init, scope)}
    return _type(node.result, inner)
