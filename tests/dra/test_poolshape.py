"""`dra.poolshape`: a pool answered from the memo of a pool that looks the same up to names is answered
exactly as if it had been computed itself."""

from __future__ import annotations

import copy
import random
from typing import Any

from dra.availability import IN_USE, TAINT, Blocked, PoolAvailability, node_local_names, pool_availability
from dra.poolshape import MARK, PoolMemo, shape
from tests.dra.allocator_cases import (
    DRIVER,
    allocated,
    device,
    device_class,
    resource_slice,
    result,
    taint_rule,
)
from tests.dra.test_availability import MIG_CLASS, WHOLE_CLASS, _random_cluster, mig_pool

J = dict[str, Any]
CLASSES = [WHOLE_CLASS, MIG_CLASS]


def answer(pool: str, slices: list[J], claims: list[J], rules: list[J], nodes: list[J], memo: PoolMemo[PoolAvailability] | None,
           classes: list[J] | None = None) -> PoolAvailability:  # fmt: skip
    return pool_availability(
        driver=DRIVER,
        pool=pool,
        slices=slices,
        allocated_claims=claims,
        taint_rules=rules,
        classes=classes if classes is not None else CLASSES,
        nodes=nodes,
        pool_memo=memo,
    )


def renamed(
    pool: str, slices: list[J], claims: list[J], rules: list[J], nodes: list[J], to: str
) -> tuple[Any, ...]:
    """The same pool with every name changed: pool, nodes, slices, claims (namespace, name, uid), rules."""

    def new(name: str) -> str:
        return f"{to}-{name}"

    slices, claims, rules, nodes = copy.deepcopy((slices, claims, rules, nodes))
    for s in slices:
        s["metadata"]["name"] = new(s["metadata"]["name"])
        s["spec"]["pool"]["name"] = new(s["spec"]["pool"]["name"])
        s["spec"]["nodeName"] = new(s["spec"]["nodeName"])
    for c in claims:
        meta = c["metadata"]
        meta.update(namespace=new(meta["namespace"]), name=new(meta["name"]), uid=new(meta.get("uid", "u")))
        for r in c["status"]["allocation"]["devices"]["results"]:
            r["pool"] = new(r["pool"])
    for r in rules:
        r["metadata"]["name"] = new(r["metadata"]["name"])
        if "pool" in r["spec"].get("deviceSelector", {}):
            r["spec"]["deviceSelector"]["pool"] = new(r["spec"]["deviceSelector"]["pool"])
    for n in nodes:
        n["metadata"]["name"] = new(n["metadata"]["name"])
        n["metadata"]["labels"] = {"kubernetes.io/hostname": n["metadata"]["name"]}
    return new(pool), slices, claims, rules, nodes


def test_every_node_local_pool_of_random_clusters_answers_from_a_renamed_twin_as_computed_itself() -> None:
    hits = 0
    for seed in range(60):
        nodes, slices, claims, rules = _random_cluster(random.Random(seed))
        for i, c in enumerate(claims):
            c["metadata"]["uid"] = f"uid-{(7 * i) % len(claims)}"  # uids in another order than names
        for pool in sorted({s["spec"]["pool"]["name"] for s in slices}):
            mine = [s for s in slices if s["spec"]["pool"]["name"] == pool]
            bound = node_local_names(mine)
            if bound is None:
                continue
            reaching = [n for n in nodes if n["metadata"]["name"] in bound]
            memo: PoolMemo[PoolAvailability] = PoolMemo()
            twin = renamed(pool, mine, claims, rules, reaching, to="twin")
            twin_itself = answer(*twin, memo=None)
            assert answer(*twin, memo=memo) == twin_itself, (seed, pool)  # computed, then kept
            assert (memo.misses, memo.hits) == (1, 0)
            itself = answer(pool, mine, claims, rules, reaching, memo=None)
            assert answer(pool, mine, claims, rules, reaching, memo=memo) == itself, (seed, pool)
            hits += memo.hits
    assert hits > 60  # the pools did come from the memo


def test_the_claims_named_in_a_pool_are_its_own_in_their_own_order() -> None:
    def pool(name: str) -> list[J]:
        return [resource_slice(f"{name}-s", [device("gpu-0"), device("gpu-1")], pool=name, node=name)]

    def held(name: str, *claims: str) -> PoolAvailability:
        taken = [allocated(c, result(f"gpu-{i}", pool=name)) for i, c in enumerate(claims)]
        return answer(name, pool(name), taken, [], [{"metadata": {"name": name}}], memo)

    memo: PoolMemo[PoolAvailability] = PoolMemo()
    first = held("node-one", "train-x", "train-y")
    second = held("node-two", "infer-k", "infer-l")
    third = held("node-three", "serve-q", "serve-p")
    assert first.devices == {"gpu-0": Blocked(IN_USE, "allocated to default/train-x"),
                             "gpu-1": Blocked(IN_USE, "allocated to default/train-y")}  # fmt: skip
    assert second.pool == "node-two"
    assert second.devices == {"gpu-0": Blocked(IN_USE, "allocated to default/infer-k"),
                              "gpu-1": Blocked(IN_USE, "allocated to default/infer-l")}  # fmt: skip
    assert third.devices == {"gpu-0": Blocked(IN_USE, "allocated to default/serve-q"),
                             "gpu-1": Blocked(IN_USE, "allocated to default/serve-p")}  # fmt: skip
    # one computed, two from the memo (the third's names sort the other way: nothing sorts claims)
    assert (memo.misses, memo.hits) == (1, 2)


