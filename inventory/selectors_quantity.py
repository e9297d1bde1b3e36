"""Kubernetes resource quantities ("80Gi", "500m", "1e3") as exact numbers, for counter arithmetic."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "P": Decimal(10**15),
    "E": Decimal(10**18),
}
_PATTERN = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|)$")


class QuantityError(ValueError):
    pass


def parse_quantity(text: object) -> Decimal:
    if isinstance(text, int | float | Decimal):
        return Decimal(str(text))
    raw = str(text).strip()
    match = _PATTERN.match(raw)
    if not match:
        raise QuantityError(f"quantity {raw!r} is not a Kubernetes quantity (e.g. 80Gi, 500m, 4)")
    number, suffix = match.groups()
    try:
        value = Decimal(number)
    except InvalidOperation:
        raise QuantityError(f"quantity {raw!r} has an invalid number") from None
    if suffix in _BINARY:
        return value * _BINARY[suffix]
    if suffix and suffix[0] in "eE":
        return value * (Decimal(10) ** int(suffix[1:]))
    return value * _DECIMAL[suffix]


def format_quantity(value: Decimal) -> str:
    """Shortest exact spelling: binary suffixes for multiples of 1024, else plain or milli units."""
    if value == 0:
        return "0"
    if value == value.to_integral_value():
        integer = int(value)
        for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
            if integer % _BINARY[suffix] == 0 and abs(integer) >= _BINARY[suffix]:
                return f"{integer // _BINARY[suffix]}{suffix}"
        return str(integer)
    milli = value * 1000
    if milli == milli.to_integral_value():
        return f"{int(milli)}m"
    return str(value.normalize())
