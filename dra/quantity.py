"""Kubernetes resource quantities (``resource.Quantity`` semantics), exact and immutable.

The value is held as an integer number of nano-units: parsing rounds any non-zero magnitude
up to the next nano, as the API server does, so every parsed quantity is exact in nanos.
The format (DecimalSI, BinarySI, DecimalExponent) only steers ``str()``, the canonical form the
API server would serve back; arithmetic keeps the receiver's format like upstream ``Add``.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction
from typing import Literal

Format = Literal["DecimalSI", "BinarySI", "DecimalExponent"]

_NANO = 10**9
# Python refuses int<->str conversions beyond 4300 digits; no real quantity comes near this bound.
_MAX_DIGITS = 4000
_MAX_BITS = 13_287  # 4000 decimal digits
_INT64_MAX = 2**63 - 1
_INT64_MIN = -(2**63)

_DECIMAL_SUFFIXES: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {exp: suffix for suffix, exp in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXPONENT = {exp: suffix for suffix, exp in _BINARY_SUFFIXES.items()}

# sign, digits with an optional fraction (at least one digit somewhere), then the suffix.
_QUANTITY_RE = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?([eEinumkKMGTP]*[+-]?\d*)")
_EXPONENT_RE = re.compile(r"[eE]([+-]?\d+)")


#: upstream's ErrFormatWrong, what the API server answers for a quantity it cannot read
FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


class QuantityError(ValueError):
    """A string that is not a valid Kubernetes quantity."""


def _round_up_to_nanos(value: Fraction) -> int:
    """Round the magnitude up (away from zero) to a whole number of nanos, as ParseQuantity does."""
    nanos = value * _NANO
    magnitude = -((-abs(nanos.numerator)) // nanos.denominator)
    return magnitude if value >= 0 else -magnitude


@functools.total_ordering
class Quantity:
    """A Kubernetes quantity: ``Quantity.parse("1.5Gi")``, comparable, addable, exact."""

    __slots__ = ("_nanos", "_format")

    def __init__(self, nanos: int, fmt: Format = "DecimalSI") -> None:
        self._nanos = nanos
        self._format: Format = fmt

    # ----------------------------------------------------------------- construction
    @classmethod
    def parse(cls, text: str) -> Quantity:
        """Parse a quantity string; raises QuantityError naming the rule broken."""
        return _parse_cached(text)

    @classmethod
    def from_int(cls, value: int, fmt: Format = "DecimalSI") -> Quantity:
        return cls(value * _NANO, fmt)

    @classmethod
    def from_milli(cls, milli: int, fmt: Format = "DecimalSI") -> Quantity:
        return cls(milli * 10**6, fmt)

    # ----------------------------------------------------------------- accessors
    @property
    def format(self) -> Format:
        return self._format

    def nano_value(self) -> int:
        return self._nanos

    def milli_value(self) -> int:
        """The value in milli-units, rounded up like upstream ``MilliValue`` (ceil)."""
        return -((-self._nanos) // 10**6)

    def value(self) -> int:
        """The value in whole units, rounded up like upstream ``Value`` (ceil)."""
        return -((-self._nanos) // _NANO)

    def exact(self) -> Fraction:
        return Fraction(self._nanos, _NANO)

    def sign(self) -> int:
        return (self._nanos > 0) - (self._nanos < 0)

    def is_zero(self) -> bool:
        return self._nanos == 0

    def is_integer(self) -> bool:
        """True when ``as_integer`` succeeds: a whole number within int64."""
        return self._nanos % _NANO == 0 and _INT64_MIN <= self._nanos // _NANO <= _INT64_MAX

    def as_integer(self) -> int:
        if not self.is_integer():
            raise QuantityError(f"quantity {self}: cannot convert value to integer")
        return self._nanos // _NANO

    def as_approximate_float(self) -> float:
        try:
            return self._nanos / _NANO
        except OverflowError:
            return float("inf") if self._nanos > 0 else float("-inf")

    # ----------------------------------------------------------------- arithmetic
    def __add__(self, other: Quantity | int) -> Quantity:
        other_q = other if isinstance(other, Quantity) else Quantity.from_int(other, "DecimalExponent")
        # Upstream Add keeps the receiver's format unless the receiver is zero.
        fmt = other_q._format if self._nanos == 0 else self._format
        return Quantity(self._nanos + other_q._nanos, fmt)

    def __sub__(self, other: Quantity | int) -> Quantity:
        other_q = other if isinstance(other, Quantity) else Quantity.from_int(other, "DecimalExponent")
        fmt = other_q._format if self._nanos == 0 else self._format
        return Quantity(self._nanos - other_q._nanos, fmt)

    def __neg__(self) -> Quantity:
        return Quantity(-self._nanos, self._format)

    def mul(self, factor: int) -> Quantity:
        return Quantity(self._nanos * factor, self._format)

    def div(self, divisor: int, decimals: int = 4) -> Quantity:
        """Divide and round half away from zero to ``decimals`` fractional digits (0..10).

        Mirrors the CEL ``div`` function (upstream ``QuoRound``; rounding mode not verified upstream).
        """
        if divisor == 0:
            raise QuantityError("division by zero error")
        if not 0 <= decimals <= 10:
            raise QuantityError(f"the valid range for roundVal is 0 to 10 but {decimals} was passed")
        exact = Fraction(self._nanos, _NANO) / divisor
        scale = 10**decimals
        scaled = abs(exact) * scale
        rounded = int(scaled) + (1 if scaled - int(scaled) >= Fraction(1, 2) else 0)
        value = Fraction(rounded if exact >= 0 else -rounded, scale)
        return Quantity(_round_up_to_nanos(value), self._format)

    def div_int(self, divisor: int) -> Quantity:
        """Integer division of the value, truncating toward zero (CEL ``divInt``)."""
        if divisor == 0:
            raise QuantityError("division by zero error")
        exact = Fraction(self._nanos, _NANO) / divisor
        whole = int(exact)  # int() truncates toward zero
        return Quantity(whole * _NANO, self._format)

    def add(self, other: Quantity | int) -> Quantity:
        return self + other

    def sub(self, other: Quantity | int) -> Quantity:
        return self - other

    def compare_to(self, other: Quantity) -> int:
        return (self._nanos > other._nanos) - (self._nanos < other._nanos)

    # ----------------------------------------------------------------- comparisons
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._nanos == other._nanos

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._nanos < other._nanos

    def __hash__(self) -> int:
        return hash(self._nanos)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    # ----------------------------------------------------------------- canonical form
    def __str__(self) -> str:
        if self._nanos == 0:
            return "0"
        sign = "-" if self._nanos < 0 else ""
        magnitude = abs(self._nanos)
        fmt = self._format
        if fmt == "BinarySI":
            # Small or fractional binary quantities are shown in decimal rather than rounded.
            if magnitude < 1024 * _NANO or magnitude % _NANO != 0:
                fmt = "DecimalSI"
            else:
                units = magnitude // _NANO
                exponent = 0
                while exponent < 60 and units % 1024 == 0:
                    units //= 1024
                    exponent += 10
                return f"{sign}{units}{_BINARY_BY_EXPONENT.get(exponent, '')}"
        mantissa, exponent = magnitude, -9
        # Exponents are multiples of 3; SI suffixes stop at E (10^18), "e<n>" notation does not.
        max_exponent = 18 if fmt == "DecimalSI" else 10**6
        while mantissa % 1000 == 0 and exponent < max_exponent:
            mantissa //= 1000
            exponent += 3
        if fmt == "DecimalExponent":
            return f"{sign}{mantissa}" + (f"e{exponent}" if exponent else "")
        return f"{sign}{mantissa}{_DECIMAL_BY_EXPONENT[exponent]}"


@functools.lru_cache(maxsize=4096)
def _parse_cached(text: str) -> Quantity:
    if not isinstance(text, str) or not text:
        raise QuantityError(f"quantity {text!r}: must be a non-empty string")
    match = _QUANTITY_RE.fullmatch(text)
    if match is None:
        raise QuantityError(f"quantity {text!r}: {FORMAT_ERROR}")
    sign, whole, fraction, suffix = match.groups()
    fraction = fraction or ""
    if not whole and not fraction:
        raise QuantityError(f"quantity {text!r}: must start with a number")
    if len(whole) + len(fraction) > _MAX_DIGITS:
        raise QuantityError(f"quantity {text[:20]!r}...: too large (more than {_MAX_DIGITS} digits)")
    mantissa = Fraction(int(whole or "0") * 10 ** len(fraction) + int(fraction or "0"), 10 ** len(fraction))
    fmt: Format
    if suffix in _DECIMAL_SUFFIXES:
        fmt = "DecimalSI"
        value = mantissa * Fraction(10) ** _DECIMAL_SUFFIXES[suffix]
    elif suffix in _BINARY_SUFFIXES:
        fmt = "BinarySI"
        value = mantissa * 2 ** _BINARY_SUFFIXES[suffix]
    else:
        exp_match = _EXPONENT_RE.fullmatch(suffix)
        if exp_match is None:
            raise QuantityError(f"quantity {text!r}: unable to parse quantity's suffix {suffix!r}")
        exponent = int(exp_match.group(1))
        if abs(exponent) > 2 * _MAX_DIGITS:
            raise QuantityError(f"quantity {text!r}: exponent out of range")
        fmt = "DecimalExponent"
        value = mantissa * Fraction(10) ** exponent
    nanos = _round_up_to_nanos(value)
    if nanos.bit_length() > _MAX_BITS:
        raise QuantityError(f"quantity {text!r}: too large (more than {_MAX_DIGITS} digits)")
    if fmt == "BinarySI" and nanos > _INT64_MAX * _NANO:
        nanos = _INT64_MAX * _NANO  # upstream caps binary quantities at the int64 maximum
    if fmt == "BinarySI" and 0 < nanos < _NANO:
        fmt = "DecimalSI"
    return Quantity(-nanos if sign == "-" else nanos, fmt)
