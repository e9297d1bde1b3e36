"""How an error message names the JSON type a value has ("got a list"), in one wording everywhere."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def a_type(value: Any) -> str:
    """'null', 'a boolean', 'a number', 'a string', 'a list' or 'an object' (a YAML tree's types too)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, Mapping) else type(value).__name__
