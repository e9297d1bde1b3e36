"""The store decodes what it holds with orjson, but never turns a big integer into a float."""

from __future__ import annotations

import json

from simcluster.store import _decode


def test_an_integer_beyond_64_bits_comes_back_as_the_integer_it_was() -> None:
    raw = json.dumps({"spec": {"n": 2**70, "m": -(2**64) - 1}, "x": [1.5, "a"]}).encode()
    decoded = _decode(raw)
    assert decoded == {"spec": {"n": 2**70, "m": -(2**64) - 1}, "x": [1.5, "a"]}
    assert isinstance(decoded["spec"]["n"], int)


def test_it_decodes_ordinary_objects_as_the_standard_library_does() -> None:
    obj = {
        "metadata": {"name": "pod-ü", "resourceVersion": "12"},
        "spec": {"n": 2**63 - 1, "f": 0.1, "z": None},
    }
    raw = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
    assert _decode(raw) == json.loads(raw)
