"""Runs every case of cel_conformance.yaml on every CEL backend, with the same expected answers.

A case may mark a backend `unsupported` (the construct it cannot run): that backend must refuse the
expression at compile time, naming the construct and the expression — never answer differently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dra.allocator.cel import BACKEND_NAMES, CelError, backend, device_input_from_api
from dra.allocator.cel.celpy_syntax import UNSUPPORTED

CONFORMANCE = yaml.safe_load((Path(__file__).parent / "cel_conformance.yaml").read_text())
PLACEHOLDERS = {
    "lists_1000": "[" + ", ".join(str(i) for i in range(1000)) + "]",
    "too_long_expression": 'device.driver == "' + "x" * 11_000 + '"',
}
CASES = [(name, case) for case in CONFORMANCE["cases"] for name in BACKEND_NAMES]


def _expand(expression: str) -> str:
    for name, text in PLACEHOLDERS.items():
        expression = expression.replace(name, text)
    return expression


def _evaluate(backend_name: str, case: dict[str, Any]) -> bool:
    spec = CONFORMANCE["devices"][case["device"]]
    device = device_input_from_api(spec["driver"], spec["device"])
    return backend(backend_name).compile(_expand(str(case["expression"]))).matches(device)


@pytest.mark.parametrize(
    ("backend_name", "case"), CASES, ids=[f"{name}:{case['name']}" for name, case in CASES]
)
def test_it_evaluates_the_conformance_case(backend_name: str, case: dict[str, Any]) -> None:
    construct = (case.get("unsupported") or {}).get(backend_name)
    if construct is not None:
        expression = _expand(str(case["expression"]))
        with pytest.raises(CelError) as refused:
            backend(backend_name).compile(expression)
        assert f"not supported on the {backend_name} backend: {construct}" in str(refused.value)
        assert expression[:60] in str(refused.value)
    elif "error" in case:
        with pytest.raises(CelError) as raised:
            _evaluate(backend_name, case)
        assert case["error"] in str(raised.value)
    else:
        assert _evaluate(backend_name, case) is case["result"]


def test_it_has_enough_uniquely_named_cases() -> None:
    names = [c["name"] for c in CONFORMANCE["cases"]]
    assert len(names) >= 60
    assert len(set(names)) == len(names)
    assert all(("error" in c) != ("result" in c) for c in CONFORMANCE["cases"])


def test_it_marks_only_documented_constructs_unsupported_and_only_on_cel_python() -> None:
    marked = [c["unsupported"] for c in CONFORMANCE["cases"] if "unsupported" in c]
    assert marked, "the cel-python backend's refusals are part of the conformance file"
    assert all(set(m) == {"cel-python"} for m in marked)
    assert {m["cel-python"] for m in marked} <= set(UNSUPPORTED)
    # most of the file runs on both backends
    assert len(marked) < len(CONFORMANCE["cases"]) // 5
