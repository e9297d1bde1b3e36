"""Kubernetes resource quantities as exact fractions, for capacity and counter arithmetic.

The CEL package has its own Quantity type for expressions; the allocator only needs exact
arithmetic and the canonical string form that the API server would write back, so it keeps
this small, dependency-free implementation.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from .errors import AllocationError

Format = Literal["BinarySI", "DecimalSI", "DecimalExponent"]

_PATTERN = re.compile(
    r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))((?:[eE][+-]?[0-9]+)|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|)$"
)
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BINARY_SUFFIX = {v: k for k, v in _BINARY.items()}


@dataclass(frozen=True, slots=True)
class Qty:
    """An exact quantity plus the format its canonical string uses."""

    value: Fraction
    format: Format = "DecimalSI"

    def __str__(self) -> str:
        return canonical(self.value, self.format)


def parse_quantity(text: object, *, field: str) -> Qty:
    """Parse a Kubernetes quantity string such as ``80Gi``, ``500m`` or ``1e3``."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise AllocationError(f"{field}: quantity must be a string, got {text!r}")
    parsed = parse_text(str(text).strip())
    if parsed is None:
        raise AllocationError(f"{field}: {text!r} is not a valid quantity")
    return parsed


@functools.lru_cache(maxsize=4096)
def parse_text(text: str) -> Qty | None:
    # Inventories repeat a handful of quantities ("80Gi") thousands of times; Qty is immutable.
    match = _PATTERN.match(text)
    if match is None:
        return None
    number, suffix = match.groups()
    mantissa = Fraction(number)
    if suffix in _BINARY:
        return Qty(mantissa * 1024 ** _BINARY[suffix], "BinarySI")
    if suffix in _DECIMAL:
        return Qty(mantissa * Fraction(10) ** _DECIMAL[suffix], "DecimalSI")
    return Qty(mantissa * Fraction(10) ** int(suffix[1:]), "DecimalExponent")


def canonical(value: Fraction, fmt: Format) -> str:
    """The API server's canonical spelling (values below 1n round up, as Kubernetes does)."""
    if value < 0:
        return "-" + canonical(-value, fmt)
    if fmt == "BinarySI" and value.denominator == 1 and value >= 1024:
        amount = value.numerator
        power = 0
        while amount % 1024 == 0 and power < 6:
            amount //= 1024
            power += 1
        return f"{amount}{_BINARY_SUFFIX.get(power, '')}" if power else str(amount)
    nanos = math.ceil(value * 10**9)
    if nanos == 0:
        return "0"
    exponent = -9
    while nanos % 10 == 0:
        nanos //= 10
        exponent += 1
    # Kubernetes keeps the exponent a multiple of three and the mantissa an integer.
    while exponent % 3 != 0:
        nanos *= 10
        exponent -= 1
    while fmt != "DecimalExponent" and exponent > 18:
        nanos *= 1000
        exponent -= 3
    if fmt == "DecimalExponent":
        return f"{nanos}e{exponent}" if exponent else str(nanos)
    return f"{nanos}{_DECIMAL_SUFFIX[exponent]}"
