"""dra.objects and dra.extended: pools, attributes, claims, extended resources."""

from __future__ import annotations

from dra.extended import (
    claim_requests,
    count_of,
    extended_claim,
    extended_requests,
    extended_resources,
    generated_claim_prefix,
    is_dra_extended_resource_name,
    is_extended_resource_name,
    served_by_device_plugin,
)
from dra.kinds import BY_PLURAL, kind_for
from dra.objects import (
    device_limit,
    flat_attributes,
    numa_node,
    pool_problem,
    pool_state,
    pools_of,
    uses_advanced_features,
)


def rs(
    name: str,
    *,
    pool: str = "p",
    generation: int = 1,
    count: int = 1,
    devices: list | None = None,
    counters: list | None = None,
) -> dict:
    spec: dict = {
        "driver": "gpu.example.com",
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
    }
    if devices is not None:
        spec["devices"] = devices
    if counters is not None:
        spec["sharedCounters"] = counters
    return {"metadata": {"name": name}, "spec": spec}


def test_it_keeps_only_the_highest_generation_and_checks_completeness() -> None:
    state = pool_state(
        "gpu.example.com",
        "p",
        [rs("a", generation=1), rs("b", generation=2, count=2), rs("c", generation=2, count=2)],
    )
    assert state.generation == 2 and [s["metadata"]["name"] for s in state.slices] == ["b", "c"]
    assert state.complete and state.usable
    short = pool_state("gpu.example.com", "p", [rs("b", generation=2, count=2)])
    assert not short.complete and not short.usable and short.problem is None


def test_it_finds_invalid_pools_in_upstream_words() -> None:
    dup = pool_state(
        "gpu.example.com",
        "p",
        [rs("a", count=2, devices=[{"name": "gpu-0"}]), rs("b", count=2, devices=[{"name": "gpu-0"}])],
    )
    assert dup.problem == "duplicate device name gpu-0" and not dup.usable
    counters = [{"name": "gpu-0-cs", "counters": {"memory": {"value": "80Gi"}}}]
    missing_set = [
        {
            "name": "mig",
            "consumesCounters": [{"counterSet": "nope", "counters": {"memory": {"value": "1Gi"}}}],
        }
    ]
    assert (
        pool_state(
            "d", "p", [rs("a", count=2, counters=counters), rs("b", count=2, devices=missing_set)]
        ).problem
        == "counter set nope not found"
    )
    missing_counter = [
        {"name": "mig", "consumesCounters": [{"counterSet": "gpu-0-cs", "counters": {"sm": {"value": "1"}}}]}
    ]
    assert (
        pool_state(
            "d", "p", [rs("a", count=2, counters=counters), rs("b", count=2, devices=missing_counter)]
        ).problem
        == "counter sm not found in counter set gpu-0-cs"
    )
    assert (
        pool_problem(device_names=[], counter_sets=[("x", ["a"]), ("x", ["b"])])
        == "duplicate counter set name x"
    )
    assert pool_problem(device_names=[], consumptions=[("nope", ["a"])], partitionable=False) is None


def test_it_groups_slices_into_pools() -> None:
    pools = pools_of([rs("a", pool="p1"), rs("b", pool="p2")])
    assert sorted(pools) == [("gpu.example.com", "p1"), ("gpu.example.com", "p2")]


def test_it_flattens_attributes_under_qualified_and_short_names() -> None:
    attrs = {"model": {"string": "h200"}, "resource.kubernetes.io/numaNode": {"int": 1}, "ok": {"bool": True}}
    assert flat_attributes("gpu.example.com", attrs) == {
        "gpu.example.com/model": "h200",
        "model": "h200",
        "resource.kubernetes.io/numaNode": "1",
        "gpu.example.com/ok": "true",
        "ok": "true",
    }
    assert numa_node(attrs) == 1


def cls(name: str, created: str, explicit: str | None = None) -> dict:
    spec = {"extendedResourceName": explicit} if explicit else {}
    return {"metadata": {"name": name, "creationTimestamp": created}, "spec": spec}