def test_a_blocking_rule_makes_a_shape_of_its_own_and_a_rule_without_effect_does_not() -> None:
    def pool(name: str) -> list[J]:
        return [resource_slice(f"{name}-s", [device("gpu-0", attrs={"type": "gpu"})], pool=name, node=name)]

    def rule(name: str, effect: str, value: str) -> J:
        return taint_rule(name, {"key": "example.com/m", "value": value, "effect": effect}, {"pool": name})

    memo: PoolMemo[PoolAvailability] = PoolMemo()

    def ask(name: str, *rules: J) -> PoolAvailability:
        return answer(name, pool(name), [], list(rules), [{"metadata": {"name": name}}], memo)

    free = ask("node-one")
    informational = ask("node-two", rule("node-two", "None", "17"))
    drained = ask("node-three", rule("node-three", "NoSchedule", "3"))
    assert free.devices == informational.devices == {"gpu-0": None}
    assert drained.devices == {
        "gpu-0": Blocked(
            TAINT, "untolerated taint example.com/m=3:NoSchedule from DeviceTaintRule node-three"
        )
    }
    assert (memo.misses, memo.hits) == (2, 1)


def test_a_name_that_also_appears_in_a_selector_or_an_attribute_is_never_swapped() -> None:
    memo: PoolMemo[PoolAvailability] = PoolMemo()
    picky = device_class("whole", 'device.attributes["gpu.example.com"].host == "node-one"')
    for name in ("node-one", "node-two"):
        slices = [resource_slice(f"{name}-s", [device("gpu-0", attrs={"host": name})], pool=name, node=name)]
        a = answer(name, slices, [], [], [{"metadata": {"name": name}}], memo, classes=[picky])
        assert (a.classes["whole"].free, a.classes["whole"].headroom) == (
            (1, 1) if name == "node-one" else (0, 0)
        )
    assert memo.hits == 0


def test_a_pool_whose_node_is_gone_is_not_answered_as_one_whose_node_is_there() -> None:
    memo: PoolMemo[PoolAvailability] = PoolMemo()
    here = answer("node-one", mig_pool_on("node-one"), [], [], [{"metadata": {"name": "node-one"}}], memo)
    gone = answer("node-two", mig_pool_on("node-two"), [], [], [], memo)
    assert here.classes["whole"].free == 2
    assert gone.classes["whole"].free == 0
    assert memo.hits == 0


def mig_pool_on(node: str) -> list[J]:
    slices = mig_pool()
    for s in slices:
        s["metadata"]["name"] = f"{node}-{s['metadata']['name']}"
        s["spec"]["pool"]["name"] = node
        s["spec"]["nodeName"] = node
    return slices


def test_a_uuid_no_class_reads_does_not_tell_pools_apart_and_one_a_class_reads_does() -> None:
    def pool(name: str, uuid: str) -> list[J]:
        gpu = device("gpu-0", attrs={"type": "gpu", "uuid": uuid})
        return [resource_slice(f"{name}-s", [gpu], pool=name, node=name)]

    def ask(name: str, uuid: str, classes: list[J]) -> PoolAvailability:
        return answer(name, pool(name, uuid), [], [], [{"metadata": {"name": name}}], memo, classes=classes)

    memo: PoolMemo[PoolAvailability] = PoolMemo()
    assert ask("node-one", "GPU-1f", CLASSES).classes["whole"].free == 1
    assert ask("node-two", "GPU-2e", CLASSES).classes["whole"].free == 1
    assert (memo.misses, memo.hits) == (1, 1)

    memo: PoolMemo[PoolAvailability] = PoolMemo()
    by_uuid = [device_class("whole", 'device.attributes["gpu.example.com"].uuid == "GPU-1f"')]
    assert ask("node-one", "GPU-1f", by_uuid).classes["whole"].free == 1
    assert ask("node-two", "GPU-2e", by_uuid).classes["whole"].free == 0
    assert memo.hits == 0


def test_a_pool_of_an_unexpected_shape_is_computed_itself_not_refused() -> None:
    memo: PoolMemo[PoolAvailability] = PoolMemo()
    gpus = [
        resource_slice(
            "node-one-s", [device("gpu-0", attrs={"type": "gpu"})], pool="node-one", node="node-one"
        )
    ]
    odd_rule = taint_rule("odd", {"key": "k", "value": "v", "effect": "NoSchedule"}, {"pool": "node-one"})
    odd_rule["metadata"] = ["not", "a", "map"]
    nodes = [{"metadata": {"name": "node-one"}}]
    direct = answer("node-one", gpus, [], [odd_rule], nodes, None)
    assert "DeviceTaintRule.metadata" in direct.classes["whole"].error  # the allocator says what is wrong
    assert answer("node-one", gpus, [], [odd_rule], nodes, memo) == direct
    assert (memo.hits, memo.misses) == (0, 0)


def test_a_value_that_holds_the_token_mark_is_never_taken_for_a_name() -> None:
    """A pool whose own values already hold the mark tokens open with (a read attribute spelled like the
    token of its node) has no shape: a sentence could not tell that value from a name put back."""
    picky = device_class("whole", 'device.attributes["gpu.example.com"].host != ""')

    def shaped(host: str) -> Any:
        gpus = [
            resource_slice(
                "node-one-s", [device("gpu-0", attrs={"host": host})], pool="node-one", node="node-one"
            )
        ]
        return shape(driver=DRIVER, pool="node-one", slices=gpus, claims=[], rules=[], classes=[picky],
                     nodes=[{"metadata": {"name": "node-one"}}], features=[], max_per_node=32)  # fmt: skip

    assert shaped("rack-7") is not None
    assert shaped(f"{MARK}node000000\u27e9") is None
    assert shaped(f"rack-{MARK}") is None
