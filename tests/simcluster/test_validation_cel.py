"""CEL selectors are compiled with the allocator's engine, so simcluster refuses what the scheduler cannot
run; without the engine a syntax check stands in. New selectors are judged with the gates the server runs
with (``includes`` needs DRAListTypeAttributes); stored ones keep working."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from kubernetes import client, config

from dra.allocator.features import DEFAULT_FEATURES, parse_feature_list
from simcluster.testing import SimCluster, run_simcluster
from simcluster.validation import validate
from simcluster.validation.cel import _calls, _cel_engine, cel_syntax_problem
from simcluster.validation.shared import FEATURES
from tests.simcluster.conftest import Kubectl
from tests.simcluster.upstream_validation import answer
from tests.simcluster.validation_samples import (
    CLAIM,
    CLASS,
    TEMPLATE,
    Obj,
    a_claim,
    a_class,
    a_template,
    requests,
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


INCLUDES = 'device.attributes["dra.example.com"].name.includes("fish")'
INCLUDES_UNDECLARED = (
    "Invalid value: "
    + json.dumps(INCLUDES)
    + ": compilation failed: ERROR: <input>:1:51: undeclared reference to 'includes' (in container '')\n"
    + f" | {INCLUDES}\n"
    + " | "
    + "." * 50
    + "^"
)


def includes_class() -> Obj:
    device_class = a_class()
    device_class["spec"]["selectors"][0]["cel"]["expression"] = INCLUDES
    return device_class


def includes_claim() -> Obj:
    claim = a_claim()
    requests(claim)[1]["exactly"]["selectors"] = [{"cel": {"expression": INCLUDES}}]
    return claim


def test_it_refuses_includes_in_new_selectors_while_list_type_attributes_is_off(
    shared_api: client.ApiClient,
) -> None:
    # upstream: NewExpressions leave `includes` out without DRAListTypeAttributes (alpha, off in 1.37)
    assert answer(shared_api, CLASS, includes_class()) == [
        ("spec.selectors[0].cel.expression", "FieldValueInvalid", INCLUDES_UNDECLARED)
    ]
    assert answer(shared_api, CLAIM, includes_claim()) == [
        (
            "spec.devices.requests[1].exactly.selectors[0].cel.expression",
            "FieldValueInvalid",
            INCLUDES_UNDECLARED,
        )
    ]


def test_it_accepts_includes_with_the_gate_on(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    features = parse_feature_list("DRAListTypeAttributes")
    with (
        run_simcluster(topology=None, kubeconfig_path=kubeconfig, controllers=False, features=features),
        config.new_client_from_config(str(kubeconfig)) as api,
    ):
        assert answer(api, CLASS, includes_class()) == []
        assert answer(api, CLAIM, includes_claim()) == []


def test_it_keeps_a_stored_includes_selector_working_with_the_gate_off() -> None:
    stored = includes_class()
    updated = copy.deepcopy(stored)
    updated["metadata"]["labels"] = {"team": "gpu"}
    assert validate(CLASS, updated, stored)[0] == []
    # a changed selector list is new again, as upstream's DeviceClass update judges it
    updated["spec"]["selectors"].append({"cel": {"expression": "true"}})
    assert [c["field"] for c in validate(CLASS, updated, stored)[0]] == ["spec.selectors[0].cel.expression"]


@pytest.mark.parametrize(
    ("expression", "calls"),
    [
        ('r"includes(" + x.includes (1) // includes(2)\n', [("includes", 26)]),
        (r"'it\'s includes(' == a.includes('x')", [("includes", 31)]),
        (r"R'\' + g(1) + 1e3 + f(0x1F)", [("g", 8), ("f", 21)]),
        ('"""a""" + b"""includes(""" + x', []),
    ],
)
def test_it_finds_calls_outside_strings_and_comments(expression: str, calls: list[tuple[str, int]]) -> None:
    assert _calls(expression) == calls


# upstream declares `device` with types (driver a string, allowMultipleAllocations a bool, capacity values
# Quantities): kube-apiserver refuses their misuse when the object is written, in cel-go's checker words
DRIVER_MISUSE = "device.driver < 1"
CAPACITY_MISUSE = 'device.capacity["gpu.example.com"].memory == 3'
MISUSED = {
    DRIVER_MISUSE: "ERROR: <input>:1:15: found no matching overload for '_<_' applied to '(string, int)'\n"
    " | device.driver < 1\n"
    " | ..............^",
    CAPACITY_MISUSE: "ERROR: <input>:1:43: found no matching overload for '_==_' applied to "
    "'(kubernetes.Quantity, int)'\n"
    f" | {CAPACITY_MISUSE}\n"
    f" | {'.' * 42}^",
}


def _invalid(expression: str) -> str:
    return f"Invalid value: {json.dumps(expression)}: compilation failed: {MISUSED[expression]}"


@pytest.mark.parametrize("expression", list(MISUSED))
def test_it_refuses_selectors_that_misuse_the_types_of_device_fields(
    shared_api: client.ApiClient, expression: str
) -> None:
    device_class = a_class()
    device_class["spec"]["selectors"][0]["cel"]["expression"] = expression
    assert answer(shared_api, CLASS, device_class) == [
        ("spec.selectors[0].cel.expression", "FieldValueInvalid", _invalid(expression))
    ]
    claim = a_claim()
    requests(claim)[1]["exactly"]["selectors"] = [{"cel": {"expression": expression}}]
    field = "spec.devices.requests[1].exactly.selectors[0].cel.expression"
    assert answer(shared_api, CLAIM, claim) == [(field, "FieldValueInvalid", _invalid(expression))]
    template = a_template()
    template["spec"]["spec"]["devices"]["requests"][1]["exactly"]["selectors"] = [
        {"cel": {"expression": expression}}
    ]
    assert answer(shared_api, TEMPLATE, template) == [
        (f"spec.{field}", "FieldValueInvalid", _invalid(expression))
    ]


@pytest.mark.kubectl
def test_it_shows_kubectl_the_checker_error_for_a_device_class_that_misuses_device_driver(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    device_class = a_class()
    device_class["spec"]["selectors"][0]["cel"]["expression"] = DRIVER_MISUSE
    created = kubectl("create", "-f", "-", input_text=json.dumps(device_class))
    assert created.returncode == 1
    assert created.stderr == (
        f'The DeviceClass "gpu.example.com" is invalid: spec.selectors[0].cel.expression: '
        f"{_invalid(DRIVER_MISUSE)}\n"
    )
    assert cluster.store.list("deviceclasses") == []


# upstream's allow_multiple_allocations_disabled (compile_test.go): new expressions get a `device` without
# allowMultipleAllocations while DRAConsumableCapacity (beta, on in 1.37) is off
MULTIPLE = "device.allowMultipleAllocations"
MULTIPLE_UNDEFINED = (
    f"Invalid value: {json.dumps(MULTIPLE)}: compilation failed: ERROR: <input>:1:7: "
    f"undefined field 'allowMultipleAllocations'\n | {MULTIPLE}\n | ......^"
)


def _class_selecting(expression: str) -> Obj:
    device_class = a_class()
    device_class["spec"]["selectors"][0]["cel"]["expression"] = expression
    return device_class


def test_it_refuses_allow_multiple_allocations_in_new_selectors_while_consumable_capacity_is_off(
    tmp_path: Path,
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    features = DEFAULT_FEATURES - {"ConsumableCapacity"}
    with (
        run_simcluster(topology=None, kubeconfig_path=kubeconfig, controllers=False, features=features),
        config.new_client_from_config(str(kubeconfig)) as api,
    ):
        assert answer(api, CLASS, _class_selecting(MULTIPLE)) == [
            ("spec.selectors[0].cel.expression", "FieldValueInvalid", MULTIPLE_UNDEFINED)
        ]
        # a name of its own, or a field of something else, is not the device's field
        other = "[1].exists(x, {'device': 1}.device == 1) && {'allowMultipleAllocations': true}.allowMultipleAllocations"
        assert answer(api, CLASS, _class_selecting(other)) == []
        # stored selectors keep working (an update that leaves them as they are)
        stored = _class_selecting(MULTIPLE)
        updated = copy.deepcopy(stored)
        updated["metadata"]["labels"] = {"team": "gpu"}
        token = FEATURES.set(features)
        try:
            assert validate(CLASS, updated, stored)[0] == []
        finally:
            FEATURES.reset(token)


def test_it_accepts_allow_multiple_allocations_with_consumable_capacity_on(
    shared_api: client.ApiClient,
) -> None:
    assert answer(shared_api, CLASS, _class_selecting(MULTIPLE)) == []
