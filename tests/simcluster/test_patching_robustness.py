"""Any patch body, of any type, yields an object or a PatchError (a 4xx), never another exception."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from simcluster.patching import PatchError, apply_patch, record_update
from tests.simcluster.validation_samples import FACTORIES, Kind

TYPES = [
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/json-patch+json",
    "application/apply-patch+yaml",
]
KEYS = ["spec", "metadata", "status", "$patch", "$retainKeys", "$setElementOrder/containers",
        "$deleteFromPrimitiveList/finalizers", "containers", "name", "labels", "devices", "requests",
        "taint", "conditions", "reservedFor", "finalizers"]  # fmt: skip
LEAVES: list[Any] = [None, "x", -5, 1.5, True, [], {}, "delete", "replace", "merge"]


def junk(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        return rng.choice(LEAVES)
    if roll < 0.7:
        return {rng.choice(KEYS): junk(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return [junk(rng, depth + 1) for _ in range(rng.randint(0, 3))]


def scramble(rng: random.Random, obj: Any) -> Any:
    """The object with some fields deleted or replaced by values of the wrong type."""
    obj = copy.deepcopy(obj)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key in list(node):
                roll = rng.random()
                if roll < 0.1:
                    del node[key]
                elif roll < 0.2:
                    node[key] = rng.choice(LEAVES)
                else:
                    walk(node[key])
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(obj)
    return obj


def json_patch_ops(rng: random.Random, obj: Any) -> list[dict[str, Any]]:
    pointers = [
        "",
        "/",
        "/spec",
        "/metadata/name",
        "/spec/nope/x",
        "bad",
        "/status/conditions/-",
        "/spec/devices/0",
    ]
    ops = ["add", "remove", "replace", "move", "copy", "test", "frobnicate"]
    return [
        {
            "op": rng.choice(ops),
            "path": rng.choice(pointers),
            "from": rng.choice(pointers),
            "value": junk(rng),
        }
        for _ in range(rng.randint(0, 3))
    ]


@pytest.mark.parametrize("kind", list(FACTORIES), ids=lambda k: k.kind)
def test_it_never_fails_with_anything_but_a_patch_error(kind: Kind) -> None:
    rng = random.Random(kind.kind)
    base = FACTORIES[kind]()
    for _ in range(150):
        content_type = rng.choice(TYPES)
        body: Any = json_patch_ops(rng, base) if content_type.endswith("json-patch+json") else junk(rng)
        if content_type.startswith("application/apply") and rng.random() < 0.7:
            body = scramble(rng, base)
        current = rng.choice([base, scramble(rng, base)])
        try:
            result = apply_patch(
                kind,
                current,
                json.dumps(body).encode(),
                content_type,
                field_manager=rng.choice(["one", "two"]),
                force=rng.random() < 0.5,
                subresource=rng.choice([None, "status"]),
            )
        except PatchError as error:
            assert 400 <= error.status < 500 and error.message
        else:
            json.dumps(result)


@pytest.mark.parametrize("kind", list(FACTORIES), ids=lambda k: k.kind)
def test_it_keeps_managed_fields_consistent_over_many_applies(kind: Kind) -> None:
    rng = random.Random(f"apply-{kind.kind}")
    current: dict[str, Any] | None = None
    for step in range(30):
        config = scramble(rng, FACTORIES[kind]())
        config.update(apiVersion=FACTORIES[kind]()["apiVersion"], kind=kind.kind)
        config["metadata"] = {"name": "n", **({"labels": {"step": str(step)}} if rng.random() < 0.5 else {})}
        try:
            result = apply_patch(
                kind,
                current,
                json.dumps(config).encode(),
                "application/apply-patch+yaml",
                field_manager=rng.choice(["one", "two", "three"]),
                force=rng.random() < 0.5,
                subresource=rng.choice([None, None, "status"]),
            )
        except PatchError as error:
            assert error.status in (400, 409, 422)
            continue
        if rng.random() < 0.3:
            result = record_update(kind, current, result, field_manager="updater")
        entries = result["metadata"].get("managedFields", [])  # none: an update nobody was recorded for
        assert len({(e["manager"], e["operation"], e.get("subresource", "")) for e in entries}) == len(
            entries
        )
        assert all(e["fieldsType"] == "FieldsV1" and e["fieldsV1"] for e in entries)
        current = result
