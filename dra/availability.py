"""What one-device claims of each DeviceClass could get from one pool right now, as the allocator answers.

For one pool — its ResourceSlices (every generation), the allocated claims, the DeviceTaintRules, the
DeviceClasses and the nodes that may reach it — `pool_availability` returns per class

* ``free``: devices a claim for one device of the class, without tolerations, could be given right
  now, each on its own: the allocator's `explain` calls them "usable" (not in use, no untolerated
  NoSchedule/NoExecute taint, their shared counters available, their pool complete and valid);
* ``headroom``: how many such claims fit together. Copies are placed one at a time, node after node
  in name order, until the allocator says no, each copy's device counting as in use for the next —
  what the headroom what-if does for ``{source: class}``;

and per device why it cannot be given (`Blocked`), or None when it can.

Pools are independent for one-device claims, so a cluster's numbers are the sums over its pools and a
change needs only the pools it touches recomputed: a copy takes one device from one pool; counters are
shared within a pool only; and the allocator takes, on every node, the first device that fits in a
fixed order, so the devices a pool gives, and in which order, do not depend on what other pools gave
meanwhile. A pool reachable from several nodes is counted once: after the first node has taken what
fits, a node that reaches the same devices gets nothing more. Nodes that reach the same devices are
therefore asked once (`reach` says which devices a node reaches, with `dra.selection`).

Where this differs from the what-if: its ``max_per_node`` caps all pools of a node together, here each
pool on each node; only devices that can be shared (``allowMultipleAllocations``) ever reach the cap.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dra.allocator import (
    DEFAULT_FEATURES,
    AllocatedState,
    AllocationError,
    Allocator,
    DeviceVerdict,
    PreparedClaim,
    SelectorMemo,
    explain,
    prepare_claim,
)
from dra.objects import PoolState, allocation_results, node_selection, pool_state, slice_spec
from dra.poolshape import PoolMemo, PoolShape, shape
from dra.quantity import Quantity
from dra.selection import SelectorError, node_selector_matches

Json = dict[str, Any]

#: the what-if's default cap of copies per node (allocation.whatif_inputs.DEFAULT_MAX_PER_NODE)
DEFAULT_MAX_PER_NODE = 256

# Why a device cannot be given to a one-device claim of its class (`Blocked.reason`).
IN_USE = "in-use"
COUNTERS = "counters"
TAINT = "taint"
POOL_INCOMPLETE = "pool-incomplete"
POOL_INVALID = "pool-invalid"
NO_CLASS = "no-class"
NO_NODE = "no-node"
OTHER = "other"
#: reason → how pages name it in a badge (`Blocked.message` has the whole sentence)
BLOCK_REASONS: dict[str, str] = {
    IN_USE: "in use",
    COUNTERS: "counters used",
    TAINT: "untolerated taint",
    POOL_INCOMPLETE: "pool incomplete",
    POOL_INVALID: "pool invalid",
    NO_CLASS: "no DeviceClass",
    NO_NODE: "no node",
    OTHER: "other",
}

# The allocator's verdict reasons (`dra.allocator.REASONS`) as block reasons.
_FROM_VERDICT = {
    "already in use": IN_USE,
    "counters exhausted": COUNTERS,
    "taint not tolerated": TAINT,
    "pool incomplete": POOL_INCOMPLETE,
    "pool invalid": POOL_INVALID,
    "node mismatch": NO_NODE,
}
_SELECTOR_FALSE = ("class selector false", "request selector false")
_COUNTER_DETAIL = re.compile(
    r"^counter (?P<set>[^/]+)/(?P<counter>.+): needs (?P<need>-?\d+), (?P<left>-?\d+) left$"
)


@dataclass(frozen=True, slots=True)
class Blocked:
    """Why a device cannot be given to a one-device claim now: one of `BLOCK_REASONS`, and a sentence."""

    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class ClassNumbers:
    free: int = 0
    headroom: int = 0
    #: some node stopped at the cap of copies (shareable devices), so headroom is a lower bound
    capped: bool = False
    #: what the allocator refused (a CEL error, invalid input); the numbers stop there
    error: str = ""


@dataclass(frozen=True)
class PoolAvailability:
    driver: str
    pool: str
    #: class name → its numbers in this pool, for every class asked about
    classes: dict[str, ClassNumbers] = field(default_factory=dict)
    #: device name (highest generation) → why it cannot be given, or None when it can
    devices: dict[str, Blocked | None] = field(default_factory=dict)


def one_device_claim(class_name: str) -> Json:
    """The claim the headroom what-if places for ``{source: class, deviceClassName, count: 1}``."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": f"{class_name}-copy",
            "namespace": "default",
            "uid": f"availability-{class_name}",
        },
        "spec": {
            "devices": {
                "requests": [{"name": "device", "exactly": {"deviceClassName": class_name, "count": 1}}]
            }
        },
    }


