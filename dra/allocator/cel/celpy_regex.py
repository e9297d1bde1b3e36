"""RE2 for the cel-python backend's ``matches``: compiled once per pattern, errors not logged to stderr."""

from __future__ import annotations

import functools

import re2

RegexError = re2.error
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a bad pattern is a CEL error, not a line on the process's stderr


@functools.lru_cache(maxsize=1024)
def compile_re2(pattern: str) -> re2._Regexp:
    """The compiled pattern; ``re2.error`` for an invalid one."""
    return re2.compile(pattern, _OPTIONS)


def matches(text: str, pattern: str) -> bool:
    """CEL ``matches``: RE2, unanchored (a match anywhere in the text), like cel-cpp and cel-go."""
    return compile_re2(pattern).search(text) is not None
