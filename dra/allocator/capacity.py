"""Consumable capacity: request policies, rounding, and what one allocation consumes.

Sums and comparisons with the capacity are exact (`dra.quantity.Quantity` nano-units). Rounding
a request onto a ``validRange`` step follows upstream's arithmetic, which is not exact: it works
on whole units rounded up (``Quantity.Value()``), or, with DRAFractionalCapacityRange and a range
whose min, max or step has a fraction, on milli-units rounded up (``MilliValue()``), so three
decimals at most. With the feature off a fractional range is therefore rounded as if its bounds
were the next whole numbers, as upstream does (min 0.5, step 0.5, request 1.2 consumes 2, not 1.5).
"""

from __future__ import annotations

from collections.abc import Mapping

from dra.quantity import Quantity

from .model import Capacity, CapacityPolicy

_INT64_MAX = 2**63 - 1
#: upstream's ``resource.MaxMilliValue``: the largest value whose milli-units fit an int64
_MAX_MILLI_VALUE = _INT64_MAX // 1000


def use_milli(policy: CapacityPolicy, fractional: bool) -> bool:
    """Upstream ``useMilli``: milli-unit arithmetic for the range (DRAFractionalCapacityRange on,
    some bound fractional, all bounds small enough, a step of at least 1m)."""
    if not fractional:
        return False
    has_fraction = False
    for q in (policy.range_min, policy.range_max, policy.range_step):
        if q is None:
            continue
        if q.value() > _MAX_MILLI_VALUE:
            return False
        if q.milli_value() % 1000:
            has_fraction = True
    if not has_fraction:
        return False
    return policy.range_step is None or policy.range_step.milli_value() >= 1


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up_range(requested: Quantity, policy: CapacityPolicy, fractional: bool) -> Quantity:
    assert policy.range_min is not None
    low = policy.range_min
    if requested < low:
        return low
    step = policy.range_step
    if step is None:
        return requested
    if use_milli(policy, fractional):
        low_m, step_m = low.milli_value(), step.milli_value()
        return Quantity.from_milli(
            low_m + step_m * _ceil_div(requested.milli_value() - low_m, step_m), step.format
        )
    limit = Quantity.from_int(_INT64_MAX)
    if low.sign() >= 0 and requested <= limit and step <= limit and low <= limit:
        # Whole units rounded up, as upstream's int64 path; beyond int64 it computes exactly.
        low_i, step_i = low.value(), step.value()
        n = _ceil_div(requested.value() - low_i, step_i)
        if n == 0 or step_i <= (_INT64_MAX - low_i) // n:
            return Quantity.from_int(low_i + step_i * n, step.format)
    n = _ceil_div(requested.nano_value() - low.nano_value(), step.nano_value())
    return Quantity(low.nano_value() + step.nano_value() * n, step.format)


def consumed_amount(requested: Quantity | None, cap: Capacity, fractional: bool = False) -> Quantity:
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
        return _round_up_range(requested, policy, fractional)
    if policy.valid_values is not None:
        for valid in policy.valid_values:
            if requested <= valid:
                return valid
    return requested


def violates_policy(amount: Quantity, policy: CapacityPolicy | None, fractional: bool = False) -> bool:
    if policy is None:
        return False
    if policy.default is not None and amount == policy.default:
        return False
    if policy.range_min is not None or policy.range_max is not None or policy.range_step is not None:
        if policy.range_max is not None and amount > policy.range_max:
            return True
        step = policy.range_step
        if step is not None:
            low = policy.range_min if policy.range_min is not None else Quantity(0)
            if use_milli(policy, fractional):
                off, unit = amount.milli_value() - low.milli_value(), step.milli_value()
            else:
                off, unit = amount.value() - low.value(), step.value()
            return unit > 0 and off % unit != 0
        return False
    if policy.valid_values:
        return all(amount != v for v in policy.valid_values)
    return False


def capacity_fits(
    requests: Mapping[str, Quantity] | None,
    capacity: Mapping[str, Capacity],
    in_use: Mapping[str, int] | None,
    allocating: Mapping[str, int] | None,
    fractional: bool = False,
) -> bool:
    """Whether one more allocation with these requests fits on the device (amounts in nanos)."""
    if requests:
        for name in requests:
            if name not in capacity:
                return False  # asks for a capacity the device does not have
    for name, cap in capacity.items():
        amount = consumed_amount(requests.get(name) if requests else None, cap, fractional)
        if violates_policy(amount, cap.policy, fractional):
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
    requests: Mapping[str, Quantity] | None, capacity: Mapping[str, Capacity], fractional: bool = False
) -> dict[str, Quantity]:
    return {
        name: consumed_amount(requests.get(name) if requests else None, cap, fractional)
        for name, cap in capacity.items()
    }
