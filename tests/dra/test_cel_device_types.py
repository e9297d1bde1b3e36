"""Upstream types ``device`` (dynamic-resource-allocation ``cel/compile.go``: ``driver`` a string,
``allowMultipleAllocations`` a bool, ``attributes`` maps of ``dyn``, ``capacity`` maps of
``kubernetes.Quantity``), so kube-apiserver refuses a selector that misuses them when the DeviceClass or
claim is written, in cel-go's checker words and places. Both backends declare ``device`` as a map of
``dyn``; they must refuse the same selectors with the same words, where before such a selector compiled
and failed on every device."""

from __future__ import annotations

import random
from typing import Any

import pytest

from dra.allocator.cel import BACKEND_NAMES, CelError, device_input_from_api, new_engine
from tests.dra import test_cel_robustness as generated

A = 'device.attributes["gpu.example.com"]'
C = 'device.capacity["gpu.example.com"]'


def _error(expression: str, at: str, message: str) -> str:
    """cel-go's error at the first ``at`` in ``expression`` (a call at its "(", a selection at its ".")."""
    offset = expression.index(at)
    start = expression.rfind("\n", 0, offset) + 1
    end = expression.find("\n", offset)
    line = expression[start : len(expression) if end < 0 else end]
    row, column = expression.count("\n", 0, offset) + 1, offset - start
    return f"ERROR: <input>:{row}:{column + 1}: {message}\n | {line}\n | {'.' * column}^"


def _overload(expression: str, at: str, function: str, args: str) -> str:
    return _error(expression, at, f"found no matching overload for '{function}' applied to '{args}'")


def _refused(expression: str, *errors: str) -> tuple[str, str]:
    return expression, "compilation failed: " + "\n".join(errors)


def _case(expression: str, at: str, function: str, args: str) -> tuple[str, str]:
    return _refused(expression, _overload(expression, at, function, args))


RANGE = "expression of type 'string' cannot be range of a comprehension (must be list, map, or dynamic)"
TWO = "device.driver < 1 || device.allowMultipleAllocations == 1"
REFUSED = dict(
    [
        # the misuses measured before: they compiled on both backends (or on one)
        _case("device.driver < 1", "<", "_<_", "(string, int)"),
        _case("device.driver == 1", "==", "_==_", "(string, int)"),
        _case('device.allowMultipleAllocations == "x"', "==", "_==_", "(bool, string)"),
        _case('device.capacity["a.com"].mem == 3', "==", "_==_", "(kubernetes.Quantity, int)"),
        # cel-go fails `_+_` first; the engines' map<string, dyn> made it an `_==_` on (int, string)
        _case('device.driver + 1 == "a"', "+", "_+_", "(string, int)"),
        # values derived from them, in every place an operator or function takes them
        _case("size(device.driver) == true", "==", "_==_", "(int, bool)"),
        _case(f"{C}.memory.compareTo(1) == 0", "(1)", "compareTo", "kubernetes.Quantity.(int)"),
        _case(f"{C}.memory.major() == 1", "()", "major", "kubernetes.Quantity.()"),
        _case(f'{C}.memory < quantity("1Gi")', "<", "_<_", "(kubernetes.Quantity, kubernetes.Quantity)"),
        _case(f'string({C}.memory) == "1Gi"', "(", "string", "(kubernetes.Quantity)"),
        _case("device.driver.startsWith(1)", "(", "startsWith", "string.(int)"),
        _case("device.driver in [1, 2]", "in", "@in", "(string, list(int))"),
        _case("!device.allowMultipleAllocations == 1", "==", "_==_", "(bool, int)"),
        _case("true ? device.driver : 1 == 1", "?", "_?_:_", "(bool, string, bool)"),
        _case(f"{C}.exists(name, name > 1)", ">", "_>_", "(string, int)"),
        _case(f"{A}.exists(name, name == 1)", "==", "_==_", "(string, int)"),
        _case(f"{C}.all(name, value, value > 0)", ">", "_>_", "(kubernetes.Quantity, int)"),
        _case("cel.bind(d, device.driver, d < 1)", "<", "_<_", "(string, int)"),
        _case(
            "device.capacity[1].size() > 0",
            "[",
            "_[_]",
            "(map(string, map(string, kubernetes.Quantity)), int)",
        ),
        # `device` itself is an object, not a map
        _case('"driver" in device', "in", "@in", "(string, kubernetes.DRADevice)"),
        _case('device["driver"] == "x"', "[", "_[_]", "(kubernetes.DRADevice, string)"),
        _refused('device.vendor == "x"', _error('device.vendor == "x"', ".", "undefined field 'vendor'")),
        _refused("has(device.vendor)", _error("has(device.vendor)", "(", "undefined field 'vendor'")),
        # conditions, ranges and field selections
        _refused(
            "device.driver && true",
            _error("device.driver && true", ".", "expected type 'bool' but found 'string'"),
        ),
        _refused(
            "[1].exists(x, device.driver)",
            _error("[1].exists(x, device.driver)", ".driver", "expected type 'bool' but found 'string'"),
        ),
        _refused(
            'device.driver.exists(c, c == "a")', _error('device.driver.exists(c, c == "a")', ".", RANGE)
        ),
        _refused(
            'device.driver.name == "a"',
            _error('device.driver.name == "a"', ".name", "type 'string' does not support field selection"),
        ),
        # every error, in order of place; the line of a multi-line selector
        _refused(
            TWO, _overload(TWO, "<", "_<_", "(string, int)"), _overload(TWO, "==", "_==_", "(bool, int)")
        ),
        _case('device.driver == "a" &&\n  device.driver < 1', "<", "_<_", "(string, int)"),
        # the same place on both backends whatever the spelling around it
        _case("1.includes(1) && [1, 2,].size() == 2 && device.driver < 1", "<", "_<_", "(string, int)"),
        _case("(device . driver) // a comment\n  <  1", "<", "_<_", "(string, int)"),
        _case("1.5 > 1.0 && true ? device.driver : 1", "?", "_?_:_", "(bool, string, int)"),
    ]
)


