"""The shipped topologies seed only objects that a v1.37 server accepts (the simulator's own writes pass)."""

from __future__ import annotations

import pytest

from simcluster.controllers.driver import build_pool_slices
from simcluster.resources import resource_for
from simcluster.topology import load_topology
from simcluster.validation import validate


@pytest.mark.parametrize("name", ["tiny", "demo"])
def test_it_accepts_every_object_a_topology_seeds(name: str) -> None:
    topology = load_topology(name)
    problems = []
    for plural, obj in topology.seed_objects():
        resource = resource_for(plural)
        assert resource is not None, plural
        obj.setdefault("metadata", {}).setdefault("name", "generated-x")
        causes, _ = validate(resource, obj, None)
        problems += [(plural, obj["metadata"]["name"], cause) for cause in causes]
    slices = resource_for("resourceslices")
    assert slices is not None
    for pool in topology.pools:
        for slice_ in build_pool_slices(
            driver=pool.driver,
            node=pool.node,
            pool=pool.pool_name,
            devices=pool.devices,
            counter_sets=pool.counter_sets,
            generation=1,
        ):
            causes, _ = validate(slices, slice_, None)
            problems += [("resourceslices", pool.node, cause) for cause in causes]
    assert problems == []
