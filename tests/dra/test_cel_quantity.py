"""Kubernetes quantity parsing, canonical form and arithmetic (dra.allocator.cel.Quantity)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dra.allocator.cel import Quantity, QuantityError


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("0", "0"),
        ("1", "1"),
        ("1000", "1k"),
        ("1024", "1024"),
        ("1.5", "1500m"),
        (".5", "500m"),
        ("5.", "5"),
        ("+7", "7"),
        ("100m", "100m"),
        ("1000m", "1"),
        ("1500000u", "1500m"),
        ("2000n", "2u"),
        ("1k", "1k"),
        ("1500k", "1500k"),
        ("2000000k", "2G"),
        ("3E", "3E"),
        ("1Ki", "1Ki"),
        ("1024Ki", "1Mi"),
        ("1536Ki", "1536Ki"),
        ("1.5Gi", "1536Mi"),
        ("80Gi", "80Gi"),
        ("0.5Ki", "512"),
        ("0.9Gi", "966367641600m"),
        ("-1.5Gi", "-1536Mi"),
        ("-100m", "-100m"),
        ("12e6", "12e6"),
        ("1e3", "1e3"),
        ("1500e-3", "1500e-3"),
        ("1E3", "1e3"),
        ("1e21", "1e21"),
        ("1000E", "1000E"),
        ("0.1n", "1n"),
        ("1e-12", "1e-9"),
    ],
)
def test_it_formats_quantities_in_canonical_form(text: str, canonical: str) -> None:
    assert str(Quantity.parse(text)) == canonical


@pytest.mark.parametrize(
    ("text", "exact"),
    [
        ("1Gi", Fraction(2**30)),
        ("1G", Fraction(10**9)),
        ("250m", Fraction(1, 4)),
        ("1.5Ki", Fraction(1536)),
        ("2e-3", Fraction(1, 500)),
        ("-3k", Fraction(-3000)),
        ("0.0000000001", Fraction(1, 10**9)),  # rounded up to one nano, like the API server
        ("-0.0000000001", Fraction(-1, 10**9)),
    ],
)
def test_it_parses_binary_decimal_and_exponent_suffixes_exactly(text: str, exact: Fraction) -> None:
    assert Quantity.parse(text).exact() == exact


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "non-empty"),
        ("Mi", "must start with a number"),
        ("200K", "unable to parse quantity's suffix"),
        ("10Mm", "unable to parse quantity's suffix"),
        ("10Mo", "quantities must match the regular expression"),
        ("1,5G", "quantities must match the regular expression"),
        ("1.2.3", "quantities must match the regular expression"),
        ("Three", "quantities must match the regular expression"),
        ("1e", "unable to parse quantity's suffix"),
    ],
)
def test_it_rejects_malformed_quantities_with_the_rule(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as raised:
        Quantity.parse(text)
    assert message in str(raised.value)


def test_it_compares_across_formats() -> None:
    assert Quantity.parse("1Gi") == Quantity.parse("1024Mi")
    assert Quantity.parse("200M") == Quantity.parse("0.2G")
    assert Quantity.parse("50M") < Quantity.parse("50Mi")
    assert Quantity.parse("1") > Quantity.parse("999m")
    assert Quantity.parse("50M").compare_to(Quantity.parse("50Mi")) == -1
    assert sorted([Quantity.parse("1Gi"), Quantity.parse("1k"), Quantity.parse("1")]) == [
        Quantity.parse("1"),
        Quantity.parse("1k"),
        Quantity.parse("1Gi"),
    ]


def test_it_adds_and_subtracts_keeping_the_receivers_format() -> None:
    total = Quantity.parse("1Gi") + Quantity.parse("512Mi")
    assert str(total) == "1536Mi"
    assert str(Quantity.parse("50k") - 20) == "49980"
    assert str(Quantity.parse("1") - Quantity.parse("1500m")) == "-500m"
    assert str(Quantity.parse("0") + Quantity.parse("1Ki")) == "1Ki"  # a zero receiver takes the other format
    assert (Quantity.parse("80Gi") - Quantity.parse("80Gi")).is_zero()


def test_it_exposes_milli_integer_and_float_views() -> None:
    q = Quantity.parse("1500m")
    assert q.milli_value() == 1500
    assert Quantity.parse("1n").milli_value() == 1  # rounds up, like upstream MilliValue
    assert q.value() == 2
    assert not q.is_integer()
    assert Quantity.parse("50k").as_integer() == 50_000
    assert q.as_approximate_float() == 1.5
    assert q.sign() == 1 and Quantity.parse("-1").sign() == -1 and Quantity.parse("0").sign() == 0


def test_it_refuses_integer_conversion_beyond_int64() -> None:
    huge = Quantity.parse("9999999999999999999999999999999999999G")
    assert not huge.is_integer()
    with pytest.raises(QuantityError, match="cannot convert value to integer"):
        huge.as_integer()


def test_it_caps_binary_quantities_at_int64_max() -> None:
    assert Quantity.parse("100000Ei").as_integer() == 2**63 - 1


def test_it_divides_with_rounding_and_integer_division() -> None:
    assert Quantity.parse("10k").div(2) == Quantity.parse("5000")
    assert Quantity.parse("10000").div(3).exact() == Fraction(33333333, 10000)
    assert Quantity.parse("10000").div_int(3) == Quantity.parse("3333")
    with pytest.raises(QuantityError, match="division by zero"):
        Quantity.parse("1").div(0)


def test_it_builds_from_integers_and_millis() -> None:
    assert Quantity.from_int(3) == Quantity.parse("3")
    assert Quantity.from_milli(250) == Quantity.parse("250m")
    assert hash(Quantity.parse("1Gi")) == hash(Quantity.parse("1024Mi"))


def test_it_refuses_absurdly_large_quantities_with_a_clear_error() -> None:
    assert Quantity.parse("1e3000").sign() == 1
    with pytest.raises(QuantityError, match="too large"):
        Quantity.parse("1e5000")
    with pytest.raises(QuantityError, match="too large"):
        Quantity.parse("1" * 4100)
    with pytest.raises(QuantityError, match="too large"):
        Quantity.parse("1" * 5000)
