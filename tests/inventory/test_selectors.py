"""What the data means: the semantics the selectors and derived rows promise (dra-api.md §3, §7.2, §8.1, §9)."""

from __future__ import annotations

import pytest

from inventory import selectors
from inventory.models import Claim, Device, Pool
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def device(name: str, pool: str = "node-0") -> Device:
    return Device.objects.get(driver="gpu.example.com", pool=pool, name=name)


def test_it_merges_slice_taints_and_rule_taints_with_their_provenance() -> None:
    driver_taint = {"key": "gpu.example.com/ecc", "value": "uncorrectable", "effect": "NoExecute"}
    f.write(
        (
            "resourceslices",
            f.resource_slice("s0", devices=[f.gpu("gpu-0", taints=[driver_taint]), f.gpu("gpu-1")]),
        ),
        ("devicetaintrules", f.taint_rule("maint", selector={"device": "gpu-0"}, effect="NoSchedule")),
    )

    taints = device("gpu-0").taints

    assert [(t["source"], t["rule"], t["key"], t["effect"]) for t in taints] == [
        ("slice", "", "gpu.example.com/ecc", "NoExecute"),
        ("rule", "maint", "example.com/maint", "NoSchedule"),
    ]
    assert device("gpu-0").max_taint_effect == "NoExecute"
    assert device("gpu-1").taints == []
    assert [(r.name, r.matched_devices) for r in selectors.taint_rule_list()] == [("maint", 1)]


def test_it_applies_an_empty_rule_selector_to_every_device_and_a_missing_one_to_none() -> None:
    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])),
        ("resourceslices", f.resource_slice("s1", pool="node-1", node="node-1", devices=[f.gpu("gpu-0")])),
        ("devicetaintrules", f.taint_rule("everything", selector={})),
        ("devicetaintrules", f.taint_rule("nothing", selector=None)),
    )

    rules = {r.name: r.matched_devices for r in selectors.taint_rule_list()}

    assert rules == {"everything": 2, "nothing": 0}
    assert [t["rule"] for t in device("gpu-0", "node-1").taints] == ["everything"]


def test_it_shows_an_unknown_effect_but_treats_it_as_none() -> None:
    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])),
        ("devicetaintrules", f.taint_rule("future", selector={}, effect="PreferNoDevice")),
    )

    taint = device("gpu-0").taints[0]

    assert taint["effect"] == "PreferNoDevice"
    assert taint["effectiveEffect"] == "None" and taint["knownEffect"] is False
    assert device("gpu-0").taint_none and not device("gpu-0").taint_no_schedule


