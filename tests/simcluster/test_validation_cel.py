"""CEL selectors are compiled with the allocator's engine, so simcluster refuses what the scheduler cannot
run; without the engine a syntax check stands in."""

from __future__ import annotations

import copy

import pytest

from simcluster.validation import validate
from simcluster.validation.cel import _cel_engine, cel_syntax_problem
from tests.simcluster.validation_samples import (
    CLASS,
    a_class,
)


@pytest.mark.parametrize(
    ("expression", "fragment"),
    [
        ("device.driver ==", "compilation failed"),
        ('"gpu"', "must evaluate to bool"),
        ("device.nope(1)", "compilation failed"),
    ],
)
def test_it_compiles_selectors_with_the_allocators_cel_engine(expression: str, fragment: str) -> None:
    if _cel_engine() is None:
        pytest.skip("the allocator's CEL engine does not import; validation falls back to a syntax check")
    device_class = a_class()
    device_class["spec"]["selectors"][0]["cel"]["expression"] = expression
    causes, _ = validate(CLASS, device_class, None)
    assert [c["field"] for c in causes] == ["spec.selectors[0].cel.expression"]
    assert fragment in causes[0]["message"]


def test_it_does_not_recompile_selectors_already_stored() -> None:
    stored = a_class()
    stored["spec"]["selectors"][0]["cel"]["expression"] = '"legacy"'
    updated = copy.deepcopy(stored)
    updated["metadata"]["labels"] = {"team": "gpu"}
    assert validate(CLASS, updated, stored)[0] == []


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ('device.attributes["x"].y == "a"', None),
        ('device.attributes["x"', "unclosed '['"),
        ('device.driver == "a', "unterminated string literal"),
        ("(a))", "unexpected ')'"),
        ("   ", "empty expression"),
    ],
)
def test_it_falls_back_to_a_syntax_check_without_the_engine(expression: str, problem: str | None) -> None:
    assert cel_syntax_problem(expression) == problem
