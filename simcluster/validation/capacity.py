"""Device capacity: Quantity values and the request policy of consumable capacity (dra-api.md §2)."""

from __future__ import annotations

import json
from typing import Any

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


def check_request_policy(causes: Causes, path: str, policy: dict[str, Any], capacity: Any) -> None:
    total = quantity_of(capacity)
    # Messages show quantities in canonical form, as upstream's Quantity.String() does.
    shown_capacity = str(total) if total is not None else capacity
    default = quantity_of(policy.get("default"))
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
        values_path = child(path, "validValues")
        numbers = [quantity_of(v) for v in valid_values]
        for index in range(len(numbers) - 1):
            low, high = numbers[index], numbers[index + 1]
            if low is not None and high is not None and low > high:
                causes.invalid(
                    f"{values_path}[{index + 1}]",
                    valid_values[index + 1],
                    "values must be sorted in ascending order",
                )
        if not max_items(causes, values_path, valid_values, 10):
            return
        seen: set[Quantity] = set()
        for index, (raw, number) in enumerate(zip(valid_values, numbers, strict=True)):
            if number is None:
                continue
            if total is not None and number > total:
                causes.invalid(
                    f"{values_path}[{index}]", raw, f"option is larger than capacity value: {shown_capacity}"
                )
            if number in seen:
                causes.duplicate(f"{values_path}[{index}]", raw)
            seen.add(number)
        if default not in seen:
            causes.invalid(
                values_path,
                policy.get("default"),
                "default value is not valid according to the requestPolicy",
            )
    elif isinstance(valid_range, dict):
        if policy.get("default") is None:
            causes.required(child(path, "default"), "required when validRange is defined")
            return
        range_path = child(path, "validRange")
        raw_min, raw_max, raw_step = valid_range.get("min"), valid_range.get("max"), valid_range.get("step")
        low, high, step = quantity_of(raw_min), quantity_of(raw_max), quantity_of(raw_step)
        if low is None:
            causes.required(child(range_path, "min"), "required when validRange is defined")
            return
        if total is not None and low > total:
            causes.invalid(
                child(range_path, "min"), raw_min, f"min is larger than capacity value: {shown_capacity}"
            )
        if default is not None and default < low:
            causes.invalid(
                child(range_path, "default"), policy.get("default"), f"default is less than min: {low}"
            )
        if high is not None:
            if low > high:
                causes.invalid(child(range_path, "max"), raw_min, f"min is larger than max: {high}")
            if total is not None and high > total:
                causes.invalid(
                    child(range_path, "max"), raw_max, f"max is larger than capacity value: {shown_capacity}"
                )
            if default is not None and default > high:
                causes.invalid(
                    child(range_path, "default"),
                    policy.get("default"),
                    f"default is more than max: {high}",
                )
        if step is not None:
            step_path = child(range_path, "step")
            if step.sign() <= 0:
                causes.invalid(step_path, raw_step, "must be greater than zero")
                return
            if total is not None and low + step > total:
                causes.invalid(
                    step_path,
                    raw_step,
                    f"one step {low + step} is larger than capacity value: {shown_capacity}",
                )
            for raw, value in ((policy.get("default"), default), (raw_max, high)):
                if value is not None and (value - low).nano_value() % step.nano_value() != 0:
                    causes.invalid(
                        step_path,
                        raw,
                        f"value is not a multiple of a given step ({step}) from ({low})",
                    )
