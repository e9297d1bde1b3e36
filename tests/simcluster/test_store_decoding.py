"""simcluster's JSON (simcluster.jsondata): orjson for speed, but exactly the bytes and data the standard
library gave — never a big integer turned into a float, never a write refused that the standard library took."""

from __future__ import annotations

import json
from collections import OrderedDict, defaultdict
from datetime import UTC, datetime

import pytest

from simcluster.jsondata import clone, decode, dumps

ORDINARY = {
    "metadata": {
        "name": "pod-ü",
        "resourceVersion": "12",
        "annotations": {"a": 'quote " and \\ and \n\t\x01'},
    },
    "spec": {"n": 2**63 - 1, "f": 0.1, "big": 1.5e300, "z": None, "t": True, "l": [1, "2", {}]},
    "text": "emoji 🎉, \u2028 line separator, <tag> & amp",
}


def _stdlib(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def test_an_integer_beyond_64_bits_comes_back_as_the_integer_it_was() -> None:
    raw = json.dumps({"spec": {"n": 2**70, "m": -(2**64) - 1}, "x": [1.5, "a"]}).encode()
    decoded = decode(raw)
    assert decoded == {"spec": {"n": 2**70, "m": -(2**64) - 1}, "x": [1.5, "a"]}
    assert isinstance(decoded["spec"]["n"], int)


def test_it_decodes_ordinary_objects_as_the_standard_library_does() -> None:
    raw = _stdlib(ORDINARY)
    assert decode(raw) == json.loads(raw)


def test_it_encodes_the_same_bytes_as_the_standard_library() -> None:
    assert dumps(ORDINARY) == _stdlib(ORDINARY)
    assert dumps(OrderedDict(ORDINARY)) == _stdlib(ORDINARY)
    # One spelling differs, not the number: a small exponent is written 1e-7 (as Go writes it), not 1e-07.
    assert dumps({"e": 1e-7}) == b'{"e":1e-7}'
    assert json.loads(dumps({"e": 1e-7})) == {"e": 1e-7}


@pytest.mark.parametrize(
    "obj",
    [{"n": 2**70}, {"spec": [{"m": -(2**64) - 1}]}, {1: "an integer key"}, {"k": {None: 1, 2.5: "x"}}],
    ids=["int beyond 64 bits", "nested big int", "int key", "None and float keys"],
)
def test_what_orjson_refuses_is_encoded_and_copied_as_the_standard_library_does(
    obj: dict[object, object],
) -> None:
    assert dumps(obj) == _stdlib(obj)
    assert clone(obj) == json.loads(json.dumps(obj, default=str))


def test_a_clone_is_a_deep_copy_and_anything_else_becomes_its_text() -> None:
    counts: defaultdict[str, list[int]] = defaultdict(list, {"a": [1]})
    moment = datetime(2026, 12, 2, 5, 50, tzinfo=UTC)
    original = {"counts": counts, "at": moment, "tuple": (1, 2), "doc": ORDINARY}
    copied = clone(original)
    assert copied == json.loads(json.dumps(original, default=str))
    assert copied["at"] == str(moment)  # as `default=str` gives it, not orjson's own RFC 3339 form
    copied["doc"]["metadata"]["name"] = "changed"
    copied["counts"]["a"].append(2)
    assert ORDINARY["metadata"]["name"] == "pod-ü" and counts["a"] == [1]
