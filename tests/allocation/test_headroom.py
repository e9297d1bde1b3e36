"""Headroom answers: copies per node, cluster-wide and per DeviceClass."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from allocation.services import whatif_answer, whatif_input_normalize
from allocation.snapshot import snapshot_load
from allocation.whatif.base import Context
from tests.allocation import whatif_objects as o

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def ask(data: dict[str, Any]) -> dict[str, Any]:
    data = whatif_input_normalize(kind="headroom", input=data)
    return whatif_answer(kind="headroom", input=data, context=Context(snapshot=snapshot_load(), now=NOW))


def copies(result: dict[str, Any]) -> dict[str, int]:
    return {n["node"]: n["copies"] for n in result["per_node"]}


def test_it_counts_how_many_more_one_gpu_claims_fit_per_node_and_in_total() -> None:
    o.store(*o.small_cluster().values())
    result = ask(
        {"source": "pick", "kind": "ResourceClaimTemplate", "namespace": "default", "name": "one-gpu"}
    )
    assert copies(result) == {"node-a": 1, "node-b": 2}
    assert result["total"] == 3
    assert result["per_class"] == [{"class": o.DRIVER, "devices": 3}]
    assert result["capped"] is False


def test_it_counts_copies_of_a_two_gpu_claim_only_where_two_gpus_are_free() -> None:
    o.store(*o.small_cluster().values())
    result = ask({"source": "class", "deviceClassName": o.DRIVER, "count": 2})
    assert copies(result) == {"node-a": 0, "node-b": 1}
    assert result["per_class"] == [{"class": o.DRIVER, "devices": 2}]


def test_it_gives_nodes_that_look_alike_the_same_answer_without_recomputing_them() -> None:
    objs = o.small_cluster()
    o.store(
        *objs.values(),
        o.node("node-c"),
        o.gpu_slice("node-c", "H100"),
        o.node("node-d"),
        o.gpu_slice("node-d", "H100"),
    )
    result = ask({"source": "class", "deviceClassName": o.DRIVER})
    assert copies(result) == {"node-a": 1, "node-b": 2, "node-c": 2, "node-d": 2}
    assert result["total"] == 7
    assert result["computed_nodes"] == 2  # node-a, node-b; c and d look like b


def test_it_stops_at_the_per_node_cap_and_says_so() -> None:
    o.store(*o.small_cluster().values())
    result = ask({"source": "class", "deviceClassName": o.DRIVER, "max_per_node": 1})
    assert copies(result) == {"node-a": 1, "node-b": 1}
    assert result["capped"] is True


def test_it_respects_taints_when_counting_headroom() -> None:
    objs = o.small_cluster()
    rule = o.taint_rule(
        "drain-b1", {"driver": o.DRIVER, "pool": "node-b", "device": "gpu-1"}, "k", "NoExecute"
    )
    o.store(*objs.values(), rule)
    result = ask({"source": "class", "deviceClassName": o.DRIVER})
    assert copies(result) == {"node-a": 1, "node-b": 1}


def test_it_ignores_serial_numbers_no_selector_reads_but_not_ones_a_selector_names() -> None:
    objs = o.small_cluster()
    extra = [o.node("node-c"), o.gpu_slice("node-c", "H100")]
    for s in [objs["slice-a"], objs["slice-b"], extra[1]]:
        for d in s["spec"]["devices"]:
            d["attributes"]["uuid"] = {"string": f"{s['spec']['nodeName']}-{d['name']}"}
    o.store(*objs.values(), *extra)
    result = ask({"source": "class", "deviceClassName": o.DRIVER})
    assert (result["total"], result["computed_nodes"]) == (5, 2)
    pasted = o.claim("picky", selector='device.attributes["gpu.example.com"].uuid != "node-c-gpu-0"')
    picky = ask({"source": "yaml", "yaml": yaml.safe_dump(pasted)})
    assert copies(picky) == {"node-a": 1, "node-b": 2, "node-c": 1}
    assert picky["computed_nodes"] == 3


@pytest.mark.parametrize(
    ("count", "words"), [(1, "1 device of DeviceClass"), (2, "2 devices of DeviceClass")]
)
def test_it_says_how_many_devices_a_copy_of_a_class_asks_for_in_proper_number(count: int, words: str) -> None:
    o.store(*o.small_cluster().values())
    result = ask({"source": "class", "deviceClassName": o.DRIVER, "count": count})
    (claim,) = result["subject"]["claims"]
    assert claim["source"] == f"{words} {o.DRIVER}"