def test_it_follows_rule_changes_and_deletion() -> None:
    rule = f.taint_rule("maint", selector={"pool": "node-0"}, effect="None")
    f.write(("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])), ("devicetaintrules", rule))
    changed = {
        **rule,
        "metadata": {**rule["metadata"], "resourceVersion": "2"},
        "spec": {**rule["spec"], "deviceSelector": {"pool": "elsewhere"}},
    }

    f.write(("devicetaintrules", changed))
    assert device("gpu-0").taints == []
    f.write(("devicetaintrules", rule))
    assert device("gpu-0").taint_none
    f.delete("devicetaintrules", rule)
    assert device("gpu-0").taints == []


def test_it_uses_only_the_highest_pool_generation() -> None:
    f.write(
        ("resourceslices", f.resource_slice("old", generation=1, devices=[f.gpu("gpu-old")])),
        ("resourceslices", f.resource_slice("new", generation=2, devices=[f.gpu("gpu-new")])),
    )

    assert list(Device.objects.values_list("name", flat=True)) == ["gpu-new"]
    assert Pool.objects.get().generation == 2


def test_it_flags_an_incomplete_pool_instead_of_showing_it_silently_half() -> None:
    f.write(("resourceslices", f.resource_slice("part-1", count=2, devices=[f.gpu("gpu-0")])))

    pool = Pool.objects.get()

    assert not pool.complete
    assert pool.problems == ["incomplete: 1 of 2 slices at generation 1"]
    assert not device("gpu-0").pool_complete


def test_it_completes_the_pool_when_the_missing_slice_arrives() -> None:
    f.write(("resourceslices", f.resource_slice("part-1", count=2, devices=[f.gpu("gpu-0")])))
    f.write(("resourceslices", f.resource_slice("part-2", count=2, devices=[f.gpu("gpu-1")])))

    assert Pool.objects.get().complete
    assert Device.objects.filter(pool_complete=True).count() == 2


def test_it_sees_a_slice_deleted_and_recreated_under_the_same_name_when_relisting() -> None:
    first = f.resource_slice("s0", devices=[f.gpu("gpu-0")])
    f.replace("resourceslices", [first])
    again = f.resource_slice("s0", devices=[f.gpu("gpu-9")])  # same name, new uid

    f.replace("resourceslices", [again], rv="200")

    assert list(Device.objects.values_list("slice_uid", "name")) == [(again["metadata"]["uid"], "gpu-9")]


def test_it_shows_which_claim_request_and_pods_hold_a_device() -> None:
    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")])),
        (
            "resourceclaims",
            f.claim(
                "train",
                namespace="ml",
                results=[f.result("gpu-0", request="gpu/big")],
                reserved_for=[{"resource": "pods", "name": "trainer-0", "uid": "pod-uid-1"}],
            ),
        ),
    )

    allocation = device("gpu-0").allocations[0]

    assert (
        allocation["namespace"],
        allocation["claim"],
        allocation["request"],
        allocation["subrequest"],
    ) == ("ml", "train", "gpu", "big")
    assert allocation["pods"] == [{"namespace": "ml", "name": "trainer-0", "uid": "pod-uid-1"}]
    assert device("gpu-0").allocation_state == "allocated"
    assert device("gpu-1").allocation_state == "free"
    assert Claim.objects.get(name="train").state == "reserved"


def test_it_frees_the_device_when_the_claim_is_deallocated_or_deleted() -> None:
    held = f.claim("c", results=[f.result("gpu-0")])
    f.write(("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])), ("resourceclaims", held))

    f.delete("resourceclaims", held)

    assert device("gpu-0").allocation_state == "free"
    assert device("gpu-0").allocations == []
    assert not Claim.objects.exists()


def test_it_shows_shared_devices_with_share_ids_and_consumed_capacity() -> None:
    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0", allowMultipleAllocations=True)])),
        (
            "resourceclaims",
            f.claim("a", results=[f.result("gpu-0", shareID="u-1", consumedCapacity={"memory": "10Gi"})]),
        ),
        (
            "resourceclaims",
            f.claim("b", results=[f.result("gpu-0", shareID="u-2", consumedCapacity={"memory": "20Gi"})]),
        ),
    )

    d = device("gpu-0")

    assert d.allocation_state == "shared"
    assert sorted((a["claim"], a["shareID"], a["consumedCapacity"]["memory"]) for a in d.allocations) == [
        ("a", "u-1", "10Gi"),
        ("b", "u-2", "20Gi"),
    ]


def test_it_marks_admin_access_allocations() -> None:
    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])),
        ("resourceclaims", f.claim("monitor", results=[f.result("gpu-0", adminAccess=True)])),
    )

    assert device("gpu-0").admin_access
    assert device("gpu-0").allocations[0]["adminAccess"] is True


def test_it_shows_per_device_status_from_the_claim() -> None:
    status = {
        "driver": "nic.example.com",
        "pool": "node-0",
        "device": "nic-0",
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "Configured",
                "message": "ok",
                "lastTransitionTime": "2026-11-01T10:00:00Z",
            }
        ],
        "networkData": {
            "interfaceName": "eth1",
            "hardwareAddress": "aa:bb:cc:dd:ee:ff",
            "ips": ["10.0.0.5/24"],
        },
        "data": {"vf": 3},
    }
    nic = f.resource_slice("n0", driver="nic.example.com", devices=[{"name": "nic-0"}])
    claim = f.claim(
        "net",
        results=[f.result("nic-0", request="nic", driver="nic.example.com")],
        device_status=[status],
        cls="nic.example.com",
    )
    f.write(("resourceslices", nic), ("resourceclaims", claim))

    detail = selectors.claim_detail(namespace="default", name="net")
    row = Device.objects.get(name="nic-0")

    view = detail.results[0]["status"]
    assert view["networkData"]["interfaceName"] == "eth1"
    assert view["networkData"]["ips"] == ["10.0.0.5/24"]
    assert view["conditions"][0]["type"] == "Ready"
    assert "vf: 3" in view["data"]
    assert row.statuses[0]["networkData"]["hardwareAddress"] == "aa:bb:cc:dd:ee:ff"


def test_it_caps_untrusted_strings_from_the_cluster(settings: object) -> None:
    status = {
        "driver": "gpu.example.com",
        "pool": "node-0",
        "device": "gpu-0",
        "conditions": [{"type": "Ready", "status": "False", "reason": "R", "message": "x" * 5000}],
    }
    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])),
        ("resourceclaims", f.claim("c", results=[f.result("gpu-0")], device_status=[status])),
    )

    view = selectors.claim_detail(namespace="default", name="c").results[0]["status"]

    assert len(view["conditions"][0]["message"]) == 1024  # DRADASH_MAX_STRING default