def bare_node(name: str) -> Json:
    """A Node with only a name, as the what-if uses when the cluster has no Node objects."""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def node_local_names(slices: Iterable[Mapping[str, Any]]) -> frozenset[str] | None:
    """The nodes a pool is bound to by name (every slice has nodeName), or None if any node may reach it."""
    names: set[str] = set()
    for s in slices:
        selection, node = node_selection(slice_spec(s))
        if selection != "node":
            return None
        names.add(node)
    return frozenset(names)


def reach(slices: Sequence[Mapping[str, Any]], node: Mapping[str, Any]) -> tuple[Any, ...]:
    """Which slices (and, with per-device node selection, which devices) can reach `node`: nodes with the
    same answer see the same devices of this pool."""
    out: list[Any] = []
    for s in sorted(slices, key=lambda s: str((s.get("metadata") or {}).get("name", ""))):
        spec = slice_spec(s)
        if spec.get("perDeviceNodeSelection"):
            out.append(tuple(_reaches(d, node) for d in spec.get("devices") or [] if isinstance(d, Mapping)))
        else:
            out.append(_reaches(spec, node))
    return tuple(out)


def _reaches(spec: Mapping[str, Any], node: Mapping[str, Any]) -> Any:
    name = str((node.get("metadata") or {}).get("name", ""))
    if spec.get("nodeName"):
        return spec["nodeName"] == name
    if spec.get("allNodes"):
        return True
    if spec.get("nodeSelector") is not None:
        try:
            return node_selector_matches(spec["nodeSelector"], node)
        except SelectorError:
            return ("unparsable", name)  # the allocator's own answer decides; never merge such nodes
    return False


def pool_availability(
    *,
    driver: str,
    pool: str,
    slices: Sequence[Json],
    allocated_claims: Iterable[Json],
    taint_rules: Iterable[Json],
    classes: Sequence[Json],
    nodes: Sequence[Json],
    features: Iterable[str] = DEFAULT_FEATURES,
    max_per_node: int = DEFAULT_MAX_PER_NODE,
    selector_memo: SelectorMemo | None = None,
    pool_memo: PoolMemo[PoolAvailability] | None = None,
) -> PoolAvailability:
    """Per class `ClassNumbers` and per device `Blocked | None` for the pool `driver`/`pool`.

    `slices` are all of the pool's ResourceSlices; `allocated_claims` at least those holding its devices;
    `nodes` the Node objects that may reach it (any order; more are harmless). Never raises for what
    the cluster says: what the allocator refuses becomes `ClassNumbers.error` and `OTHER` blocks.
    `selector_memo`: selector outcomes to share with the caller's other pools (`dra.allocator.memo`);
    `pool_memo`: answers of pools that look the same up to names (`dra.poolshape`)."""
    claims = [c for c in allocated_claims if _holds_pool(c, driver, pool)]
    rules = list(taint_rules)
    features = frozenset(features)
    if pool_memo is not None:
        try:
            found = shape(driver=driver, pool=pool, slices=slices, claims=claims, rules=rules, classes=classes,
                          nodes=nodes, features=features, max_per_node=max_per_node)  # fmt: skip
        except (AttributeError, TypeError, ValueError):
            found = (
                None  # input of an unexpected shape: the pool is computed itself, which says what is wrong
            )
        if found is not None:
            answer = pool_memo.get(found.key)
            if answer is None:
                pool_memo.misses += 1
                answer = _pool_availability(driver, found.pool, found.slices, found.claims, found.rules, classes,
                                            found.nodes, features, max_per_node, selector_memo)  # fmt: skip
                pool_memo.put(found.key, answer)
            else:
                pool_memo.hits += 1
            restored = _restored(answer, found, pool)
            if restored is not None:
                return restored
    return _pool_availability(
        driver, pool, slices, claims, rules, classes, nodes, features, max_per_node, selector_memo
    )


