"""Consumable capacity: request policies, rounding, and what one allocation consumes.

Amounts are compared as exact nano-units (`dra.quantity.Quantity.nano_value`).
"""

from __future__ import annotations

from collections.abc import Mapping

from dra.quantity import Quantity

from .model import Capacity, CapacityPolicy


def _round_up_range(requested: Quantity, policy: CapacityPolicy) -> Quantity:
    assert policy.range_min is not None
    low = policy.range_min
    if requested < low:
        return low
    if policy.range_step is None:
        return requested
    step = policy.range_step.nano_value()
    n = -(-(requested.nano_value() - low.nano_value()) // step)
    return Quantity(low.nano_value() + step * n, low.format)


def consumed_amount(requested: Quantity | None, cap: Capacity) -> Quantity:
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
            if requested <= valid:
                return valid
    return requested


def violates_policy(amount: Quantity, policy: CapacityPolicy | None) -> bool:
    if policy is None:
        return False
    if policy.default is not None and amount == policy.default:
        return False
    if policy.range_min is not None or policy.range_max is not None or policy.range_step is not None:
        if policy.range_max is not None and amount > policy.range_max:
            return True
        if policy.range_step is not None:
            low = policy.range_min.nano_value() if policy.range_min is not None else 0
            return (amount.nano_value() - low) % policy.range_step.nano_value() != 0
        return False
    if policy.valid_values:
        return all(amount != v for v in policy.valid_values)
    return False


def capacity_fits(
    requests: Mapping[str, Quantity] | None,
    capacity: Mapping[str, Capacity],
    in_use: Mapping[str, int] | None,
    allocating: Mapping[str, int] | None,
) -> bool:
    """Whether one more allocation with these requests fits on the device (amounts in nanos)."""
    if requests:
        for name in requests:
            if name not in capacity:
                return False  # asks for a capacity the device does not have
    for name, cap in capacity.items():
        amount = consumed_amount(requests.get(name) if requests else None, cap)
        if violates_policy(amount, cap.policy):
            return False
        total = amount.nano_value()
        if in_use:
            total += in_use.get(name, 0)
        if allocating:
            total += allocating.get(name, 0)
        if total > cap.value.nano_value():
            return False
    return True


def consumed_capacity(
    requests: Mapping[str, Quantity] | None, capacity: Mapping[str, Capacity]
) -> dict[str, Quantity]:
    return {
        name: consumed_amount(requests.get(name) if requests else None, cap) for name, cap in capacity.items()
    }
