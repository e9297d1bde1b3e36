"""The selector engines' contract with the allocator: compile once, convert a device once, clear errors.

Every test runs on both backends (cel-expr-python and cel-python) unless it names one.
"""

from __future__ import annotations

import copy
import pickle
import threading

import pytest

from dra.allocator.cel import (
    BACKEND_NAMES,
    MAX_EXPRESSION_BYTES,
    CelEngine,
    CelError,
    DeviceInput,
    Quantity,
    Semver,
    backend,
    device_input_from_api,
    new_engine,
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


@pytest.fixture(params=BACKEND_NAMES)
def name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def engine(name: str) -> CelEngine:
    return new_engine(name)


def test_it_returns_the_cached_selector_for_a_repeated_expression(engine: CelEngine) -> None:
    first = engine.compile('device.driver == "a"')
    assert engine.compile('device.driver == "a"') is first
    assert engine.compile_count == 1


def test_it_evicts_the_least_recently_used_expression(name: str) -> None:
    engine = new_engine(name, cache_size=2)
    a = engine.compile('device.driver == "a"')
    engine.compile('device.driver == "b"')
    engine.compile('device.driver == "a"')  # a is now the most recent
    engine.compile('device.driver == "c"')  # evicts b
    assert engine.compile('device.driver == "a"') is a
    assert engine.compile_count == 3
    engine.compile('device.driver == "b"')
    assert engine.compile_count == 4


def test_it_converts_a_device_once_for_many_selectors(engine: CelEngine) -> None:
    device = device_input_from_api("gpu.example.com", GPU)
    assert engine.compile('device.driver == "gpu.example.com"').matches(device)
    converted = dict(device._activations)  # the engine's form of the device, kept on the DeviceInput
    assert len(converted) == 1
    assert engine.compile('device.attributes["gpu.example.com"].model == "h200"').matches(device)
    assert all(device._activations[key] is value for key, value in converted.items())
    assert len(device._activations) == 1


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


def test_it_accepts_python_values_built_directly(engine: CelEngine) -> None:
    device = DeviceInput(
        driver="gpu.example.com",
        attributes={
            "gpu.example.com": {"driverVersion": Semver.parse("2.0.0"), "memory": Quantity.parse("1Gi")}
        },
        capacity={},
    )
    selector = engine.compile(
        'device.attributes["gpu.example.com"].driverVersion.major() == 2 && '
        'device.attributes["gpu.example.com"].memory == quantity("1024Mi")'
    )
    assert selector.matches(device)


def test_it_accepts_an_expression_of_exactly_the_length_limit(engine: CelEngine) -> None:
    prefix, suffix = 'device.driver == "', '"'
    filler = "x" * (MAX_EXPRESSION_BYTES - len(prefix) - len(suffix))
    assert not engine.compile(prefix + filler + suffix).matches(device_input_from_api("d", {"name": "d"}))
    with pytest.raises(CelError, match="too long"):
        engine.compile(prefix + filler + "x" + suffix)


def test_it_hints_at_a_guard_for_a_missing_attribute(engine: CelEngine) -> None:
    selector = engine.compile('device.attributes["gpu.example.com"].memoryGb > 10')
    with pytest.raises(CelError) as raised:
        selector.matches(device_input_from_api("gpu.example.com", GPU))
    assert "no such key: memoryGb" in str(raised.value)
    # optional chaining only where the backend has it
    if engine.backend == "cel-expr-python":  # upstream's hint, word for word
        assert str(raised.value).endswith(
            "no such key: memoryGb. consider using CEL optional chaining (.? followed by orValue()) "
            "or guarding the check with has() for optional fields"
        )
    else:
        assert "guarding the check with has()" in str(raised.value)


def test_it_estimates_cost_once_at_compile_time(engine: CelEngine) -> None:
    cheap = engine.compile('device.driver == "a"')
    nested = engine.compile(
        "cel.bind(l, [" + ", ".join(str(i) for i in range(500)) + "], l.all(x, l.all(y, x != y || x == y)))"
    )
    assert cheap.estimated_cost < 10
    assert nested.estimated_cost > 1_000_000
    with pytest.raises(CelError, match="cost limit exceeded"):
        nested.matches(device_input_from_api("d", {"name": "d"}))


def test_it_shares_one_engine_per_backend(name: str) -> None:
    assert backend(name) is backend(name)
    assert backend(name).backend == name


def test_it_evaluates_devices_converted_in_another_thread(engine: CelEngine) -> None:
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


def test_it_evaluates_non_bool_expressions_for_derived_attributes(engine: CelEngine) -> None:
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


def test_it_takes_a_custom_cost_limit(name: str) -> None:
    device = device_input_from_api("d", {"name": "d"})
    expression = "[1, 2, 3].all(x, [1, 2, 3].all(y, x + y > 0))"
    assert new_engine(name).compile(expression).matches(device)
    with pytest.raises(CelError, match="cost limit exceeded"):
        new_engine(name, cost_limit=10).compile(expression).matches(device)


@pytest.mark.parametrize(
    ("expression", "messages"),
    [
        (
            "1 < 2.0 ? optional.of(1) : optional.none()",
            {
                "cel-expr-python": "optional values cannot be combined with int/double",
                "cel-python": "not supported on the cel-python backend: optional values",
            },
        ),
        ('[duration("1m"), duration("1s")].sum() == duration("61s")', "sum() needs a list of numbers"),
        ("[1].all(x, x.frob())", "undeclared reference to 'frob'"),
        ('"a".matches(device.driver + "[")', "CEL runtime error"),
    ],
)
def test_it_turns_every_failure_into_cel_error(
    engine: CelEngine, expression: str, messages: str | dict[str, str]
) -> None:
    message = messages if isinstance(messages, str) else messages[engine.backend]
    with pytest.raises(CelError) as raised:
        engine.compile(expression).matches(device_input_from_api("d", {"name": "d"}))
    assert message in str(raised.value)


def test_it_pickles_and_copies_devices_that_were_already_evaluated(engine: CelEngine) -> None:
    device = device_input_from_api("gpu.example.com", GPU)
    selector = engine.compile('device.attributes["gpu.example.com"].model == "h200"')
    assert selector.matches(device)
    for clone in (pickle.loads(pickle.dumps(device)), copy.deepcopy(device), copy.copy(device)):
        assert clone == device
        assert selector.matches(clone)
