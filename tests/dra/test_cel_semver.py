"""Semantic versions with semver 2.0.0 precedence (dra.allocator.cel.Semver)."""

from __future__ import annotations

import pytest

from dra.allocator.cel import Semver, SemverError


def test_it_orders_by_semver_precedence() -> None:
    ordered = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.2.3",
        "1.10.0",
        "2.0.0",
    ]
    versions = [Semver.parse(v) for v in ordered]
    assert sorted(reversed(versions)) == versions
    for lower, higher in zip(versions, versions[1:], strict=False):
        assert lower.compare_to(higher) == -1
        assert higher.compare_to(lower) == 1


def test_it_ignores_build_metadata_for_equality_but_keeps_it_in_text() -> None:
    a, b = Semver.parse("1.0.0+build.1"), Semver.parse("1.0.0+build.2")
    assert a == b and a.compare_to(b) == 0
    assert str(a) == "1.0.0+build.1"
    assert a.precedence_string() == "1.0.0"


def test_it_exposes_major_minor_patch() -> None:
    v = Semver.parse("3.14.159-rc.2")
    assert (v.major, v.minor, v.patch, v.prerelease) == (3, 14, 159, ("rc", "2"))


@pytest.mark.parametrize(
    "text", ["1.2", "v1.2.3", "01.2.3", "1.2.3-01", "1.2.3-", "1.2.3+", "1.2.3.4", "", "a.b.c", "1.2.3-rc..1"]
)
def test_it_rejects_non_strict_versions(text: str) -> None:
    assert not Semver.is_valid(text)
    with pytest.raises(SemverError, match="not a semantic version"):
        Semver.parse(text)


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("v1.2.3", "1.2.3"),
        ("1.0", "1.0.0"),
        ("1", "1.0.0"),
        ("01.01.01", "1.1.1"),
        ("v2.0.0-rc.1", "2.0.0-rc.1"),
    ],
)
def test_it_normalizes_when_asked(text: str, normalized: str) -> None:
    assert str(Semver.parse(text, normalize=True)) == normalized


def test_it_refuses_prerelease_on_short_versions_even_when_normalizing() -> None:
    with pytest.raises(SemverError, match="short version"):
        Semver.parse("1.0-rc", normalize=True)


@pytest.mark.parametrize("text", ["18446744073709551616.0.0", "1" * 5000 + ".0.0", "1.0.0-" + "9" * 5000])
def test_it_refuses_numbers_beyond_uint64(text: str) -> None:
    with pytest.raises(SemverError, match="exceeds uint64"):
        Semver.parse(text)