def test_it_lets_the_newest_class_win_an_extended_resource_name_then_the_first_name() -> None:
    newer = extended_resources(
        [
            cls("a", "2026-01-01T00:00:00Z", "example.com/gpu"),
            cls("b", "2026-01-02T00:00:00Z", "example.com/gpu"),
        ]
    )
    assert newer.classes["example.com/gpu"] == "b"
    tie = extended_resources(
        [
            cls("d", "2026-01-01T00:00:00Z", "example.com/gpu"),
            cls("c", "2026-01-01T00:00:00+00:00", "example.com/gpu"),
        ]
    )
    assert tie.classes["example.com/gpu"] == "c"
    assert tie.classes["deviceclass.resource.kubernetes.io/d"] == "d"
    assert tie.served["d"] == ["deviceclass.resource.kubernetes.io/d"]
    assert "c wins" in tie.conflicts[0] and "ignored: d" in tie.conflicts[0]


def test_it_builds_the_schedulers_extended_resource_claim() -> None:
    mapping = {"example.com/gpu": "gpu.example.com"}
    pod = {
        "metadata": {"name": "trainer", "namespace": "ml", "uid": "u1"},
        "spec": {
            "initContainers": [{"name": "init", "resources": {"limits": {"example.com/gpu": "2"}}}],
            "containers": [{"name": "main", "resources": {"limits": {"cpu": "1", "example.com/gpu": 1}}}],
        },
    }
    mappings = extended_requests(pod, mapping)
    # The plain init container reuses the long-lived container's request, which asks for the larger count.
    assert {(m.container, m.request) for m in mappings} == {
        ("init", "container-1-request-1"),
        ("main", "container-1-request-1"),
    }
    assert [(r["name"], r["exactly"]["count"]) for r in claim_requests(mappings)] == [
        ("container-1-request-1", 2)
    ]
    claim = extended_claim(pod, mappings)
    assert claim["metadata"]["generateName"] == "trainer-extended-resources-"
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert claim["metadata"]["ownerReferences"][0]["uid"] == "u1"


def test_it_knows_which_names_are_extended_resources_and_which_backend_serves_them() -> None:
    assert is_extended_resource_name("example.com/gpu")
    assert not is_extended_resource_name("cpu")
    assert not is_extended_resource_name("kubernetes.io/batch")
    # a class's implicit name is served by DRA but is no name a class may declare
    assert is_dra_extended_resource_name("deviceclass.resource.kubernetes.io/gpu.example.com")
    assert not is_extended_resource_name("deviceclass.resource.kubernetes.io/gpu.example.com")
    assert is_dra_extended_resource_name("example.com/gpu")
    assert not is_dra_extended_resource_name("cpu")
    assert count_of("2") == 2 and count_of("1500m") == 0 and count_of("x") == 0
    assert served_by_device_plugin({"status": {"allocatable": {"example.com/gpu": "8"}}}, "example.com/gpu")
    assert not served_by_device_plugin(
        {"status": {"allocatable": {"example.com/gpu": "0"}}}, "example.com/gpu"
    )


def test_it_knows_where_each_kind_lives() -> None:
    assert BY_PLURAL["devicetaintrules"].path(name="r") == "/apis/resource.k8s.io/v1/devicetaintrules/r"
    assert (
        kind_for("pods").path(namespace="ml", name="p", subresource="status")
        == "/api/v1/namespaces/ml/pods/p/status"
    )
    assert kind_for("resourcepoolstatusrequests").api_version == "resource.k8s.io/v1alpha3"


def test_it_lists_the_field_selectors_a_kind_supports() -> None:
    assert kind_for("pods").field_labels[:2] == ("metadata.name", "metadata.namespace")
    assert "spec.nodeName" in kind_for("pods").field_labels
    # cluster-scoped kinds have no metadata.namespace to select on
    assert kind_for("resourceslices").field_labels == ("metadata.name", "spec.nodeName", "spec.driver")


