"""simcluster's JSON: every committed object is encoded once (`dumps`), read back by controllers and
subscribers (`decode`), and copied before a change (`clone`) — orjson where it gives the same data as the
standard library, the standard library where it would not."""

from __future__ import annotations

import json
from typing import Any

import orjson

Obj = dict[str, Any]


def dumps(obj: Any) -> bytes:
    """Compact JSON, UTF-8 as it is: orjson (about 5× the standard library: every write encodes its object),
    the standard library where orjson refuses (an integer beyond 64 bits, a key that is not a string)."""
    try:
        return orjson.dumps(obj)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


# 19 digits or more in a row: perhaps an integer orjson would turn into a float (beyond 64 bits). Found
# by mapping every digit to b"1" (other bytes stay as they are, so a b"1" there was a digit) and looking
# for 19 of them: a few times faster than a regular expression over a pod's kilobytes.
_DIGITS_AS_ONES = bytes.maketrans(b"0123456789", b"1" * 10)
_LONG_DIGITS = b"1" * 19


def decode(raw: bytes) -> Obj:
    """A stored object, decoded: orjson (about 3× the standard library; every controller pass and every
    subscriber decodes what it reads), except where the text holds a run of 19 digits: the standard
    library keeps an integer beyond 64 bits an integer, where orjson would make it a float."""
    if _LONG_DIGITS in raw.translate(_DIGITS_AS_ONES):
        obj: Obj = json.loads(raw)
    else:
        obj = orjson.loads(raw)
    return obj


# datetimes and dataclasses go to `default=str` too, as they would with the standard library
_CLONE_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def clone(obj: Any) -> Any:
    """A deep copy of JSON data; a JSON round trip is several times faster than copy.deepcopy. Anything else
    becomes its `str()`, as with the standard library's `default=str` (which takes over where orjson refuses:
    an integer beyond 64 bits, a key that is not a string)."""
    try:
        return orjson.loads(orjson.dumps(obj, default=str, option=_CLONE_OPTIONS))
    except (orjson.JSONEncodeError, TypeError):
        return json.loads(json.dumps(obj, default=str))


def same_json(a: Any, b: Any) -> bool:
    """True when `a` and `b` are the same JSON value. Python's `==` alone says `true` is `1` and `1.0` is
    `1`, where a decoder (and the schema) tells them apart, so equal containers must also encode to the
    same text; any doubt (keys in another order, a value orjson will not encode) answers False."""
    if a is b:
        return True
    if a != b:
        return False
    if type(a) is not type(b):
        return False
    if not isinstance(a, dict | list):
        return True
    try:
        return orjson.dumps(a) == orjson.dumps(b)
    except (orjson.JSONEncodeError, TypeError):
        return False