def _restored(answer: PoolAvailability, found: PoolShape, pool: str) -> PoolAvailability | None:
    """`answer`, computed from the shape's inputs, for the pool itself; None when a sentence cannot be
    given its names back."""
    classes: dict[str, ClassNumbers] = {}
    for name, numbers in answer.classes.items():
        error = found.back(numbers.error)
        if error is None:
            return None
        classes[name] = replace(numbers, error=error) if numbers.error else numbers
    devices: dict[str, Blocked | None] = {}
    for name, block in answer.devices.items():
        if block is None:
            devices[name] = None
            continue
        message = found.back(block.message)
        if message is None:
            return None
        devices[name] = Blocked(block.reason, message)
    return PoolAvailability(answer.driver, pool, classes, devices)


def _pool_availability(
    driver: str,
    pool: str,
    slices: Sequence[Json],
    claims: list[Json],
    rules: list[Json],
    classes: Sequence[Json],
    nodes: Sequence[Json],
    features: frozenset[str],
    max_per_node: int,
    selector_memo: SelectorMemo | None,
) -> PoolAvailability:
    state_pool = pool_state(driver, pool, slices)
    device_names = [str(d.get("name", "")) for _s, d in state_pool.devices()]
    class_names = [str((c.get("metadata") or {}).get("name", "")) for c in classes]
    result = PoolAvailability(driver, pool)
    if not device_names:
        result.classes.update({name: ClassNumbers() for name in class_names})
        return result
    allocators = _allocators(classes, slices, claims, rules, features, selector_memo)
    groups = _node_groups(slices, nodes)
    prepared = {name: prepare_claim(one_device_claim(name)) for name in class_names}

    placed: dict[str, set[str]] = {}
    for name in class_names:
        allocator, error = allocators[name]
        if allocator is None:
            result.classes[name] = ClassNumbers(error=error)
            continue
        devices, capped, error = _headroom(allocator, prepared[name], groups, max_per_node, driver, pool)
        placed[name] = set(devices)
        result.classes[name] = ClassNumbers(headroom=len(devices), capped=capped, error=error)

    holders = _holders(claims, driver, pool)
    every_placed = set().union(*placed.values())
    explained = not _whole_devices(state_pool) or any(n.error for n in result.classes.values())
    if not explained and all(d in every_placed or d in holders for d in device_names):
        # Nothing left to explain: every device was given to a copy or is in use. Without counters or
        # shared devices, a device that fits on its own also fits beside the others, so free = headroom.
        for name, numbers in result.classes.items():
            result.classes[name] = replace(numbers, free=numbers.headroom)
        for device in device_names:
            in_use = device not in every_placed
            result.devices[device] = (
                Blocked(IN_USE, "allocated to " + ", ".join(holders[device])) if in_use else None
            )
        return result

    verdicts: dict[str, dict[str, DeviceVerdict]] = {name: {} for name in class_names}
    for name in placed:
        allocator, _error = allocators[name]
        assert allocator is not None
        try:
            for node in groups:
                for v in explain(
                    classes=(),
                    slices=(),
                    allocated_claims=(),
                    claim=prepared[name],
                    node=node,
                    allocator=allocator,
                ):
                    if (v.driver, v.pool) != (driver, pool):
                        continue
                    known = verdicts[name].get(v.device)
                    if known is None or (known.reason != "usable" and v.reason == "usable"):
                        verdicts[name][v.device] = v
        except AllocationError as exc:
            result.classes[name] = ClassNumbers(error=str(exc))
            continue
        free = sum(1 for v in verdicts[name].values() if v.reason == "usable")
        result.classes[name] = replace(result.classes[name], free=free)

    consumers = _counter_consumers(state_pool.devices(), claims, driver, pool)
    errors = [f"{name}: {n.error}" for name, n in result.classes.items() if n.error]
    for device in device_names:
        result.devices[device] = _blocked(
            device, class_names, verdicts, state_pool, consumers, errors, holders
        )
    return result