def test_it_wants_an_extended_resource_name_to_be_a_quota_name_too() -> None:
    # upstream checks `requests.<name>` as a qualified name: the name part after the slash must be one
    assert is_extended_resource_name("example.com/gpu-80gb")
    assert not is_extended_resource_name("example.com/gpu 80gb")
    assert not is_extended_resource_name("example.com/")
    assert not is_extended_resource_name("Example_com/gpu")
    assert not is_extended_resource_name("requests.example.com/gpu")


def test_it_shortens_long_pod_and_claim_names_in_generated_claim_names() -> None:
    prefix = generated_claim_prefix("p" * 60, "c" * 30)
    assert len(prefix) <= 59 and prefix.endswith("-")
    assert prefix.startswith("p" * 38 + "-c")
    assert generated_claim_prefix("trainer-abc", "gpu") == "trainer-abc-gpu-"


def test_it_lets_a_plain_init_container_share_the_request_of_a_sidecar_or_main_container() -> None:
    mapping = {"example.com/gpu": "gpu.example.com"}
    pod = {
        "spec": {
            "initContainers": [
                {"name": "warmup", "resources": {"limits": {"example.com/gpu": "3"}}},
                {
                    "name": "proxy",
                    "restartPolicy": "Always",
                    "resources": {"limits": {"cpu": "1", "example.com/gpu": "1"}},
                },
            ],
            "containers": [
                {"name": "main", "resources": {"limits": {"example.com/gpu": "2", "memory": "1Gi"}}}
            ],
        }
    }

    mappings = extended_requests(pod, mapping)

    # the sidecar (restartPolicy Always) is long-lived: the plain init container reuses its request
    assert [(m.container, m.request) for m in mappings] == [
        ("proxy", "container-1-request-1"),
        ("warmup", "container-1-request-1"),
        ("main", "container-2-request-0"),
    ]
    assert [(r["name"], r["exactly"]["count"]) for r in claim_requests(mappings)] == [
        ("container-1-request-1", 3),
        ("container-2-request-0", 2),
    ]


def test_it_counts_extended_resources_as_quantities() -> None:
    # "1k" is a thousand devices, not a malformed number; fractions count nothing
    assert count_of("1k") == 1000
    assert count_of(4) == 4
    assert count_of("0.5") == 0 and count_of("-1") == 0


def test_it_lowers_the_slice_limit_for_devices_with_advanced_features() -> None:
    plain = {"name": "gpu-0", "attributes": {"model": {"string": "h100"}}}
    assert device_limit([plain, plain]) == 128
    assert device_limit([plain, {"name": "gpu-1", "taints": [{"key": "k", "effect": "NoSchedule"}]}]) == 64
    assert device_limit([{"name": "p", "consumesCounters": [{"counterSet": "s", "counters": {}}]}]) == 64
    assert device_limit([{"name": "l", "attributes": {"links": {"ints": [1, 2]}}}]) == 64
    assert not uses_advanced_features({"name": "odd", "attributes": {"x": "not-an-attribute"}})


def test_pod_extended_counts_sum_containers_and_take_the_largest_plain_init_container() -> None:
    from dra.extended import device_plugin_capacity, pod_extended_counts

    pod = {
        "spec": {
            "initContainers": [
                {"name": "warmup", "resources": {"limits": {"example.com/gpu": "3"}}},
                {
                    "name": "sidecar",
                    "restartPolicy": "Always",
                    "resources": {"limits": {"example.com/gpu": "1"}},
                },
            ],
            "containers": [
                {"name": "a", "resources": {"limits": {"example.com/gpu": "1", "cpu": "2"}}},
                {"name": "b", "resources": {"requests": {"example.com/gpu": "1"}}},
            ],
        }
    }
    assert pod_extended_counts(pod) == {"example.com/gpu": 3}
    pod["spec"]["initContainers"][0]["resources"]["limits"]["example.com/gpu"] = "2"
    assert pod_extended_counts(pod) == {"example.com/gpu": 3}  # 1 sidecar + 2 containers
    assert (
        device_plugin_capacity({"status": {"allocatable": {"example.com/gpu": "4"}}}, "example.com/gpu") == 4
    )
    assert device_plugin_capacity({"status": {}}, "example.com/gpu") == 0
