"""Derived attributes (DRADerivedAttributes, alpha) shown in what-if explanations: the feasibility answer,
rendered as the what-if page does, says which value each device's derived attribute took when the
constraint on it could not be met."""

from __future__ import annotations

import yaml
from django.template.loader import render_to_string

from allocation.snapshot import DEFAULT_FEATURES, snapshot_from_objects
from allocation.whatif.kinds.feasibility import feasibility
from allocation.whatif.subject import resolve_subject
from tests.dra.allocator_cases import DRIVER, NODE, claim, device, device_class, exactly, resource_slice


def test_the_feasibility_answer_shows_each_devices_derived_value_where_the_constraint_fails() -> None:
    expr = f'device.attributes["{DRIVER}"].numa'
    wanted = claim(
        "two-on-one-numa",
        exactly("gpu", count=2, derivedAttributes=[{"name": "derived/numa", "expression": expr}]),
        constraints=[{"matchAttribute": "derived/numa"}],
    )
    wanted["metadata"]["namespace"] = "default"
    snapshot = snapshot_from_objects(
        {
            "deviceclasses": [device_class("gpu")],
            "resourceslices": [
                resource_slice("s", [device("gpu-0", attrs={"numa": 0}), device("gpu-1", attrs={"numa": 1})])
            ],
            "nodes": [NODE],
        },
        features=DEFAULT_FEATURES | {"DerivedAttributes"},
    )
    subject = resolve_subject({"source": "yaml", "yaml": yaml.safe_dump(wanted)}, snapshot)
    answer = feasibility(snapshot=snapshot, subject=subject)
    assert not answer["feasible"]
    html = render_to_string("allocation/kinds/feasibility.html", {"part": "result", "r": answer})
    assert "derived attribute derived/numa: 0" in html
    assert "derived attribute derived/numa: 1" in html
