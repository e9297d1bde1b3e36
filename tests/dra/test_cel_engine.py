"""The selector engine's contract with the allocator: compile once, convert a device once, clear errors."""

from __future__ import annotations

import copy
import pickle
import threading

import pytest

from dra.allocator.cel import (
    MAX_EXPRESSION_BYTES,
    CelError,
    CelExprEngine,
    DeviceInput,
    Quantity,
    Semver,
    default_engine,
    device_input_from_api,
)

GPU = {
    "name": "gpu-0",
    "attributes": {
        "model": {"string": "h200"},
        "driverVersion": {"version": "1.2.3"},
        "resource.kubernetes.io/numaNode": {"int": 0},
        "cores": {"ints": [0, 1, 2]},
    },
    "capacity": {"memory": {"value": "80Gi"}, "dra.example.com/slots": {"value": 4}},
}


def test_it_returns_the_cached_selector_for_a_repeated_expression() -> None:
    engine = CelExprEngine()
    first = engine.compile('device.driver == "a"')
    assert engine.compile('device.driver == "a"') is first
    assert engine.compile_count == 1


def test_it_evicts_the_least_recently_used_expression() -> None:
    engine = CelExprEngine(cache_size=2)
    a = engine.compile('device.driver == "a"')
    engine.compile('device.driver == "b"')
    engine.compile('device.driver == "a"')  # a is now the most recent
    engine.compile('device.driver == "c"')  # evicts b
    assert engine.compile('device.driver == "a"') is a
    assert engine.compile_count == 3
    engine.compile('device.driver == "b"')
    assert engine.compile_count == 4


def test_it_converts_a_device_once_for_many_selectors() -> None:
    engine = CelExprEngine()
    device = device_input_from_api("gpu.example.com", GPU)
    engine.compile('device.driver == "gpu.example.com"').matches(device)
    activation = engine.activation(device)
    assert engine.compile('device.attributes["gpu.example.com"].model == "h200"').matches(device)
    assert engine.activation(device) is activation


def test_it_places_unprefixed_names_under_the_drivers_domain() -> None:
    device = device_input_from_api("gpu.example.com", GPU)
    assert device.attributes["gpu.example.com"]["model"] == "h200"
    assert device.attributes["gpu.example.com"]["driverVersion"] == Semver.parse("1.2.3")
    assert device.attributes["gpu.example.com"]["cores"] == [0, 1, 2]
    assert device.attributes["resource.kubernetes.io"]["numaNode"] == 0
    assert device.capacity["gpu.example.com"]["memory"] == Quantity.parse("80Gi")
    assert device.capacity["dra.example.com"]["slots"] == Quantity.parse("4")
    assert device.allow_multiple_allocations is False


@pytest.mark.parametrize(
    ("device", "message"),
    [
        ({"attributes": {"model": {"string": "a", "int": 1}}}, "attributes[model]: exactly one of"),
        ({"attributes": {"model": {}}}, "attributes[model]: exactly one of"),
        ({"attributes": {"v": {"version": "1.2"}}}, "attributes[v].version"),
        ({"attributes": {"n": {"int": "3"}}}, "attributes[n].int"),
        ({"attributes": {"n": {"ints": 3}}}, "attributes[n].ints: must be a list"),
        (
            {"attributes": {"n": {"int": 2**63}}},
            "attributes[n].int: 9223372036854775808 is outside the int64 range",
        ),
        ({"capacity": {"memory": {}}}, "capacity[memory].value: required"),
        ({"capacity": {"memory": {"value": "lots"}}}, "capacity[memory].value"),
    ],
)
def test_it_names_the_field_of_a_malformed_device(device: dict[str, object], message: str) -> None:
    with pytest.raises(CelError) as raised:
        device_input_from_api("gpu.example.com", {"name": "d", **device})
    assert message in str(raised.value)


def test_it_accepts_python_values_built_directly() -> None:
    device = DeviceInput(
        driver="gpu.example.com",
        attributes={
            "gpu.example.com": {"driverVersion": Semver.parse("2.0.0"), "memory": Quantity.parse("1Gi")}
        },
        capacity={},
    )
    selector = default_engine().compile(
        'device.attributes["gpu.example.com"].driverVersion.major() == 2 && '
        'device.attributes["gpu.example.com"].memory == quantity("1024Mi")'
    )
    assert selector.matches(device)


