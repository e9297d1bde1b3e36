"""Any shape of bad input gets causes, never an exception (a 422, never a 500)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from simcluster.validation import validate
from tests.simcluster.validation_samples import CLAIM, FACTORIES, Kind, a_claim

JUNK: list[Any] = [None, "x", -5, 1.5, True, [], {}, [1, "a"], {"a": {"b": None}}, "Ünïcode/ü"]


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from paths(sub, (*prefix, key))
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            yield from paths(sub, (*prefix, index))


def replaced(obj: Any, path: tuple[Any, ...], junk: Any) -> Any:
    result = copy.deepcopy(obj)
    node = result
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = copy.deepcopy(junk)
    return result


@pytest.mark.parametrize("kind", list(FACTORIES), ids=lambda k: k.kind)
def test_it_answers_every_malformed_field_with_causes(kind: Kind) -> None:
    base = FACTORIES[kind]()
    for path in paths(base):
        if not path or path[0] in ("apiVersion", "kind"):
            continue
        for junk in JUNK:
            bad = replaced(base, path, junk)
            causes, warnings = validate(kind, bad, None)
            assert isinstance(causes, list) and isinstance(warnings, list)
            assert all(set(c) == {"reason", "message", "field"} for c in causes)
            # and as an update of the valid object (immutability and status rules run too)
            validate(kind, bad, base)
            validate(kind, bad, base, subresource="status")
            validate(kind, base, bad)  # a malformed stored object must not break the next write either


def test_it_survives_junk_in_claim_status() -> None:
    claim = a_claim()
    for junk in JUNK:
        bad = copy.deepcopy(claim)
        bad["status"] = {"allocation": junk, "reservedFor": junk, "devices": junk}
        causes, _ = validate(CLAIM, bad, claim, subresource="status")
        assert isinstance(causes, list)
        bad["status"] = {
            "devices": [junk],
            "reservedFor": [junk],
            "allocation": {"devices": {"results": [junk]}},
        }
        causes, _ = validate(CLAIM, bad, claim, subresource="status")
        assert isinstance(causes, list)
