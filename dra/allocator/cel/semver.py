"""Semantic versions (semver 2.0.0) with the precedence rules the Kubernetes CEL semver library uses.

Strict parsing matches ``blang/semver`` ``Parse``; ``normalize=True`` matches the library's optional
normalisation (drop a leading ``v``, fill missing minor/patch, strip leading zeros). Equality and
ordering follow precedence, so build metadata never matters (``1.0.0+a == 1.0.0+b``).
"""

from __future__ import annotations

import functools
import re

_UINT64_MAX = 2**64 - 1
_SEMVER_RE = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)


class SemverError(ValueError):
    """A string that is not a valid semantic version."""


@functools.total_ordering
class Semver:
    """``Semver.parse("1.2.3-rc.1+build")``; compares by semver 2.0.0 precedence."""

    __slots__ = ("major", "minor", "patch", "prerelease", "build")

    def __init__(
        self,
        major: int,
        minor: int,
        patch: int,
        prerelease: tuple[str, ...] = (),
        build: tuple[str, ...] = (),
    ) -> None:
        self.major = major
        self.minor = minor
        self.patch = patch
        self.prerelease = prerelease
        self.build = build

    @classmethod
    def parse(cls, text: str, *, normalize: bool = False) -> Semver:
        return _parse_cached(text, normalize)

    @classmethod
    def is_valid(cls, text: str, *, normalize: bool = False) -> bool:
        try:
            _parse_cached(text, normalize)
        except SemverError:
            return False
        return True

    def _key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def compare_to(self, other: Semver) -> int:
        if self._key() != other._key():
            return 1 if self._key() > other._key() else -1
        return _compare_prerelease(self.prerelease, other.prerelease)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self.compare_to(other) == 0

    def __lt__(self, other: Semver) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self.compare_to(other) < 0

    def __hash__(self) -> int:
        return hash((self._key(), self.prerelease))

    def precedence_string(self) -> str:
        """The version without build metadata: equal strings if and only if equal precedence."""
        text = f"{self.major}.{self.minor}.{self.patch}"
        return f"{text}-{'.'.join(self.prerelease)}" if self.prerelease else text

    def __str__(self) -> str:
        text = self.precedence_string()
        return f"{text}+{'.'.join(self.build)}" if self.build else text

    def __repr__(self) -> str:
        return f"Semver({str(self)!r})"


def _compare_prerelease(left: tuple[str, ...], right: tuple[str, ...]) -> int:
    # A version without pre-release identifiers has higher precedence than one with them.
    if not left or not right:
        return (not left) - (not right)
    for a, b in zip(left, right, strict=False):
        if a == b:
            continue
        a_num, b_num = a.isdigit(), b.isdigit()
        if a_num and b_num:
            return 1 if int(a) > int(b) else -1
        if a_num != b_num:
            return -1 if a_num else 1  # numeric identifiers sort before alphanumeric ones
        return 1 if a > b else -1
    return (len(left) > len(right)) - (len(left) < len(right))


def _normalize(text: str) -> str:
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for index, part in enumerate(parts):
        if len(part) > 1:
            stripped = part.lstrip("0")
            if not stripped or not stripped[0].isdigit():
                stripped = "0" + stripped
            parts[index] = stripped
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise SemverError(f"version {text!r}: short version cannot contain PreRelease/Build meta data")
        parts.extend(["0"] * (3 - len(parts)))
    return ".".join(parts)


@functools.lru_cache(maxsize=4096)
def _parse_cached(text: str, normalize: bool) -> Semver:
    if not isinstance(text, str):
        raise SemverError(f"version {text!r}: must be a string")
    candidate = _normalize(text) if normalize else text
    match = _SEMVER_RE.fullmatch(candidate)
    if match is None:
        raise SemverError(f"version {text!r}: not a semantic version (semver 2.0.0, e.g. 1.2.3)")
    # Length first: int() of a huge digit string is slow and refused by Python beyond 4300 digits.
    if any(len(g) > 20 for g in match.group(1, 2, 3)):
        raise SemverError(f"version {text[:40]!r}: version number exceeds uint64")
    major, minor, patch = (int(g) for g in match.group(1, 2, 3))
    if max(major, minor, patch) > _UINT64_MAX:
        raise SemverError(f"version {text!r}: version number exceeds uint64")
    prerelease = tuple(match.group(4).split(".")) if match.group(4) else ()
    if any(part.isdigit() and (len(part) > 20 or int(part) > _UINT64_MAX) for part in prerelease):
        raise SemverError(f"version {text!r}: numeric pre-release identifier exceeds uint64")
    build = tuple(match.group(5).split(".")) if match.group(5) else ()
    return Semver(major, minor, patch, prerelease, build)
