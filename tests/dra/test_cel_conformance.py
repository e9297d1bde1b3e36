"""Runs every case of cel_conformance.yaml against the default selector engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dra.allocator.cel import CelError, default_engine, device_input_from_api

CONFORMANCE = yaml.safe_load((Path(__file__).parent / "cel_conformance.yaml").read_text())
PLACEHOLDERS = {
    "lists_1000": "[" + ", ".join(str(i) for i in range(1000)) + "]",
    "too_long_expression": 'device.driver == "' + "x" * 11_000 + '"',
}


def _expand(expression: str) -> str:
    for name, text in PLACEHOLDERS.items():
        expression = expression.replace(name, text)
    return expression


def _evaluate(case: dict[str, Any]) -> bool:
    spec = CONFORMANCE["devices"][case["device"]]
    device = device_input_from_api(spec["driver"], spec["device"])
    return default_engine().compile(_expand(str(case["expression"]))).matches(device)


@pytest.mark.parametrize("case", CONFORMANCE["cases"], ids=[c["name"] for c in CONFORMANCE["cases"]])
def test_it_evaluates_the_conformance_case(case: dict[str, Any]) -> None:
    if "error" in case:
        with pytest.raises(CelError) as raised:
            _evaluate(case)
        assert case["error"] in str(raised.value)
    else:
        assert _evaluate(case) is case["result"]


def test_it_has_enough_uniquely_named_cases() -> None:
    names = [c["name"] for c in CONFORMANCE["cases"]]
    assert len(names) >= 60
    assert len(set(names)) == len(names)
    assert all(("error" in c) != ("result" in c) for c in CONFORMANCE["cases"])
