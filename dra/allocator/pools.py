"""Pool gathering for one node (upstream ``GatherPools``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dra.objects import pool_problem

from .model import Device, Node, Slice, node_matches

PoolID = tuple[str, str]


@dataclass(eq=False)
class Pool:
    driver: str
    name: str
    incomplete: bool = False
    #: why the pool cannot be used (duplicate devices, bad counter references), or None
    invalid: str | None = None
    #: slices with devices relevant for the node, sorted by name (kept for invalid pools too, so
    #: that explanations can name their devices; the search skips unusable pools)
    slices: tuple[Slice, ...] = ()
    #: counter set -> counter -> value, from every counter slice of the pool's generation
    counter_sets: dict[str, dict[str, int]] = field(default_factory=dict)
    #: devices of this pool in slices not targeting the node: they still consume counters
    other_devices: tuple[Device, ...] = ()
    has_binding_conditions: bool = False

    @property
    def id(self) -> PoolID:
        return (self.driver, self.name)

    @property
    def usable(self) -> bool:
        return not self.incomplete and self.invalid is None


def slice_targets_node(s: Slice, node: Node | None, partitionable: bool) -> bool:
    """Whether the slice is relevant for the node. Counter slices are no exception: when one is
    left out, the pool looks incomplete from here and `gather_pools` fetches it from all slices."""
    if not partitionable and (s.per_device_set or s.shared_counters):
        return False
    if s.node_name or s.all_nodes or s.node_selector is not None:
        return node_matches(
            node, s.node_name, s.all_nodes, s.node_selector, f"ResourceSlice {s.name}.spec.nodeSelector"
        )
    if s.per_device:
        return any(
            node_matches(
                node,
                d.node_name,
                d.all_nodes,
                d.node_selector,
                f"ResourceSlice {s.name} device {d.name}.nodeSelector",
            )
            for d in s.devices
        )
    # None of the known node-selection fields: some future extension we cannot interpret.
    return False


def _build(pool_id: PoolID, mine: Sequence[Slice], rest: Sequence[Slice], partitionable: bool) -> Pool:
    """A complete pool from its slices relevant for the node (``mine``) and, when some are not,
    the others of the same generation (``rest``).

    With PartitionableDevices a slice with counter sets is a counter slice only (v1 keeps
    devices and counter sets apart); devices of other nodes' slices are validated and consume
    counters, but only the node's own devices must have unique names.
    """
    device_slices = sorted(
        (s for s in mine if not (partitionable and s.shared_counters)), key=lambda s: s.name
    )
    counter_slices = sorted(
        (s for s in (*mine, *rest) if partitionable and s.shared_counters), key=lambda s: s.name
    )
    others = [s for s in rest if not (partitionable and s.shared_counters)]
    pool = Pool(*pool_id, slices=tuple(device_slices))
    pool.other_devices = tuple(d for s in others for d in s.devices)
    pool.has_binding_conditions = any(d.binding_conditions for s in device_slices for d in s.devices)
    pool.invalid = pool_problem(
        device_names=(d.name for s in device_slices for d in s.devices),
        counter_sets=((name, counters) for s in counter_slices for name, counters in s.shared_counters),
        consumptions=(
            (c.counter_set, c.counters)
            for s in (*device_slices, *others)
            for d in s.devices
            for c in d.consumes_counters
        ),
        partitionable=partitionable,
    )
    if pool.invalid is None:
        for s in counter_slices:
            for set_name, counters in s.shared_counters:
                pool.counter_sets[set_name] = dict(counters)
    return pool


def gather_pools(
    node: Node | None,
    candidate_slices: Sequence[Slice],
    slices_by_pool: Mapping[PoolID, Sequence[Slice]],
    partitionable: bool,
) -> list[Pool]:
    """Pools with slices relevant for the node, in allocation order.

    Only the highest generation of a pool seen from the node counts. If fewer slices than
    ``resourceSliceCount`` are relevant, all slices of the pool decide: a newer generation
    elsewhere makes it obsolete (dropped), too few at this generation incomplete (never
    allocated from), else it is built from all of them (counter sets published for other
    nodes count, and so do the devices there). Pools are ordered by driver and name, those
    whose devices have binding conditions last.
    """
    collected: dict[PoolID, list[Slice]] = {}
    for s in candidate_slices:
        if not slice_targets_node(s, node, partitionable):
            continue
        pid = (s.driver, s.pool)
        current = collected.get(pid)
        if current is None or s.generation > current[0].generation:
            collected[pid] = [s]
        elif s.generation == current[0].generation:
            current.append(s)

    pools: list[Pool] = []
    for pid, mine in collected.items():
        generation, expected = mine[0].generation, mine[0].slice_count
        rest: list[Slice] = []
        if len(mine) != expected:
            everything = slices_by_pool.get(pid, ())
            if any(s.generation > generation for s in everything):
                continue  # obsolete: the driver is replacing this generation
            same_generation = [s for s in everything if s.generation == generation]
            if len(same_generation) != expected:
                pools.append(Pool(*pid, incomplete=True, slices=tuple(sorted(mine, key=lambda s: s.name))))
                continue
            own = {id(s) for s in mine}
            rest = [s for s in same_generation if id(s) not in own]
        pools.append(_build(pid, mine, rest, partitionable))
    pools.sort(key=lambda p: (p.has_binding_conditions, p.driver, p.name))
    return pools
