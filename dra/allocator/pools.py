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
    #: device slices relevant for the node, sorted by name
    slices: tuple[Slice, ...] = ()
    #: counter set -> counter -> value
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
    if not partitionable and (s.per_device or s.shared_counters):
        return False
    if s.shared_counters:
        # Counter sets are needed to use the pool regardless of node selection.
        return True
    field_name = f"ResourceSlice {s.name}.spec.nodeSelector"
    if s.node_name or s.all_nodes or s.node_selector is not None:
        return node_matches(node, s.node_name, s.all_nodes, s.node_selector, field_name)
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


def _validate(
    pool: Pool,
    device_slices: Sequence[Slice],
    counter_slices: Sequence[Slice],
    others: Sequence[Slice],
    partitionable: bool,
) -> None:
    for s in counter_slices:
        for set_name, counters in s.shared_counters:
            pool.counter_sets.setdefault(set_name, dict(counters))
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


def gather_pools(
    node: Node | None,
    candidate_slices: Sequence[Slice],
    slices_by_pool: Mapping[PoolID, Sequence[Slice]],
    partitionable: bool,
) -> list[Pool]:
    """Pools with devices reachable from the node, in allocation order.

    Only the highest generation of a pool counts. A pool is incomplete if fewer slices than
    ``resourceSliceCount`` exist at that generation (looking at all slices, also those for
    other nodes), obsolete (dropped) if a newer generation exists elsewhere, invalid if device
    names repeat or counters are referenced that do not exist.
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
    for (driver, pool_name), slices in collected.items():
        generation, expected = slices[0].generation, slices[0].slice_count
        others: list[Slice] = []
        if len(slices) != expected:
            everything = slices_by_pool.get((driver, pool_name), ())
            if any(s.generation > generation for s in everything):
                continue  # obsolete: the driver is replacing this generation
            same_generation = [s for s in everything if s.generation == generation]
            if len(same_generation) != expected:
                pools.append(
                    Pool(
                        driver, pool_name, incomplete=True, slices=tuple(sorted(slices, key=lambda s: s.name))
                    )
                )
                continue
            mine = {id(s) for s in slices}
            others = [s for s in same_generation if id(s) not in mine]
        if partitionable:
            # v1 keeps devices and counter sets in separate slices; older data may mix them.
            device_slices = [s for s in slices if s.devices or not s.shared_counters]
            counter_slices = [s for s in slices if s.shared_counters]
        else:
            device_slices, counter_slices = list(slices), []
        device_slices.sort(key=lambda s: s.name)
        pool = Pool(driver, pool_name, slices=tuple(device_slices))
        _validate(pool, device_slices, counter_slices, others if partitionable else (), partitionable)
        pool.other_devices = tuple(d for s in others for d in s.devices)
        pool.has_binding_conditions = any(d.binding_conditions for s in device_slices for d in s.devices)
        pools.append(pool)
    pools.sort(key=lambda p: (p.has_binding_conditions, p.driver, p.name))
    return pools
