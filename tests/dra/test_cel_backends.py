"""Two CEL backends behind one interface: choosing one, what cel-python refuses, and that they agree."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dra.allocator import AllocationError, allocate
from dra.allocator.cel import (
    BACKEND_NAMES,
    DEFAULT_BACKEND,
    CelError,
    UnknownBackendError,
    backend,
    default_backend_name,
    default_engine,
    device_input_from_api,
    new_engine,
    set_default_backend,
)
from dra.allocator.cel.celpy_syntax import UNSUPPORTED
from dra.allocator.selectors import default_backend
from tests.dra import test_cel_robustness as generated
from tests.dra.allocator_cases import NODE, claim, device, device_class, exactly, resource_slice
from tests.dra.test_cel_conformance import CONFORMANCE, _expand
from tests.dra.test_cel_cost import UPSTREAM_ESTIMATES

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cel_python_default() -> Iterator[None]:
    before = default_backend_name()
    set_default_backend("cel-python")
    yield
    set_default_backend(before)


def test_it_keeps_cel_expr_python_the_default() -> None:
    assert DEFAULT_BACKEND == "cel-expr-python" == default_backend_name()  # the test settings leave it
    assert default_engine().backend == "cel-expr-python"
    assert default_backend().engine is backend("cel-expr-python")


def test_it_refuses_an_unknown_backend_and_keeps_the_default() -> None:
    with pytest.raises(UnknownBackendError, match="choose one of cel-expr-python, cel-python"):
        set_default_backend("cel_python")
    with pytest.raises(UnknownBackendError):
        backend("cel-go")
    assert default_backend_name() == "cel-expr-python"


def test_it_runs_the_allocator_on_the_chosen_backend(cel_python_default: None) -> None:
    assert default_backend().engine.backend == "cel-python"
    slices = [resource_slice("s", [device("gpu-0", attrs={"model": "h200"})])]
    claims = [claim("c", exactly("gpu"))]
    plain = device_class("gpu", 'device.attributes["gpu.example.com"].model == "h200"')
    allocated = allocate(classes=[plain], slices=slices, allocated_claims=[], claims=claims, node=NODE)
    assert allocated is not None and allocated[0]["devices"]["results"][0]["device"] == "gpu-0"
    optional = device_class("gpu", 'device.attributes["gpu.example.com"].?model.orValue("") == "h200"')
    with pytest.raises(AllocationError, match=r"not supported on the cel-python backend: optional field"):
        allocate(classes=[optional], slices=slices, allocated_claims=[], claims=claims, node=NODE)
    set_default_backend("cel-expr-python")
    assert (
        allocate(classes=[optional], slices=slices, allocated_claims=[], claims=claims, node=NODE)
        == allocated
    )


def test_it_loads_cel_python_only_when_it_is_chosen() -> None:
    code = (
        "import sys; from dra.allocator.cel import default_engine, device_input_from_api\n"
        "assert default_engine().compile('device.driver == \"a\"').matches(device_input_from_api('a', {}))\n"
        "print('celpy' in sys.modules, 'lark' in sys.modules)"
    )
    child = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert child.stdout.split() == ["False", "False"], child.stderr


UNSUPPORTED_EXAMPLES = {
    "optional field selection (.?)": 'device.attributes["d"].?model.orValue("") == "a"',
    "optional index ([?key])": 'device.attributes["d"][?"model"].hasValue()',
    "optional list elements and map entries ([?x], {?key: value})": "[?optional.of(1)].size() == 1",
    "optional values (optional.of, optional.none, orValue, hasValue, value, or)": "optional.of(1).hasValue()",
    "string formatting (format)": '"%s".format(["a"]) == "a"',
    "strings.quote": 'strings.quote("a") == "a"',
    "transformMap and transformMapEntry": '{"a": 1}.transformMap(k, v, v).size() == 1',
    "type values (type() and type names such as int)": "type(1) == int",
}


def test_it_has_an_example_for_every_refused_construct() -> None:
    assert set(UNSUPPORTED_EXAMPLES) == set(UNSUPPORTED)


@pytest.mark.parametrize(("construct", "expression"), UNSUPPORTED_EXAMPLES.items())
def test_it_refuses_what_cel_python_cannot_run_naming_the_construct_and_expression(
    construct: str, expression: str
) -> None:
    backend("cel-expr-python").compile(expression)  # valid CEL for the default backend
    with pytest.raises(CelError) as refused:
        new_engine("cel-python").compile(expression)
    message = str(refused.value)
    assert f"not supported on the cel-python backend: {construct}" in message
    assert expression in message


def _both_compile(expression: str) -> tuple[int, int] | None:
    try:
        return tuple(backend(name).compile(expression).estimated_cost for name in BACKEND_NAMES)  # type: ignore[return-value]
    except CelError:
        return None


def test_it_estimates_the_same_cost_on_both_backends() -> None:
    expressions = [_expand(str(c["expression"])) for c in CONFORMANCE["cases"]]
    expressions += [expression for expression, _ in UPSTREAM_ESTIMATES]
    costs = {e: pair for e in expressions if (pair := _both_compile(e)) is not None}
    assert len(costs) > 100
    assert {e: pair for e, pair in costs.items() if pair[0] != pair[1]} == {}


# Generated expressions both backends must answer alike. Left out are the places where cel-expr-python is
# known to differ from upstream, not cel-python: bytes literals and size()/string() (Kubernetes values are
# bytes there), `1 < 2.5 && …` (compiled unchecked there: no equality guard, no literal checks), and
# `map()` over maps (iteration order is unspecified).
LEFT_OUT = ('b"x"', "size({})", "string({})", "1 < 2.5 && {} == {}", "{}.map(x, x)")


def _outcome(name: str, expression: str, value: bool) -> tuple[str, object]:
    device = device_input_from_api(
        "gpu.example.com",
        {
            "name": "g",
            "attributes": {"model": {"string": "h"}, "v": {"version": "1.0.0"}, "l": {"ints": [1, 2]}},
            "capacity": {"m": {"value": "1Gi"}},
        },
    )
    engine = backend(name)
    try:
        compiled = engine.compile_value(expression) if value else engine.compile(expression)
        return "value", compiled.evaluate(device) if value else compiled.matches(device)
    except CelError as exc:
        return "error", str(exc)


def test_it_gives_the_same_answers_as_cel_expr_python_on_generated_expressions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for pool in ("ATOMS", "UNARY", "BINARY"):
        monkeypatch.setattr(generated, pool, [p for p in getattr(generated, pool) if p not in LEFT_OUT])
    rng = random.Random(20261130)
    compared = 0
    disagreements = []
    for expression in (generated.generate(rng, 3) for _ in range(400)):
        for value in (False, True):
            default, celpy = (
                _outcome("cel-expr-python", expression, value),
                _outcome("cel-python", expression, value),
            )
            if celpy[0] == "error" and "not supported on the cel-python backend" in str(celpy[1]):
                continue
            compared += 1
            same = default[0] == celpy[0] and (default[0] == "error" or default[1] == celpy[1])
            if not same:
                disagreements.append((expression, value, default, celpy))
    assert compared > 300
    assert disagreements == []


@pytest.mark.parametrize(
    "expression",
    [
        'device.driver == "a.?b" && device.driver != "[?x]"',
        "device.driver == r'{?k: v}' || device.driver == '''.?\n'''",
        'device.driver == "x" // a comment with .? in it',
        'device.driver == "\\".?"',
    ],
)
def test_it_reads_optional_syntax_inside_strings_and_comments_as_text(expression: str) -> None:
    device = device_input_from_api("a", {"name": "a"})
    assert backend("cel-python").compile(expression).matches(device) is False
    assert backend("cel-expr-python").compile(expression).matches(device) is False
