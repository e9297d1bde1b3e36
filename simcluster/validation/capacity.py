"""Device capacity: Quantity values and the request policy of consumable capacity (dra-api.md §2)."""

from __future__ import annotations

import json
from typing import Any, Final

from dra.quantity import Quantity, QuantityError
from simcluster.schema import Causes, child
from simcluster.validation.shared import as_list, max_items


def quantity_of(value: Any) -> Quantity | None:
    """A Quantity field's value: a string, or a JSON number read as its JSON text (as the API server
    decodes one); None if malformed (the schema reports it)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    try:
        return Quantity.parse(value if isinstance(value, str) else json.dumps(value))
    except QuantityError:
        return None


#: upstream's math.MaxInt64: the largest step its integer arithmetic reads faithfully
_INT64_MAX: Final = 2**63 - 1
_NANOS_PER_MILLI: Final = 10**6
_NANOS_PER_UNIT: Final = 10**9
_DISCRETE_MAX_OPTIONS: Final = 10


def check_request_policy(causes: Causes, path: str, policy: dict[str, Any], capacity: Any) -> None:
    """A consumable capacity's requestPolicy, as upstream checks it with DRAFractionalCapacityRange on (beta,
    on by default in 1.37; simcluster cannot turn it off)."""
    total = quantity_of(capacity)
    # Messages show quantities in canonical form, as upstream's Quantity.String() does.
    shown_capacity = str(total) if total is not None else capacity
    valid_values = as_list(policy.get("validValues"))
    valid_range = policy.get("validRange")
    if valid_values and valid_range is not None:
        causes.forbidden(
            path,
            'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time',
        )
        return
    if valid_values:
        if policy.get("default") is None:
            causes.required(child(path, "default"), "required when validValues is defined")
            return
        _check_valid_values(causes, child(path, "validValues"), policy, valid_values, total, shown_capacity)
    elif isinstance(valid_range, dict):
        if policy.get("default") is None:
            causes.required(child(path, "default"), "required when validRange is defined")
            return
        _check_valid_range(causes, child(path, "validRange"), policy, valid_range, total, shown_capacity)


def _shown(raw: Any, number: Quantity | None) -> Any:
    return str(number) if number is not None else raw


def _check_valid_values(
    causes: Causes,
    values_path: str,
    policy: dict[str, Any],
    valid_values: list[Any],
    total: Quantity | None,
    shown_capacity: Any,
) -> None:
    default = quantity_of(policy.get("default"))
    shown_default = _shown(policy.get("default"), default)
    if len(valid_values) > _DISCRETE_MAX_OPTIONS:
        # The size check short-circuits (DoS protection): no option is looked at, so none is the default.
        max_items(causes, values_path, valid_values, _DISCRETE_MAX_OPTIONS)
        causes.invalid(
            values_path, shown_default, "default value is not valid according to the requestPolicy"
        )
        return
    numbers = [quantity_of(v) for v in valid_values]
    # The options must ascend, so a repeat is always next to what it repeats: each option is compared with
    # the one before it (an out-of-order repeat is only reported as out of order).
    for index in range(1, len(numbers)):
        low, high = numbers[index - 1], numbers[index]
        if low is not None and high is not None and low > high:
            causes.invalid(f"{values_path}[{index}]", str(high), "values must be sorted in ascending order")
    found_default = False
    for index, number in enumerate(numbers):
        if number is None:
            continue
        if total is not None and number > total:
            causes.invalid(
                f"{values_path}[{index}]",
                str(number),
                f"option is larger than capacity value: {shown_capacity}",
            )
        found_default = found_default or number == default
    for index in range(1, len(numbers)):
        low, high = numbers[index - 1], numbers[index]
        if low is not None and high is not None and low == high:
            causes.duplicate(f"{values_path}[{index}]", str(high))
    if not found_default:
        causes.invalid(
            values_path, shown_default, "default value is not valid according to the requestPolicy"
        )


def _is_fractional(number: Quantity | None) -> bool:
    return number is not None and number.nano_value() % _NANOS_PER_UNIT != 0


def _milli_representable(number: Quantity) -> bool:
    """A whole number of milli-units that fits an int64 (9223372036854775807m is the largest)."""
    return (
        number.nano_value() % _NANOS_PER_MILLI == 0
        and abs(number.nano_value()) // _NANOS_PER_MILLI <= _INT64_MAX
    )


def _check_valid_range(
    causes: Causes,
    range_path: str,
    policy: dict[str, Any],
    valid_range: dict[str, Any],
    total: Quantity | None,
    shown_capacity: Any,
) -> None:
    raw_default = policy.get("default")
    raw_min, raw_max, raw_step = valid_range.get("min"), valid_range.get("max"), valid_range.get("step")
    default = quantity_of(raw_default)
    low, high, step = quantity_of(raw_min), quantity_of(raw_max), quantity_of(raw_step)
    if low is None:
        causes.required(child(range_path, "min"), "required when validRange is defined")
        return
    # With DRAFractionalCapacityRange a range with any fractional value (default included) is computed in
    # milli-units, so every value must be a whole number of milli-units that fits an int64 as such.
    exact = True
    named = (
        ("default", raw_default, default),
        ("min", raw_min, low),
        ("max", raw_max, high),
        ("step", raw_step, step),
    )
    if any(_is_fractional(number) for _, _, number in named):
        for name, raw, number in named:
            if number is not None and not _milli_representable(number):
                causes.invalid(
                    child(range_path, name),
                    _shown(raw, number),
                    "value cannot be represented as a milli value",
                )
                exact = False
    if total is not None and low > total:
        causes.invalid(
            child(range_path, "min"), str(low), f"min is larger than capacity value: {shown_capacity}"
        )
    if default is not None and default < low:
        causes.invalid(child(range_path, "default"), str(default), f"default is less than min: {low}")
    if high is not None:
        if low > high:
            causes.invalid(child(range_path, "max"), str(low), f"min is larger than max: {high}")
        if total is not None and high > total:
            causes.invalid(
                child(range_path, "max"), str(high), f"max is larger than capacity value: {shown_capacity}"
            )
        if default is not None and default > high:
            causes.invalid(child(range_path, "default"), str(default), f"default is more than max: {high}")
    if step is None:
        return
    step_path = child(range_path, "step")
    if step.sign() <= 0:
        causes.invalid(step_path, str(step), "must be greater than zero")
        return
    # Upstream counts steps in int64: a larger step, or a negative min, cannot be counted faithfully.
    if step.value() > _INT64_MAX:
        causes.invalid(step_path, str(step), f"must not be larger than {_INT64_MAX}")
        exact = False
    if low.sign() < 0:
        causes.invalid(child(range_path, "min"), str(low), "must be greater than or equal to 0")
        exact = False
    if total is not None and low + step > total:
        causes.invalid(
            step_path, str(step), f"one step {low + step} is larger than capacity value: {shown_capacity}"
        )
    if not exact:
        return
    for value in (default, high):
        if value is not None and (value - low).nano_value() % step.nano_value() != 0:
            causes.invalid(
                step_path, str(value), f"value is not a multiple of a given step ({step}) from ({low})"
            )
