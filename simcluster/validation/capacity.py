"""Device capacity: Quantity values and the request policy of consumable capacity (dra-api.md §2)."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Final

from simcluster.schema import Causes, child
from simcluster.validation.shared import as_list, max_items

_QUANTITY_SUFFIXES: Final = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}
_QUANTITY_PARTS: Final = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))([eE][+-]?\d+|[a-zA-Z]*)$")


def quantity_value(value: Any) -> Decimal | None:
    """The numeric value of a Quantity (``"80Gi"``, ``"1.5"``, ``"100m"``, ``2``); None if malformed."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    match = _QUANTITY_PARTS.match(value)
    if not match:
        return None
    number, suffix = match.groups()
    if suffix[:1] in ("e", "E") and suffix[1:].lstrip("+-").isdigit():
        return Decimal(number) * (Decimal(10) ** int(suffix[1:]))
    factor = _QUANTITY_SUFFIXES.get(suffix)
    return None if factor is None else Decimal(number) * factor


def check_request_policy(causes: Causes, path: str, policy: dict[str, Any], capacity: Any) -> None:
    total = quantity_value(capacity)
    default = quantity_value(policy.get("default"))
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
        numbers = [quantity_value(v) for v in valid_values]
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
        seen: set[Decimal] = set()
        for index, (raw, number) in enumerate(zip(valid_values, numbers, strict=True)):
            if number is None:
                continue
            if total is not None and number > total:
                causes.invalid(
                    f"{values_path}[{index}]", raw, f"option is larger than capacity value: {capacity}"
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
        low, high, step = quantity_value(raw_min), quantity_value(raw_max), quantity_value(raw_step)
        if low is None:
            causes.required(child(range_path, "min"), "required when validRange is defined")
            return
        if total is not None and low > total:
            causes.invalid(
                child(range_path, "min"), raw_min, f"min is larger than capacity value: {capacity}"
            )
        if default is not None and default < low:
            causes.invalid(
                child(range_path, "default"), policy.get("default"), f"default is less than min: {raw_min}"
            )
        if high is not None:
            if low > high:
                causes.invalid(child(range_path, "max"), raw_min, f"min is larger than max: {raw_max}")
            if total is not None and high > total:
                causes.invalid(
                    child(range_path, "max"), raw_max, f"max is larger than capacity value: {capacity}"
                )
            if default is not None and default > high:
                causes.invalid(
                    child(range_path, "default"),
                    policy.get("default"),
                    f"default is more than max: {raw_max}",
                )
        if step is not None:
            step_path = child(range_path, "step")
            if step <= 0:
                causes.invalid(step_path, raw_step, "must be greater than zero")
                return
            if total is not None and low + step > total:
                causes.invalid(
                    step_path, raw_step, f"one step {low + step} is larger than capacity value: {capacity}"
                )
            for raw, value in ((policy.get("default"), default), (raw_max, high)):
                if value is not None and (value - low) % step != 0:
                    causes.invalid(
                        step_path,
                        raw,
                        f"value is not a multiple of a given step ({raw_step}) from ({raw_min})",
                    )