def test_it_recognises_extended_resource_claims_and_their_pod() -> None:
    f.write(
        (
            "resourceclaims",
            f.claim(
                "pod-a-extended-resources-x1",
                annotations={"resource.kubernetes.io/extended-resource-claim": "true"},
                owner_pod="pod-a",
            ),
        )
    )

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": f.meta("pod-a", namespace="default"),
        "spec": {},
        "status": {
            "extendedResourceClaimStatus": {
                "resourceClaimName": "pod-a-extended-resources-x1",
                "requestMappings": [
                    {
                        "containerName": "main",
                        "resourceName": "example.com/gpu",
                        "requestName": "container-0-request-0",
                    }
                ],
            }
        },
    }
    f.write(("pods", pod))

    claim = Claim.objects.get()
    detail = selectors.claim_detail(namespace="default", name="pod-a-extended-resources-x1")

    assert claim.extended_resource and claim.owner_pod == "pod-a"
    assert detail.owner_pod is not None and detail.owner_pod.name == "pod-a"
    assert detail.extended_resources == [
        {"containerName": "main", "resourceName": "example.com/gpu", "requestName": "container-0-request-0"}
    ]


def test_it_reports_extended_resource_names_and_resolves_conflicts_newest_first_then_by_name() -> None:
    f.write(
        (
            "deviceclasses",
            f.device_class("gpu-old", extended="example.com/gpu", created="2026-11-01T10:00:00Z"),
        ),
        (
            "deviceclasses",
            f.device_class("gpu-new", extended="example.com/gpu", created="2026-11-02T10:00:00Z"),
        ),
        (
            "deviceclasses",
            f.device_class("tie-b", extended="example.com/tie", created="2026-11-01T10:00:00Z"),
        ),
        (
            "deviceclasses",
            f.device_class("tie-a", extended="example.com/tie", created="2026-11-01T10:00:00Z"),
        ),
    )

    overview = selectors.class_overview()
    served = {c.name: c.extended_resource_names for c in overview.classes}

    assert served["gpu-new"] == ["deviceclass.resource.kubernetes.io/gpu-new", "example.com/gpu"]
    assert served["gpu-old"] == ["deviceclass.resource.kubernetes.io/gpu-old"]
    assert "example.com/tie" in served["tie-a"] and "example.com/tie" not in served["tie-b"]
    assert len(overview.warnings) == 2
    assert any("gpu-new wins" in w and "gpu-old" in w for w in overview.warnings)


def test_it_matches_devices_to_classes_with_cel_selectors() -> None:
    f.write(
        (
            "deviceclasses",
            f.device_class("h100", expression='device.attributes["gpu.example.com"].model == "H100"'),
        ),
        ("deviceclasses", f.device_class("gpu.example.com")),
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1", model="A100")])),
    )

    assert device("gpu-0").classes == ["gpu.example.com", "h100"]
    assert device("gpu-1").classes == ["gpu.example.com"]
    assert selectors.device_list(filters={"device_class": "h100"}).count() == 1


def test_it_does_not_short_circuit_a_driver_test_that_an_or_can_override() -> None:
    expression = (
        'device.driver == "nic.example.com" && false || device.attributes["gpu.example.com"].model == "A100"'
    )
    f.write(
        ("deviceclasses", f.device_class("odd", expression=expression)),
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1", model="A100")])),
    )

    assert (device("gpu-0").classes, device("gpu-1").classes) == ([], ["odd"])


def test_it_reevaluates_classes_when_a_class_changes() -> None:
    cls = f.device_class("h100", expression='device.attributes["gpu.example.com"].model == "H100"')
    f.write(("deviceclasses", cls), ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])))
    cls["metadata"]["resourceVersion"] = "2"
    cls["spec"]["selectors"][0]["cel"]["expression"] = 'device.attributes["gpu.example.com"].model == "A100"'

    f.write(("deviceclasses", cls))

    assert device("gpu-0").classes == []


def partitionable_pool() -> None:
    counters = [{"name": "gpu-0-slices", "counters": {"memory": {"value": "40Gi"}}}]
    devices = [
        {
            "name": f"gpu-0-mig-{i}",
            "consumesCounters": [{"counterSet": "gpu-0-slices", "counters": {"memory": {"value": "20Gi"}}}],
        }
        for i in range(3)
    ]
    f.write(
        ("deviceclasses", f.device_class("gpu.example.com")),
        ("resourceslices", f.resource_slice("counters", count=2, sharedCounters=counters, devices=None)),
        ("resourceslices", f.resource_slice("parts", count=2, devices=devices)),
    )


def test_it_shows_what_is_left_of_shared_counters() -> None:
    partitionable_pool()
    f.write(("resourceclaims", f.claim("mig", results=[f.result("gpu-0-mig-0")])))

    detail = selectors.device_detail(device=device("gpu-0-mig-1"))

    assert detail.counters_left == {"gpu-0-slices": {"memory": "20Gi"}}