def _whole_devices(state_pool: PoolState) -> bool:
    """No device of the pool shares counters or can be shared: devices are used whole, one per claim."""
    return not any(
        d.get("consumesCounters") or d.get("allowMultipleAllocations") for _s, d in state_pool.devices()
    )


def _holders(claims: list[Json], driver: str, pool: str) -> dict[str, list[str]]:
    """Device → the claims holding it exclusively (admin access and shares leave it available)."""
    out: dict[str, list[str]] = {}
    for claim in claims:
        meta = claim.get("metadata") or {}
        ref = (
            f"{meta.get('namespace')}/{meta.get('name')}"
            if meta.get("namespace")
            else str(meta.get("name", ""))
        )
        for r in allocation_results(claim):
            if (
                r.get("driver") == driver
                and r.get("pool") == pool
                and not r.get("adminAccess")
                and not r.get("shareID")
            ):
                out.setdefault(str(r.get("device")), []).append(ref)
    return out


def _holds_pool(claim: Mapping[str, Any], driver: str, pool: str) -> bool:
    return any(r.get("driver") == driver and r.get("pool") == pool for r in allocation_results(claim))


def _allocators(
    classes: Sequence[Json],
    slices: Sequence[Json],
    claims: list[Json],
    rules: list[Json],
    features: Iterable[str],
    selector_memo: SelectorMemo | None = None,
) -> dict[str, tuple[Allocator | None, str]]:
    """One allocator for all classes; if the allocator refuses the input, one per class, so that one bad
    DeviceClass does not hide the others' numbers."""
    features = frozenset(features)
    names = [str((c.get("metadata") or {}).get("name", "")) for c in classes]

    def build(for_classes: Sequence[Json]) -> Allocator:
        state = AllocatedState.from_claims(claims)
        return Allocator(
            classes=for_classes,
            slices=slices,
            state=state,
            taint_rules=rules,
            features=features,
            selector_memo=selector_memo,
        )

    try:
        shared = build(classes)
        return {name: (shared, "") for name in names}
    except AllocationError:
        pass
    out: dict[str, tuple[Allocator | None, str]] = {}
    for name, cls in zip(names, classes, strict=True):
        try:
            out[name] = (build([cls]), "")
        except AllocationError as exc:
            out[name] = (None, f"the allocator refused the input: {exc}")
    return out


def _node_groups(slices: Sequence[Json], nodes: Sequence[Json]) -> list[Json]:
    """The first node, in name order, of each set of nodes that reach the same devices of the pool."""
    seen: set[tuple[Any, ...]] = set()
    out: list[Json] = []
    for node in sorted(nodes, key=lambda n: str((n.get("metadata") or {}).get("name", ""))):
        key = reach(slices, node)
        if key not in seen and any(_any_true(k) for k in key):
            seen.add(key)
            out.append(node)
    return out


def _any_true(value: Any) -> bool:
    if isinstance(value, tuple):
        return any(_any_true(v) for v in value)
    return bool(value)


