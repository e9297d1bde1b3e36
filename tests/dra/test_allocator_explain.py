"""`explain`: why each device on a node can or cannot serve each request."""

from __future__ import annotations

from dra.allocator import DEFAULT_FEATURES, DeviceVerdict, explain, summarize
from tests.dra.allocator_cases import (
    DRIVER,
    GPU_CLASS,
    NODE,
    J,
    allocated,
    claim,
    device,
    device_class,
    devices,
    exactly,
    first_available,
    resource_slice,
    result,
    sub,
    taint_rule,
)


def _reasons(verdicts: list[DeviceVerdict]) -> dict[tuple[str, str], str]:
    return {(v.device, v.request): v.reason for v in verdicts}


def _explain(the_claim: J, slices: list[J], **kw: object) -> list[DeviceVerdict]:
    args: dict[str, object] = {
        "classes": [GPU_CLASS],
        "slices": slices,
        "allocated_claims": [],
        "claim": the_claim,
        "node": NODE,
        "features": DEFAULT_FEATURES,
    }
    args.update(kw)
    return explain(**args)  # type: ignore[arg-type]


def test_it_names_the_claim_holding_a_device_in_use() -> None:
    verdicts = _explain(
        claim("c", exactly("gpu")),
        [resource_slice("s", devices("gpu-0", "gpu-1"))],
        allocated_claims=[allocated("training", result("gpu-0"))],
    )
    by_device = {v.device: v for v in verdicts}
    assert by_device["gpu-0"].reason == "already in use"
    assert "default/training" in by_device["gpu-0"].detail
    assert by_device["gpu-1"].reason == "usable"


def test_it_tells_class_selector_from_request_selector() -> None:
    classes = [device_class("h200", f'device.attributes["{DRIVER}"].model == "h200"')]
    slices = [
        resource_slice(
            "s",
            [
                device("a100", attrs={"model": "a100", "mem": 40}),
                device("h200-small", attrs={"model": "h200", "mem": 80}),
                device("h200-big", attrs={"model": "h200", "mem": 141}),
            ],
        )
    ]
    the_claim = claim(
        "c", exactly("gpu", cls="h200", selectors=(f'device.attributes["{DRIVER}"].mem > 100',))
    )
    reasons = _reasons(_explain(the_claim, slices, classes=classes))
    assert reasons == {
        ("a100", "gpu"): "class selector false",
        ("h200-small", "gpu"): "request selector false",
        ("h200-big", "gpu"): "usable",
    }


def test_it_names_the_taint_and_the_rule_that_put_it_there() -> None:
    rule = taint_rule(
        "drain-gpu-1",
        {"key": "example.com/maint", "value": "drain", "effect": "NoExecute"},
        {"device": "gpu-1"},
    )
    slices = [
        resource_slice(
            "s",
            [
                device("gpu-0", taints=[{"key": "example.com/ecc", "value": "bad", "effect": "NoSchedule"}]),
                device("gpu-1"),
            ],
        )
    ]
    verdicts = {v.device: v for v in _explain(claim("c", exactly("gpu")), slices, taint_rules=[rule])}
    assert verdicts["gpu-0"].reason == "taint not tolerated"
    assert verdicts["gpu-0"].detail == "example.com/ecc=bad:NoSchedule from ResourceSlice"
    assert verdicts["gpu-1"].reason == "taint not tolerated"
    assert verdicts["gpu-1"].detail == "example.com/maint=drain:NoExecute from DeviceTaintRule drain-gpu-1"


def test_it_reports_exhausted_counters_and_short_capacity() -> None:
    counters = [{"name": "mem", "counters": {"memory": {"value": "80Gi"}}}]

    def part(name: str) -> J:
        return device(
            name, consumesCounters=[{"counterSet": "mem", "counters": {"memory": {"value": "80Gi"}}}]
        )

    slices = [
        resource_slice("c", [], node=None, count=2, sharedCounters=counters),
        resource_slice(
            "d", [part("full"), part("full-again"), device("small", capacity={"memory": "10Gi"})], count=2
        ),
    ]
    reasons = _reasons(
        _explain(
            claim("c", exactly("gpu", capacity={"requests": {"memory": "20Gi"}})),
            slices,
            allocated_claims=[allocated("old", result("full"))],
        )
    )
    assert reasons[("full", "gpu")] == "already in use"
    assert reasons[("full-again", "gpu")] == "counters exhausted"
    assert reasons[("small", "gpu")] == "capacity short"


def test_it_reports_incomplete_pools_and_devices_for_other_nodes() -> None:
    slices = [
        resource_slice("a", devices("half-published"), pool="a", count=2),
        resource_slice(
            "b",
            [device("there", nodeName="node-2"), device("here", nodeName="node-1")],
            pool="b",
            perDeviceNodeSelection=True,
        ),
    ]
    reasons = _reasons(_explain(claim("c", exactly("gpu")), slices))
    assert reasons == {
        ("half-published", "gpu"): "pool incomplete",
        ("there", "gpu"): "node mismatch",
        ("here", "gpu"): "usable",
    }


