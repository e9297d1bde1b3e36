"""`dra.allocator.memo`: selector outcomes shared by devices that look the same to an expression."""

from __future__ import annotations

from typing import Any

import pytest

from dra.allocator import DEFAULT_FEATURES, AllocationError, Allocator, SelectorMemo, prepare_claim
from dra.allocator.memo import device_refs
from dra.availability import pool_availability
from tests.dra.allocator_cases import (
    DRIVER,
    NODE,
    claim,
    device,
    device_class,
    exactly,
    resource_slice,
)

MODEL = f'device.attributes["{DRIVER}"].model == "H100"'


@pytest.mark.parametrize(
    ("expression", "refs"),
    [
        ('device.driver == "x"', (("driver", "", ""),)),
        (
            f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].model == "H100"',
            (("driver", "", ""), ("attributes", DRIVER, "model")),
        ),
        ('device.capacity["d"].memory.compareTo(quantity("1Gi")) >= 0', (("capacity", "d", "memory"),)),
        ("device.allowMultipleAllocations", (("allowMultipleAllocations", "", ""),)),
        ("true", ()),
        # Anything else that reads `device` is not memoised.
        ('device.attributes["d"].exists(k, true)', None),
        ('device.attributes["d"].size() > 2', None),
        ('device.capacity["d"].all(k, k != "x")', None),
        ('device.attributes["d"].model.startsWith("H")', (("attributes", "d", "model"),)),
        ('has(device.attributes["d"])', None),
        ('device.attributes["d"]["model"] == "x"', None),
        ('device.attributes["d\\u0041"].model == "x"', None),  # an escape: not the domain as written
        ('[1].exists(device, device == 1) && device.driver == "x"', None),
        ("cel.bind(d, device, d.driver == 'x')", None),
        ("device . driver == 'x'", None),
        ('device.driverName == "x"', None),
    ],
)
def test_device_refs_accepts_only_the_plain_paths(expression: str, refs: Any) -> None:
    assert device_refs(expression) == refs


def _gpu(name: str, model: Any = "H100", **attrs: Any) -> dict[str, Any]:
    return device(name, attrs={"model": model, "uuid": f"uuid-{name}", **attrs})


def _matches(allocator: Allocator, dev: dict[str, Any], expression: str = MODEL) -> bool:
    parsed = next(d for s in allocator.slices for d in s.devices if d.name == dev["name"])
    return allocator.selector_matches(expression, parsed, "test", 0)


def test_devices_that_agree_on_what_the_expression_reads_share_one_evaluation() -> None:
    devs = [_gpu("gpu-0"), _gpu("gpu-1"), _gpu("gpu-2", model="A100")]
    memo = SelectorMemo()
    allocator = Allocator(classes=[], slices=[resource_slice("s", devs)], selector_memo=memo)
    assert [_matches(allocator, d) for d in devs] == [True, True, False]
    assert memo.evaluations == 2  # H100 once (gpu-0 and gpu-1 differ only in uuid), A100 once
    # Another allocator (the next pool) with the same memo: a device with a changed attribute is
    # evaluated again, one that agrees with a known one is not.
    again = [_gpu("gpu-0", model="A100"), _gpu("gpu-1", model="B200")]
    other = Allocator(classes=[], slices=[resource_slice("t", again, pool="p2")], selector_memo=memo)
    assert [_matches(other, d) for d in again] == [False, False]
    assert memo.evaluations == 3  # B200 is new


def test_a_changed_expression_is_evaluated_again() -> None:
    """A DeviceClass changed between two pools of one batch: the key holds the expression itself."""
    devs = [_gpu("gpu-0")]
    memo = SelectorMemo()
    allocator = Allocator(classes=[], slices=[resource_slice("s", devs)], selector_memo=memo)
    assert _matches(allocator, devs[0], MODEL) is True
    changed = f'device.attributes["{DRIVER}"].model == "A100"'
    other = Allocator(classes=[], slices=[resource_slice("s", devs)], selector_memo=memo)
    assert _matches(other, devs[0], changed) is False
    assert memo.evaluations == 2


def test_values_of_different_types_do_not_share_an_outcome() -> None:
    expression = f'device.attributes["{DRIVER}"].flag == true'
    devs = [_gpu("gpu-0", flag={"bool": True}), _gpu("gpu-1", flag={"int": 1})]
    memo = SelectorMemo()
    allocator = Allocator(classes=[], slices=[resource_slice("s", devs)], selector_memo=memo)
    assert _matches(allocator, devs[0], expression) is True
    assert _matches(allocator, devs[1], expression) is False  # 1 is not true in CEL, though 1 == True
    assert memo.evaluations == 2


def test_a_remembered_runtime_error_names_each_device() -> None:
    expression = f'device.attributes["{DRIVER}"].missing == "x"'
    devs = [_gpu("gpu-0"), _gpu("gpu-1")]
    memo = SelectorMemo()
    allocator = Allocator(classes=[], slices=[resource_slice("s", devs)], selector_memo=memo)
    for d in devs:
        with pytest.raises(
            AllocationError, match=f"on device {DRIVER}/node-1/{d['name']}: CEL runtime error"
        ):
            _matches(allocator, d, expression)
    assert memo.evaluations == 1


def test_a_device_whose_conversion_fails_still_fails() -> None:
    """The memo replaces the evaluation, not the conversion: a bad attribute the expression does not
    read is still an error for that device, even after a good device with the same model."""
    good, bad = _gpu("gpu-0"), _gpu("gpu-1", broken={"version": "not-a-version"})
    memo = SelectorMemo()
    allocator = Allocator(classes=[], slices=[resource_slice("s", [good, bad])], selector_memo=memo)
    assert _matches(allocator, good) is True
    with pytest.raises(AllocationError, match="gpu-1: CEL runtime error"):
        _matches(allocator, bad)


def test_pool_availability_with_a_shared_memo_gives_the_same_numbers() -> None:
    gpu = device_class("gpu", f'device.driver == "{DRIVER}"', MODEL)
    pools = [
        [resource_slice(f"s{i}", [_gpu(f"gpu-{j}", model=m) for j, m in enumerate(models)], pool=f"p{i}")]
        for i, models in enumerate([["H100", "H100"], ["A100", "H100"], ["H100", "A100", "H100"]])
    ]
    memo = SelectorMemo()
    for slices in pools:
        kwargs: dict[str, Any] = dict(
            driver=DRIVER,
            pool=slices[0]["spec"]["pool"]["name"],
            slices=slices,
            allocated_claims=[],
            taint_rules=[],
            classes=[gpu],
            nodes=[NODE],
        )
        assert pool_availability(**kwargs, selector_memo=memo) == pool_availability(**kwargs)
    assert memo.evaluations == 3  # the driver term once, the model term for H100 and A100


def test_an_allocation_with_a_memo_is_the_allocation_without() -> None:
    devs = [_gpu("gpu-0", model="A100"), _gpu("gpu-1"), _gpu("gpu-2")]
    cls = device_class("gpu", MODEL)
    want = prepare_claim(claim("c", exactly("gpu", count=2)))
    ids = iter(range(100))
    results = []
    for memo in (None, SelectorMemo()):
        allocator = Allocator(
            classes=[cls],
            slices=[resource_slice("s", devs)],
            features=DEFAULT_FEATURES,
            selector_memo=memo,
            id_factory=lambda: str(next(ids)),
        )
        results.append(allocator.allocate(NODE, [want]))
    assert results[0] == results[1]
    assert [r["device"] for r in results[0][0]["devices"]["results"]] == ["gpu-1", "gpu-2"]
