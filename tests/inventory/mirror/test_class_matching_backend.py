"""The mirror matches DeviceClass selectors with the CEL backend the allocator uses (DRADASH_CEL_BACKEND)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dra.allocator.cel import BACKEND_NAMES, default_backend_name, set_default_backend
from inventory.mirror.derive.classes import compile_class

GPU = {"name": "gpu-0", "attributes": {"model": {"string": "h200"}}}


def _device_class(expression: str) -> dict[str, object]:
    return {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": expression}}]}}


@pytest.fixture(params=BACKEND_NAMES)
def chosen(request: pytest.FixtureRequest) -> Iterator[str]:
    before = default_backend_name()
    set_default_backend(str(request.param))
    yield str(request.param)
    set_default_backend(before)


def test_it_matches_devices_with_the_chosen_backend(chosen: str) -> None:
    matcher, warning = compile_class(_device_class('device.attributes["gpu.example.com"].model == "h200"'))
    assert warning == ""
    assert matcher("gpu.example.com", GPU) is True
    assert matcher("gpu.example.com", {"name": "gpu-1", "attributes": {"model": {"string": "a100"}}}) is False


def test_it_warns_when_the_chosen_backend_cannot_run_a_selector(chosen: str) -> None:
    matcher, warning = compile_class(
        _device_class('device.attributes["gpu.example.com"].?model.orValue("") == "h200"')
    )
    if chosen == "cel-python":
        assert "selector does not compile" in warning and "not supported on the cel-python backend" in warning
        assert matcher("gpu.example.com", GPU) is False
    else:
        assert warning == "" and matcher("gpu.example.com", GPU) is True


@pytest.mark.parametrize(
    "expression",
    [
        'device.attributes["gpu.example.com"].exists(name, name == "fast")',
        'cel.bind(d, device, d.attributes["gpu.example.com"].model == "h200") || false',
    ],
)
def test_devices_alike_in_the_plain_paths_are_evaluated_apart_when_the_selector_reads_more(
    expression: str,
) -> None:
    """The matcher's memo shares an answer only between devices that agree on all the selector reads:
    a macro over a domain's map, or `device` bound to another name, reads more than plain paths."""
    matcher, warning = compile_class(_device_class(expression))
    assert warning == ""
    fast = {"name": "gpu-0", "attributes": {"model": {"string": "h200"}, "fast": {"bool": True}}}
    slow = {"name": "gpu-1", "attributes": {"model": {"string": "a100"}}}
    assert (matcher("gpu.example.com", fast), matcher("gpu.example.com", slow)) == (True, False)


def test_with_a_short_and_a_qualified_name_for_one_attribute_the_key_is_the_value_cel_sees() -> None:
    """Both spellings of one attribute: the device input keeps the later one, and so does the memo key."""
    matcher, _warning = compile_class(_device_class('device.attributes["gpu.example.com"].model == "h200"'))
    h200, a100 = {"string": "h200"}, {"string": "a100"}
    short_last = {"name": "a", "attributes": {"gpu.example.com/model": a100, "model": h200}}
    qualified_last = {"name": "b", "attributes": {"model": h200, "gpu.example.com/model": a100}}
    assert (matcher("gpu.example.com", short_last), matcher("gpu.example.com", qualified_last)) == (
        True,
        False,
    )