@pytest.fixture(scope="module", params=BACKEND_NAMES)
def engine(request: pytest.FixtureRequest) -> Any:
    return new_engine(request.param)


@pytest.mark.parametrize(("expression", "message"), REFUSED.items(), ids=list(REFUSED))
def test_it_refuses_a_misuse_of_the_device_fields_in_cel_gos_words(
    engine: Any, expression: str, message: str
) -> None:
    with pytest.raises(CelError) as refused:
        engine.compile(expression)
    assert str(refused.value) == message


def test_it_marks_a_wide_character_before_the_error_with_wide_dots(engine: Any) -> None:
    expression = '"é" != device.driver && device.driver < 1'
    with pytest.raises(CelError) as refused:
        engine.compile(expression)
    dots = "." + "\uff0e" + "." * (expression.index("<") - 2)  # a wide dot under the wide character
    assert str(refused.value).endswith(f" | {expression}\n | {dots}^")


NOT_BOOL = {
    "device": "kubernetes.DRADevice",
    "device.driver": "string",
    "device.attributes": "map(string, map(string, dyn))",
    C: "map(string, kubernetes.Quantity)",
    f"{C}.memory": "kubernetes.Quantity",
    f'{C}["memory"].add(1)': "kubernetes.Quantity",
    'device.driver + "/x"': "string",
}


@pytest.mark.parametrize(("expression", "result"), NOT_BOOL.items(), ids=list(NOT_BOOL))
def test_it_refuses_a_device_value_as_the_selectors_result_naming_its_type(
    engine: Any, expression: str, result: str
) -> None:
    with pytest.raises(CelError) as refused:
        engine.compile(expression)
    assert str(refused.value) == f"must evaluate to bool or the unknown type, not {result}"


ACCEPTED = {
    # attributes are dyn upstream too: their misuse is a runtime question
    f'{A}.model == 1 || {A}.model != "h200"': False,
    f'{A}.exists(name, name == "model")': True,
    f'{C}.memory.compareTo(quantity("40Gi")) >= 0 && {C}.memory.isGreaterThan(quantity("1"))': True,
    f'{C}.exists(name, name == "memory") && {C}.all(name, value, value.sign() == 1)': True,
    'device.driver.startsWith("gpu.") && size(device.driver) > 3 && device.driver in ["gpu.example.com"]': True,
    "device.allowMultipleAllocations == false && !device.allowMultipleAllocations": True,
    "dyn(device.driver) != 1": True,
    # a string joined with a dyn is dyn, as cel-go joins types
    "(true ? device.driver : dyn(1)) != 1 && [device.driver, dyn(1)].exists(x, x != 2)": True,
    'cel.bind(c, device.capacity, c["gpu.example.com"].memory.asInteger() > 0)': True,
    '[1].all(device, device > 0) && has(device.driver) && device.driver != ""': True,
}


def _gpu() -> Any:
    return device_input_from_api(
        "gpu.example.com",
        {
            "name": "gpu-0",
            "attributes": {"model": {"string": "h200"}},
            "capacity": {"memory": {"value": "80Gi"}},
        },
    )


@pytest.mark.parametrize(("expression", "match"), ACCEPTED.items(), ids=list(ACCEPTED))
def test_it_accepts_what_upstreams_types_accept_and_answers_as_before(
    engine: Any, expression: str, match: bool
) -> None:
    assert engine.compile(expression).matches(_gpu()) is match


def test_it_leaves_the_misuse_of_an_attribute_to_evaluation_as_upstream(engine: Any) -> None:
    selector = engine.compile(f"{A}.model < 1")  # an attribute is dyn: any type, known per device
    with pytest.raises(CelError, match="overload"):  # each engine words runtime errors its own way
        selector.matches(_gpu())


def test_it_words_every_device_type_error_alike_on_both_backends_on_generated_expressions() -> None:
    """Generated expressions (test_cel_robustness's generator: device fields, operators, library calls);
    wherever cel-python refuses one for upstream's types of `device` (its own checker never prints
    cel-go's ``ERROR: <input>`` form), cel-expr-python refuses it in the same words."""
    expr_engine, celpy_engine = new_engine("cel-expr-python"), new_engine("cel-python")
    rng = random.Random(20261203)
    compared, disagreements = 0, []
    for expression in (generated.generate(rng, 3) for _ in range(1500)):
        outcomes = []
        for engine in (expr_engine, celpy_engine):
            try:
                engine.compile(expression)
                outcomes.append("compiled")
            except CelError as exc:
                outcomes.append(str(exc))
        if outcomes[1].startswith("compilation failed: ERROR: <input>"):
            compared += 1
            if outcomes[0] != outcomes[1]:
                disagreements.append((expression, *outcomes))
    assert compared > 100
    assert disagreements == []