def _headroom(
    allocator: Allocator,
    claim: PreparedClaim,
    nodes: Sequence[Json],
    max_per_node: int,
    driver: str,
    pool: str,
) -> tuple[list[str], bool, str]:
    """Copies placed greedily node after node: the devices they got (a shared device once per copy), whether
    a node stopped at the cap, and what the allocator refused. The state is left as it was."""
    placed: list[Json] = []
    devices: list[str] = []
    capped = False
    error = ""
    try:
        for node in nodes:
            for count in range(max_per_node + 1):
                if count == max_per_node:
                    capped = True
                    break
                try:
                    results = allocator.allocate(node, [claim])
                except AllocationError as exc:
                    if not exc.node_local:
                        raise
                    results = None  # an invalid pool: nothing more on this node, as a scheduler sees it
                if results is None:
                    break
                copy = {
                    "metadata": {"namespace": "dradash-availability", "name": f"copy-{len(placed)}"},
                    "status": {"allocation": results[0]},
                }
                allocator.state.add_claim(copy)
                placed.append(copy)
                devices += [
                    str(r.get("device"))
                    for r in allocation_results(copy)
                    if r.get("driver") == driver and r.get("pool") == pool
                ]
    except AllocationError as exc:
        error = str(exc)
    finally:
        for copy in reversed(placed):
            allocator.state.remove_claim(copy)
    return devices, capped, error


def _counter_consumers(
    devices: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]], claims: list[Json], driver: str, pool: str
) -> dict[str, list[str]]:
    """Counter set → the allocated devices of the pool that consume from it (for the message only)."""
    allocated = {
        str(r.get("device"))
        for c in claims
        for r in allocation_results(c)
        if r.get("driver") == driver and r.get("pool") == pool and not r.get("adminAccess")
    }
    out: dict[str, list[str]] = {}
    for _s, d in devices:
        name = str(d.get("name", ""))
        if name not in allocated:
            continue
        for consumption in d.get("consumesCounters") or []:
            out.setdefault(str(consumption.get("counterSet", "")), []).append(name)
    return out


def _blocked(
    device: str,
    class_names: list[str],
    verdicts: dict[str, dict[str, DeviceVerdict]],
    state_pool: PoolState,
    consumers: dict[str, list[str]],
    errors: list[str],
    holders: dict[str, list[str]],
) -> Blocked | None:
    mine = [verdicts[name][device] for name in class_names if device in verdicts[name]]
    if any(v.reason == "usable" for v in mine):
        return None
    # Taints, counters, use and the pool do not depend on the class: any selecting class's verdict says it.
    relevant = [v for v in mine if v.reason not in _SELECTOR_FALSE]
    if relevant:
        return _from_verdict(relevant[0], state_pool, consumers)
    if errors:
        return Blocked(OTHER, "the allocator refused: " + "; ".join(errors))
    if device in holders:
        return Blocked(IN_USE, "allocated to " + ", ".join(holders[device]))
    if mine or not class_names:
        return Blocked(NO_CLASS, "no DeviceClass selects this device")
    return Blocked(NO_NODE, "no node can reach this device")


def _from_verdict(v: DeviceVerdict, state_pool: PoolState, consumers: dict[str, list[str]]) -> Blocked:
    reason = _FROM_VERDICT.get(v.reason, OTHER)
    if reason == IN_USE:
        return Blocked(IN_USE, v.detail)
    if reason == TAINT:
        return Blocked(TAINT, f"untolerated taint {v.detail}")
    if reason == POOL_INCOMPLETE:
        return Blocked(
            POOL_INCOMPLETE,
            f"pool incomplete: {len(state_pool.slices)} of {state_pool.expected} ResourceSlices "
            f"published at generation {state_pool.generation}",
        )
    if reason == POOL_INVALID:
        return Blocked(POOL_INVALID, f"pool invalid: {v.detail}")
    if reason == NO_NODE:
        return Blocked(NO_NODE, v.detail)
    if reason == COUNTERS:
        match = _COUNTER_DETAIL.match(v.detail)
        if match is None:
            return Blocked(COUNTERS, f"counters consumed by partitions: {v.detail}")
        counter_set = match["set"]
        users = consumers.get(counter_set, [])
        by = f" by {', '.join(users[:8])}{' …' if len(users) > 8 else ''}" if users else ""
        need = Quantity(int(match["need"]), "BinarySI")
        left = Quantity(int(match["left"]), "BinarySI")
        return Blocked(
            COUNTERS,
            f"counters consumed by partitions: counter set {counter_set} used{by} "
            f"({match['counter']}: needs {need}, {left} left)",
        )
    return Blocked(OTHER, f"{v.reason}: {v.detail}" if v.detail else v.reason)