def test_it_reports_constraint_attributes_a_device_lacks() -> None:
    slices = [
        resource_slice("s", [device("bare"), device("numa", attrs={"resource.kubernetes.io/numaNode": 0})])
    ]
    the_claim = claim(
        "c", exactly("gpu"), constraints=[{"matchAttribute": "resource.kubernetes.io/numaNode"}]
    )
    reasons = _reasons(_explain(the_claim, slices))
    assert reasons == {("bare", "gpu"): "constraint unmet", ("numa", "gpu"): "usable"}


def test_it_explains_every_subrequest() -> None:
    the_claim = claim(
        "c",
        first_available(
            "gpu", sub("big", selectors=(f'device.attributes["{DRIVER}"].mem > 100',)), sub("any")
        ),
    )
    slices = [resource_slice("s", [device("gpu-0", attrs={"mem": 80})])]
    assert _reasons(_explain(the_claim, slices)) == {
        ("gpu-0", "gpu/big"): "request selector false",
        ("gpu-0", "gpu/any"): "usable",
    }


def test_it_turns_cel_errors_into_verdicts() -> None:
    the_claim = claim("c", exactly("gpu", selectors=(f'device.attributes["{DRIVER}"].missing == 1',)))
    verdicts = _explain(the_claim, [resource_slice("s", devices("gpu-0"))])
    assert [v.reason for v in verdicts] == ["selector error"]
    assert "CEL runtime error" in verdicts[0].detail


def test_it_summarizes_what_each_request_lacks() -> None:
    the_claim = claim(
        "c", exactly("gpu", count=2), first_available("nic", sub("fast", count=1), sub("slow", count=3))
    )
    verdicts = _explain(
        the_claim,
        [resource_slice("s", devices("gpu-0", "gpu-1", "gpu-2"))],
        allocated_claims=[allocated("a", result("gpu-0")), allocated("b", result("gpu-1"))],
    )
    summaries = {s.request: s for s in summarize(the_claim, verdicts)}
    assert list(summaries) == ["gpu", "nic/fast", "nic/slow"]
    assert summaries["gpu"].message == "gpu: needs 2, only 1 usable (2 already in use)"
    assert summaries["nic/fast"].usable == 1 and summaries["nic/fast"].needed == 1
    assert summaries["nic/slow"].blocked == {"already in use": 2}


def test_it_reports_devices_whose_match_attribute_value_too_few_devices_share() -> None:
    slices = [
        resource_slice(
            "s", [device(f"gpu-{i}", attrs={"resource.kubernetes.io/numaNode": i % 2}) for i in range(4)]
        )
    ]
    the_claim = claim(
        "c",
        exactly("gpu", count=2),
        exactly("nic"),
        constraints=[{"matchAttribute": "resource.kubernetes.io/numaNode"}],
    )
    verdicts = _explain(the_claim, slices, allocated_claims=[allocated("old", result("gpu-2"))])
    reasons = _reasons(verdicts)
    assert reasons[("gpu-0", "gpu")] == "constraint unmet"
    assert reasons[("gpu-1", "gpu")] == "usable"
    # The NIC request needs one device, but it must share the value with two GPUs.
    assert reasons[("gpu-0", "nic")] == "constraint unmet"
    assert reasons[("gpu-3", "nic")] == "usable"
    detail = next(v.detail for v in verdicts if v.device == "gpu-0" and v.request == "nic")
    assert (
        detail
        == "matchAttribute resource.kubernetes.io/numaNode: too few usable devices with value 0 for gpu"
    )


def test_it_reports_invalid_pools_and_binding_conditions_without_the_feature() -> None:
    slices = [
        resource_slice("a-1", devices("twin"), pool="a", count=2),
        resource_slice("a-2", devices("twin"), pool="a", count=2),
        resource_slice("b", [device("waits", bindingConditions=["Attached"])], pool="b"),
    ]
    verdicts = _explain(
        claim("c", exactly("gpu")), slices, features=DEFAULT_FEATURES - {"DeviceBindingAndStatus"}
    )
    by_device = {v.device: v for v in verdicts}
    assert by_device["twin"].reason == "pool invalid"
    assert by_device["twin"].detail == "duplicate device name twin"
    assert by_device["waits"].reason == "binding conditions not supported"


def test_it_calls_a_device_with_a_list_value_usable_where_allocate_takes_it() -> None:
    # Without ListTypeAttributes upstream still accepts a list value for the first device.
    the_claim = claim("c", exactly("gpu"), constraints=[{"matchAttribute": f"{DRIVER}/numa"}])
    slices = [resource_slice("s", [device("n01", attrs={"numa": {"ints": [0, 1]}}), device("bare")])]
    assert _reasons(_explain(the_claim, slices)) == {
        ("n01", "gpu"): "usable",
        ("bare", "gpu"): "constraint unmet",
    }