def test_it_counts_devices_blocked_by_exhausted_counters_as_not_free() -> None:
    partitionable_pool()
    f.write(("resourceclaims", f.claim("mig", results=[f.result("gpu-0-mig-0"), f.result("gpu-0-mig-1")])))

    summary = selectors.class_overview().classes[0]

    assert (summary.total, summary.allocated, summary.blocked_by_counters, summary.free) == (3, 2, 1, 0)


def test_it_groups_a_nodes_devices_by_numa_node() -> None:
    f.write(
        (
            "resourceslices",
            f.resource_slice(
                "s0",
                devices=[
                    f.gpu("gpu-0", numa=0),
                    f.gpu("gpu-1", numa=1),
                    f.gpu("gpu-2", numa=0),
                    f.gpu("gpu-x"),
                ],
            ),
        ),
    )

    detail = selectors.node_detail(name="node-0")

    assert [(numa, [d.name for d in devices]) for numa, devices in detail.numa_groups] == [
        (0, ["gpu-0", "gpu-2"]),
        (1, ["gpu-1"]),
        (None, ["gpu-x"]),
    ]


def test_it_takes_health_from_pod_reports_and_driver_taints() -> None:
    sick = {"key": "gpu.example.com/unhealthy", "value": "xid-79", "effect": "NoExecute"}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": f.meta("p", namespace="default"),
        "spec": {"nodeName": "node-0"},
        "status": {
            "containerStatuses": [
                {
                    "name": "c",
                    "allocatedResourcesStatus": [
                        {
                            "name": "claim:c/gpu",
                            "resources": [
                                {
                                    "resourceID": "gpu.example.com/node-0/gpu-1",
                                    "health": "Unhealthy",
                                    "message": "hot",
                                }
                            ],
                        }
                    ],
                }
            ]
        },
    }
    f.write(
        (
            "resourceslices",
            f.resource_slice("s0", devices=[f.gpu("gpu-0", taints=[sick]), f.gpu("gpu-1"), f.gpu("gpu-2")]),
        )
    )
    f.write(("pods", pod))

    assert (device("gpu-0").health, device("gpu-1").health, device("gpu-2").health) == (
        "Unhealthy",
        "Unhealthy",
        "",
    )
    assert selectors.device_list(filters={"health": "Unhealthy"}).count() == 2
    f.delete("pods", pod)
    assert device("gpu-1").health == ""


def test_it_filters_devices_by_attribute_with_short_or_qualified_names() -> None:
    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1", model="A100")]))
    )

    assert [d.name for d in selectors.device_list(filters={"attribute": "model=A100"})] == ["gpu-1"]
    assert [d.name for d in selectors.device_list(filters={"attribute": "gpu.example.com/model=H100"})] == [
        "gpu-0"
    ]
    assert not selectors.device_list(filters={"attribute": "model=h100"}).exists()  # values match exactly


def test_it_refuses_an_unknown_filter_value_with_the_field_named() -> None:
    with pytest.raises(selectors.InvalidFilters) as error:
        selectors.device_list(filters={"taint": "Sometimes"})

    assert "taint" in error.value.errors


def test_it_renders_an_object_as_yaml_without_managed_fields() -> None:
    rule = f.taint_rule("maint", selector={})
    rule["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    f.write(("devicetaintrules", rule))

    text = selectors.object_yaml(obj=selectors.object_get(kind="devicetaintrules", name="maint"))

    assert "name: maint" in text and "managedFields" not in text


def test_it_lists_the_pods_running_on_a_node() -> None:
    def pod(name: str, node: str) -> dict[str, object]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": f.meta(name, namespace="ml"),
            "spec": {"nodeName": node},
        }

    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0", numa=0)])),
        ("pods", pod("here", "node-0")),
        ("pods", pod("there", "node-1")),
    )

    assert [p.name for p in selectors.node_detail(name="node-0").pods] == ["here"]


def test_it_writes_large_batches_the_same_way_as_small_ones() -> None:
    # 300 rows take the bulk path (COPY on PostgreSQL); the result must not differ from small batches.
    f.write(("resourceslices", f.resource_slice("big", devices=[f.gpu(f"gpu-{i:03d}") for i in range(300)])))
    f.write(
        *[("resourceclaims", f.claim(f"c-{i:03d}", results=[f.result(f"gpu-{i:03d}")])) for i in range(250)]
    )

    assert Device.objects.count() == 300
    assert Device.objects.filter(allocation_state="allocated").count() == 250
    assert device("gpu-249").claim_name == "c-249" and device("gpu-250").allocation_state == "free"
    assert Claim.objects.filter(state="allocated").count() == 250
