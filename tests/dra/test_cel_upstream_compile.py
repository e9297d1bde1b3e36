"""Upstream's CEL selector table (dynamic-resource-allocation ``cel/compile_test.go``: TestCEL,
TestCELFeatureCombinations) on both backends; ids are upstream's case names.

What is compared: a compile error, a runtime error or the match result, and the text upstream's case
expects in the error (cel-go's wording, which both engines give). The scheduler compiles selectors
in upstream's StoredExpressions environment (every 1.37 declaration, feature gates ignored), which is
the environment here; upstream's cases for the NewExpressions environment with a gate off
(``includes-function-compilation-error``, ``allow_multiple_allocations_disabled``) are the API
server's admission check, ported in tests/simcluster/test_validation_cel.py. Upstream's only other
compile error about types, ``type-error``, is here; what its checker refuses for the types of ``device``
is in test_cel_device_types.py. Upstream's expected cost is its
checker's exact estimate; ours is the static estimate of :mod:`dra.allocator.cel.cost`, held to
0.5-2x of it for the cases whose estimate is not tiny (tests/dra/test_cel_cost.py has the rest).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from dra.allocator.cel import BACKEND_NAMES, COST_LIMIT, CelError, device_input_from_api, new_engine

D = "dra.example.com"
A = f'device.attributes["{D}"]'
C = f'device.capacity["{D}"]'
MAX_VALUES = 48  # ResourceSliceMaxAttributeValuesPerDevice
MAX_LIST = 64  # upstream's maxElementsListTypeEnabled


@dataclass(frozen=True)
class Case:
    expression: str
    driver: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    capacity: dict[str, Any] = field(default_factory=dict)
    allow_multiple: bool | None = None
    match: bool | None = None
    compile_error: str | None = None
    match_error: str | None = None
    cost: int | None = None  # upstream's estimate


def _strings(n: int) -> dict[str, Any]:
    return {"strings": [f"value-{i}" for i in range(n)]}


def _many_long_attributes() -> dict[str, Any]:
    # the most attributes a device may have (32), each with the longest name (63 characters)
    return {f"{D}/" + "x" * (63 - len(f"-{i}")) + f"-{i}": {"string": "abc"} for i in range(32)}


NESTED_ALL = (
    "".join(f"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all({v}, " for v in ("x", "y", "z", "z2", "z3", "z4", "z5"))
    + "int('1'.find('[0-9]*')) < 100"
    + ")" * 7
)
ALL = (
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, " * 0
    + "".join(f"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all({v}, " for v in ("x", "y", "z", "z2", "z3", "z4", "z5"))
    + "int('1'.find('[0-9]*')) < 100"
    + ")" * 7
)
ALL = " &&\n".join(
    [
        f'{C}.quantity.isGreaterThan(quantity("1Ki"))',
        f"{A}.bool",
        f"{A}.int > 0",
        f'{A}.string == "fish"',
        f'{A}.version.isGreaterThan(semver("0.0.1"))',
        f'{C}["quantity"].isGreaterThan(quantity("1Ki"))',
        f'{A}["bool"]',
        f'{A}["int"] > 0',
        f'{A}["string"] == "fish"',
        f'{A}["version"].isGreaterThan(semver("0.0.1"))',
    ]
)
NAME_TRUE = {"name": {"bool": True}}
FISH_BIRD = {"strings": ["fish", "bird"]}
LOOP = 5 + 6 * MAX_LIST  # upstream: 5 + (3 + 3) * maxElementsListTypeEnabled


def _includes(target: dict[str, Any], arg: str, match: bool, cost: int = 52) -> Case:
    return Case(f"{A}.name.includes({arg})", D, {"name": target}, match=match, cost=cost)


CASES: dict[str, Case] = {
    "true": Case("true", match=True),
    "false": Case("false", match=False),
    "syntax-error": Case("?!", compile_error="Syntax error"),
    "type-error": Case("1", compile_error="must evaluate to bool or the unknown type, not int"),
    "runtime-error-lookup-identifier": Case(
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        match_error="no such key: noSuchAttr",
        cost=6,
    ),
    "runtime-error-lookup-map": Case(
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        match_error="no such key: noSuchAttr",
        cost=6,
    ),
    "domain-check-negative": Case('"no-such-domain" in device.attributes', match=False, cost=3),
    "domain-check-positive": Case(
        f'"{D}" in device.attributes', attributes={f"{D}/something": {"bool": True}}, match=True, cost=3
    ),
    "empty-driver-name": Case('device.driver == ""', match=True, cost=2),
    "real-driver-name": Case(f'device.driver == "{D}"', D, match=True, cost=4),
    "driver-name-qualifier": Case(f"{A}.name", D, NAME_TRUE, match=True, cost=4),
    "driver-name-qualifier-map-lookup": Case(f'{A}["name"]', D, NAME_TRUE, match=True, cost=4),
    "bind": Case(f"cel.bind(dra, {A}, dra.name)", D, NAME_TRUE, match=True, cost=15),
    "qualified-attribute-name": Case(
        'device.attributes["other.example.com"].name',
        D,
        {"other.example.com/name": {"bool": True}},
        match=True,
        cost=4,
    ),
    "bool": Case(f"{A}.name", D, NAME_TRUE, match=True, cost=4),
    "int": Case(f"{A}.name > 0", D, {"name": {"int": 1}}, match=True, cost=5),
    "string": Case(f'{A}.name == "fish"', D, {"name": {"string": "fish"}}, match=True, cost=5),
    "macro-exists-on-int": Case(
        f"{A}.name.exists(x, x > 0)",
        D,
        {"name": {"int": 1}},
        match_error="got 'types.Int', expected iterable type",
        cost=LOOP,
    ),
    "macro-exists-on-bool": Case(
        f"{A}.name.exists(x, x == true)",
        D,
        NAME_TRUE,
        match_error="got 'types.Bool', expected iterable type",
        cost=LOOP,
    ),
    "macro-exists-on-string": Case(
        f'{A}.name.exists(x, x == "fish")',
        D,
        {"name": {"string": "fish"}},
        match_error="got 'types.String', expected iterable type",
        cost=LOOP,
    ),
    "list-result-type-causes-match-error": Case(
        f"{A}.names",
        D,
        {"names": FISH_BIRD},
        match_error="CEL result of type list could not be converted to bool",
        cost=4,
    ),
    "includes-function-can-evaluate": _includes(FISH_BIRD, '"fish"', True),
    "list-of-bool": Case(
        f"{A}.names.size() == 2", D, {"names": {"bools": [True, False]}}, match=True, cost=6
    ),
    "list-of-int": Case(f"{A}.names.size() == 2", D, {"names": {"ints": [1, 2]}}, match=True, cost=6),
    "list-of-string": Case(f"{A}.names.size() == 2", D, {"names": FISH_BIRD}, match=True, cost=6),
    "list-of-semver": Case(
        f"{A}.names.size() == 2", D, {"names": {"versions": ["1.0.0", "2.0.0"]}}, match=True, cost=6
    ),
    "macro-on-list-of-int": Case(
        f"{A}.names.exists(x, x > 0)", D, {"names": {"ints": [1, 2]}}, match=True, cost=LOOP
    ),
    "macro-on-list-of-string": Case(
        f'{A}.names.all(x, x != "")', D, {"names": FISH_BIRD}, match=True, cost=5 + 4 * MAX_LIST
    ),
    "macro-on-list-of-semver": Case(
        f'{A}.names.all(x, x.isGreaterThan(semver("0.0.1")))',
        D,
        {"names": {"versions": ["1.0.0", "2.0.0"]}},
        match=True,
        cost=LOOP,
    ),
    "includes-function-compilation-and-eval-success": Case(
        f'{A}.attr.includes("fish")', D, {"attr": {"string": "fish"}}, match=True, cost=52
    ),
    "includes-function-on-bool-scalar-positive": _includes({"bool": True}, "true", True),
    "includes-function-on-bool-scalar-negative": _includes({"bool": False}, "true", False),
    "includes-function-on-bool-list-positive": _includes({"bools": [True, False]}, "true", True),
    "includes-function-on-bool-list-negative": _includes({"bools": [True, True]}, "false", False),
    "includes-function-on-int-scalar-positive": _includes({"int": 1}, "1", True),
    "includes-function-on-int-scalar-negative": _includes({"int": 2}, "1", False),
    "includes-function-on-int-list-positive": _includes({"ints": [1, 2]}, "1", True),
    "includes-function-on-int-list-negative": _includes({"ints": [1, 2]}, "3", False),
    "includes-function-on-string-scalar-positive": _includes({"string": "fish"}, '"fish"', True),
    "includes-function-on-string-scalar-negative": _includes({"string": "fish"}, '"bird"', False),
    "includes-function-on-string-list-positive": _includes(FISH_BIRD, '"fish"', True),
    "includes-function-on-string-list-negative": _includes(FISH_BIRD, '"cat"', False),
    "includes-function-on-semver-scalar-positive": _includes(
        {"version": "1.0.0"}, 'semver("1.0.0")', True, 53
    ),
    "includes-function-on-semver-scalar-negative": _includes(
        {"version": "1.0.0"}, 'semver("2.0.0")', False, 53
    ),
    "includes-function-on-semver-list-positive": _includes(
        {"versions": ["1.0.0", "2.0.0"]}, 'semver("1.0.0")', True, 53
    ),
    "includes-function-on-semver-list-negative": _includes(
        {"versions": ["1.0.0", "2.0.0"]}, 'semver("3.0.0")', False, 53
    ),
    "includes-function-on-very-long-list-positive": _includes(
        _strings(MAX_VALUES), f'"value-{MAX_VALUES}"', False
    ),
    "includes-function-on-very-long-list-runtime-error": Case(
        f'{A}.name.includes("value-{MAX_VALUES + 1}")',
        D,
        {"name": _strings(MAX_VALUES + 1)},
        match_error=f"'includes' function cannot be applied to lists longer than {MAX_VALUES} values",
        cost=52,
    ),
    "in-operator-on-list": Case(f"1 in {A}.names", D, {"names": {"ints": [1, 2, 3]}}, match=True, cost=68),
    "version": Case(
        f'{A}.name.isGreaterThan(semver("0.0.1"))', D, {"name": {"version": "1.0.0"}}, match=True, cost=6
    ),
    "version_v": Case(
        f'{A}.name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
        D,
        {"name": {"version": "1.0.0"}},
        match=True,
        cost=7,
    ),
    "macro-exists-on-version": Case(
        f'{A}.name.exists(x, x.isGreaterThan(semver("0.0.1")))',
        D,
        {"name": {"version": "1.0.0"}},
        match_error="got 'cel.Semver', expected iterable type",
        cost=5 + 7 * MAX_LIST,
    ),
    "quantity": Case(
        f'{C}.name.isGreaterThan(quantity("1Ki"))', D, capacity={"name": {"value": "1Mi"}}, match=True, cost=6
    ),
    "check-positive": Case(
        f'"name" in {C} && {C}.name.isGreaterThan(quantity("1Ki"))',
        D,
        capacity={"name": {"value": "1Mi"}},
        match=True,
        cost=10,
    ),
    "check-negative": Case(
        f'!("name" in {C}) || {C}.name.isGreaterThan(quantity("1Ki"))', match=True, cost=11
    ),
    "all": Case(
        ALL,
        D,
        {
            "bool": {"bool": True},
            "int": {"int": 1},
            "string": {"string": "fish"},
            "version": {"version": "1.0.0"},
        },
        {"quantity": {"value": "1Mi"}},
        match=True,
        cost=52,
    ),
    "many": Case(
        f"{A}.a && {A}.b && {A}.c",
        D,
        {"a": {"bool": True}, "b": {"bool": True}, "c": {"bool": True}},
        match=True,
        cost=12,
    ),
    "check_attribute_domains": Case(
        f'device.attributes.exists_one(x, x == "{D}")',
        D,
        {"services": {"string": "some_example_value"}},
        match=True,
        cost=164,
    ),
    "check_attribute_ids": Case(
        f'{A}.exists_one(x, x == "services")',
        D,
        {"services": {"string": "some_example_value"}},
        match=True,
        cost=133,
    ),
    "split_attribute": Case(
        f'{A}.services.split("example").size() >= 2',
        D,
        {"services": {"string": "some_example_value"}},
        match=True,
        cost=19,
    ),
    "regexp_attribute": Case(
        f'{A}.services.matches("[^a]?sym")', D, {"services": {"string": "asymetric"}}, match=True, cost=18
    ),
    "check_capacity_domains": Case(
        f'device.capacity.exists_one(x, x == "{D}")',
        D,
        capacity={"memory": {"value": "1Mi"}},
        match=True,
        cost=164,
    ),
    "check_capacity_ids": Case(
        f'{C}.exists_one(x, x == "memory")', D, capacity={"memory": {"value": "1Mi"}}, match=True, cost=133
    ),
    "expensive": Case(
        NESTED_ALL,
        D,
        _many_long_attributes(),
        match_error="actual cost limit exceeded",
        cost=85_555_551,
    ),
    "allow_multiple_allocations": Case(
        "device.allowMultipleAllocations == true", D, allow_multiple=True, match=True, cost=3
    ),
    "allow_multiple_allocations_default": Case(
        "device.allowMultipleAllocations == false", D, match=True, cost=3
    ),
    "allow_multiple_allocations_false": Case(
        "device.allowMultipleAllocations == false", D, allow_multiple=False, match=True, cost=3
    ),
    "allow_multiple_allocations_new": Case(
        "device.allowMultipleAllocations == false", D, allow_multiple=False, match=True, cost=3
    ),
    "allow_multiple_allocations_enabled": Case(
        "device.allowMultipleAllocations == false", D, allow_multiple=False, match=True, cost=3
    ),
}


def _device(case: Case) -> Any:
    spec: dict[str, Any] = {"name": "device-0", "attributes": case.attributes, "capacity": case.capacity}
    if case.allow_multiple is not None:
        spec["allowMultipleAllocations"] = case.allow_multiple
    return device_input_from_api(case.driver, spec)


@pytest.fixture(scope="module", params=BACKEND_NAMES)
def engine(request: pytest.FixtureRequest) -> Any:
    return new_engine(request.param)


@pytest.mark.parametrize(("name", "case"), CASES.items(), ids=list(CASES))
def test_it_answers_upstreams_cel_case(engine: Any, name: str, case: Case) -> None:
    if case.compile_error is not None:
        with pytest.raises(CelError) as refused:
            engine.compile(case.expression)
        assert case.compile_error in str(refused.value)
        return
    selector = engine.compile(case.expression)
    if case.match_error is not None:
        with pytest.raises(CelError) as failed:
            selector.matches(_device(case))
        assert case.match_error in str(failed.value)
        return
    assert selector.matches(_device(case)) is case.match


@pytest.mark.parametrize(
    ("name", "case"),
    [(n, c) for n, c in CASES.items() if c.cost is not None and c.cost >= 50],
    ids=[n for n, c in CASES.items() if c.cost is not None and c.cost >= 50],
)
def test_it_estimates_upstreams_cost_within_a_factor_of_two(engine: Any, name: str, case: Case) -> None:
    estimate = engine.compile(case.expression).estimated_cost
    assert case.cost is not None
    assert case.cost / 2 <= estimate <= case.cost * 2
    assert (estimate > COST_LIMIT) is (case.cost > COST_LIMIT)


# TestCELFeatureCombinations: in the StoredExpressions environment every expression compiles and
# matches whatever the gates; the allocator's engine is that environment.
COMBINATIONS = {
    "scalar-attribute": (f"{A}.ready", {"ready": {"bool": True}}, None),
    "list-attribute": (f"{A}.ids.exists(id, id == 1)", {"ids": {"ints": [1, 2]}}, None),
    "includes-function": (f'{A}.name.includes("fish")', {"name": {"string": "fish"}}, None),
    "multiple-allocations": ("device.allowMultipleAllocations", {}, True),
    "list-attribute-with-multiple-allocations": (
        f"device.allowMultipleAllocations && {A}.ids.exists(id, id == 1)",
        {"ids": {"ints": [1, 2]}},
        True,
    ),
}


@pytest.mark.parametrize(
    ("name", "expression", "attributes", "multiple"),
    [(name, *spec) for name, spec in COMBINATIONS.items()],
    ids=[f"stored-expressions/{name}" for name in COMBINATIONS],
)
def test_it_compiles_every_feature_dependent_declaration_as_stored_expressions(
    engine: Any, name: str, expression: str, attributes: dict[str, Any], multiple: bool | None
) -> None:
    case = Case(expression, D, attributes, allow_multiple=multiple)
    assert engine.compile(expression).matches(_device(case)) is True


def test_it_matches_upstreams_interrupt_case_without_a_deadline(engine: Any) -> None:
    """TestInterrupt's expression over 1000 int attributes (upstream: no error without a deadline)."""
    expression = f"{A}.map(key, {A}[key] * 20).filter(e, e > 50).exists(e, e == 60)"
    device = device_input_from_api(
        "", {"name": "d", "attributes": {f"{D}/attr{i}": {"int": i} for i in range(1000)}}
    )
    assert engine.compile(expression).matches(device) is True
