"""Upstream's consumable-capacity tables (dynamic-resource-allocation
``structured/internal/experimental/consumable_capacity_test.go``: calculate-consumed-capacity,
violate-capacity-sharing, get-consumed-capacity-from-request) against ``dra.allocator.capacity``;
ids are upstream's case names."""

from __future__ import annotations

import pytest

from dra.allocator.capacity import consumed_amount, consumed_capacity, violates_policy
from dra.allocator.model import Capacity, CapacityPolicy
from dra.quantity import Quantity

ONE, TWO, THREE = Quantity.parse("1"), Quantity.parse("2"), Quantity.parse("3")


def policy(
    default: Quantity | None = ONE,
    *,
    values: tuple[Quantity, ...] | None = None,
    low: Quantity | None = None,
    high: Quantity | None = None,
    step: Quantity | None = None,
) -> CapacityPolicy:
    return CapacityPolicy(default, values, low, high, step)


EMPTY = CapacityPolicy(None, None, None, None, None)
CONSUMED = {
    "empty": (None, ONE, EMPTY, ONE),
    "min in range": (None, TWO, policy(low=ONE), ONE),
    "default in set": (None, TWO, policy(values=(ONE,)), ONE),
    "more than min in range": (TWO, TWO, policy(low=ONE), TWO),
    "less than min in range": (ONE, TWO, policy(low=TWO), TWO),
    "with step (round up)": (TWO, THREE, policy(low=ONE, step=TWO), THREE),
    "with step (no remaining)": (TWO, TWO, policy(low=ONE, step=ONE), TWO),
    "valid value in set": (TWO, THREE, policy(values=(ONE, TWO, THREE)), TWO),
    "set (round up)": (TWO, THREE, policy(values=(ONE, THREE)), THREE),
    "larger than set": (THREE, THREE, policy(values=(ONE, TWO)), THREE),
}


@pytest.mark.parametrize(("requested", "value", "rules", "expected"), CONSUMED.values(), ids=list(CONSUMED))
def test_it_calculates_consumed_capacity_as_upstream(
    requested: Quantity | None, value: Quantity, rules: CapacityPolicy, expected: Quantity
) -> None:
    assert consumed_amount(requested, Capacity(value, rules)) == expected


VIOLATES = {
    "no constraint": (ONE, None, False),
    "less than maximum": (ONE, policy(low=ONE, high=TWO), False),
    "more than maximum": (TWO, policy(low=ONE, high=ONE), True),
    "in set": (ONE, policy(values=(ONE,)), False),
    "not in set": (TWO, policy(values=(ONE,)), True),
}


@pytest.mark.parametrize(("amount", "rules", "expected"), VIOLATES.values(), ids=list(VIOLATES))
def test_it_finds_policy_violations_as_upstream(
    amount: Quantity, rules: CapacityPolicy | None, expected: bool
) -> None:
    assert violates_policy(amount, rules) is expected


def test_it_takes_request_default_or_whole_value_as_upstream_get_consumed_capacity_from_request() -> None:
    capacity = {
        "capacity0": Capacity(TWO, policy(TWO, low=ONE)),  # requested: the request
        "capacity1": Capacity(TWO, policy(ONE, low=ONE)),  # not requested: the default
        "dummy": Capacity(ONE, None),  # not requested, no policy: the whole value
    }
    consumed = consumed_capacity({"capacity0": ONE, "dummy": ONE}, capacity)
    assert consumed == {"capacity0": ONE, "capacity1": ONE, "dummy": ONE}
