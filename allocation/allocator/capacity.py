"""Consumable capacity: request policies, rounding, and what one allocation consumes."""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

from .model import Capacity, CapacityPolicy
from .quantity import Qty


def _round_up_range(requested: Qty, policy: CapacityPolicy) -> Qty:
    assert policy.range_min is not None
    low = policy.range_min
    if requested.value < low.value:
        return low
    if policy.range_step is None:
        return requested
    step = policy.range_step.value
    n = math.ceil((requested.value - low.value) / step)
    value = low.value + step * n
    return Qty(value, "BinarySI" if value.denominator == 1 else "DecimalSI")


def consumed_amount(requested: Qty | None, cap: Capacity) -> Qty:
    """What one allocation takes: the request rounded by the policy, else the policy
    default, else the whole capacity."""
    policy = cap.policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return cap.value
    if policy is None:
        return requested
    if policy.range_min is not None:
        return _round_up_range(requested, policy)
    if policy.valid_values is not None:
        for valid in policy.valid_values:
            if requested.value <= valid.value:
                return valid
    return requested


def violates_policy(amount: Qty, policy: CapacityPolicy | None) -> bool:
    if policy is None:
        return False
    if policy.default is not None and amount.value == policy.default.value:
        return False
    if policy.range_min is not None or policy.range_max is not None or policy.range_step is not None:
        if policy.range_max is not None and amount.value > policy.range_max.value:
            return True
        if policy.range_step is not None:
            low = policy.range_min.value if policy.range_min is not None else Fraction(0)
            return (amount.value - low) % policy.range_step.value != 0
        return False
    if policy.valid_values:
        return all(amount.value != v.value for v in policy.valid_values)
    return False


def capacity_fits(
    requests: Mapping[str, Qty] | None,
    capacity: Mapping[str, Capacity],
    in_use: Mapping[str, Fraction] | None,
    allocating: Mapping[str, Fraction] | None,
) -> bool:
    """Whether one more allocation with these requests fits on the device."""
    if requests:
        for name in requests:
            if name not in capacity:
                return False  # asks for a capacity the device does not have
    for name, cap in capacity.items():
        amount = consumed_amount(requests.get(name) if requests else None, cap)
        if violates_policy(amount, cap.policy):
            return False
        total = amount.value
        if in_use:
            total += in_use.get(name, 0)
        if allocating:
            total += allocating.get(name, 0)
        if total > cap.value.value:
            return False
    return True


def consumed_capacity(requests: Mapping[str, Qty] | None, capacity: Mapping[str, Capacity]) -> dict[str, Qty]:
    return {
        name: consumed_amount(requests.get(name) if requests else None, cap) for name, cap in capacity.items()
    }
