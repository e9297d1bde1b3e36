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