def test_it_accepts_an_expression_of_exactly_the_length_limit() -> None:
    prefix, suffix = 'device.driver == "', '"'
    filler = "x" * (MAX_EXPRESSION_BYTES - len(prefix) - len(suffix))
    assert (
        not CelExprEngine()
        .compile(prefix + filler + suffix)
        .matches(device_input_from_api("d", {"name": "d"}))
    )
    with pytest.raises(CelError, match="too long"):
        CelExprEngine().compile(prefix + filler + "x" + suffix)


def test_it_hints_at_optional_chaining_for_a_missing_attribute() -> None:
    selector = default_engine().compile('device.attributes["gpu.example.com"].memoryGb > 10')
    with pytest.raises(CelError) as raised:
        selector.matches(device_input_from_api("gpu.example.com", GPU))
    assert "no such key: memoryGb" in str(raised.value)
    assert "orValue" in str(raised.value)


def test_it_estimates_cost_once_at_compile_time() -> None:
    engine = CelExprEngine()
    cheap = engine.compile('device.driver == "a"')
    nested = engine.compile(
        "cel.bind(l, [" + ", ".join(str(i) for i in range(500)) + "], l.all(x, l.all(y, x != y || x == y)))"
    )
    assert cheap.estimated_cost < 10
    assert nested.estimated_cost > 1_000_000
    with pytest.raises(CelError, match="cost limit exceeded"):
        nested.matches(device_input_from_api("d", {"name": "d"}))


def test_it_shares_one_default_engine() -> None:
    assert default_engine() is default_engine()


def test_it_evaluates_devices_converted_in_another_thread() -> None:
    engine = CelExprEngine()
    selector = engine.compile('device.attributes["gpu.example.com"].model == "h200"')
    device = device_input_from_api("gpu.example.com", GPU)
    assert selector.matches(device)  # activation built in this thread
    results: list[object] = []

    def evaluate() -> None:
        try:
            results.append(selector.matches(device))
        except Exception as exc:  # surfaced by the assertion below
            results.append(exc)

    workers = [threading.Thread(target=evaluate) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert results == [True, True, True]


def test_it_evaluates_non_bool_expressions_for_derived_attributes() -> None:
    engine = CelExprEngine()
    device = device_input_from_api("gpu.example.com", GPU)
    assert engine.compile_value('device.attributes["resource.kubernetes.io"].numaNode').evaluate(device) == 0
    assert engine.compile_value('device.attributes["gpu.example.com"].driverVersion').evaluate(
        device
    ) == Semver.parse("1.2.3")
    assert engine.compile_value('device.capacity["gpu.example.com"].memory').evaluate(
        device
    ) == Quantity.parse("80Gi")
    assert engine.compile_value('device.attributes["gpu.example.com"].cores').evaluate(device) == [0, 1, 2]
    with pytest.raises(CelError, match="no such key"):
        engine.compile_value('device.attributes["gpu.example.com"].missing').evaluate(device)
    with pytest.raises(CelError, match="must evaluate to bool"):
        engine.compile("1 + 1")


def test_it_takes_a_custom_cost_limit() -> None:
    device = device_input_from_api("d", {"name": "d"})
    expression = "[1, 2, 3].all(x, [1, 2, 3].all(y, x + y > 0))"
    assert CelExprEngine().compile(expression).matches(device)
    with pytest.raises(CelError, match="cost limit exceeded"):
        CelExprEngine(cost_limit=10).compile(expression).matches(device)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("1 < 2.0 ? optional.of(1) : optional.none()", "optional values cannot be combined with int/double"),
        ('[duration("1m"), duration("1s")].sum() == duration("61s")', "sum() needs a list of numbers"),
    ],
)
def test_it_turns_every_failure_into_cel_error(expression: str, message: str) -> None:
    with pytest.raises(CelError, match=message.replace("(", r"\(").replace(")", r"\)")):
        CelExprEngine().compile(expression).matches(device_input_from_api("d", {"name": "d"}))


def test_it_pickles_and_copies_devices_that_were_already_evaluated() -> None:
    device = device_input_from_api("gpu.example.com", GPU)
    selector = default_engine().compile('device.attributes["gpu.example.com"].model == "h200"')
    assert selector.matches(device)
    for clone in (pickle.loads(pickle.dumps(device)), copy.deepcopy(device), copy.copy(device)):
        assert clone == device
        assert selector.matches(clone)
