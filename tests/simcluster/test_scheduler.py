"""The simulated scheduler gives pods their devices through the DRA allocator, as kube-scheduler would."""

from __future__ import annotations

from typing import Any

from simcluster.controllers.base import format_time
from simcluster.testing import SimCluster
from tests.simcluster.sim_helpers import (
    JSON,
    claim_template,
    claims_of,
    condition,
    devices_of,
    pods,
    running,
    settle,
    template_pod,
)


def test_it_runs_the_tiny_seed_workloads_and_leaves_the_oversized_pod_unschedulable() -> None:
    with running() as (cluster, _, _):
        trainers = pods(cluster, app="trainer")
        assert len(trainers) == 2
        assert all(p["status"]["phase"] == "Running" and p["spec"]["nodeName"] for p in trainers)
        (too_big,) = pods(cluster, app="too-big")
        assert too_big["status"]["phase"] == "Pending"
        scheduled = condition(too_big, "PodScheduled")
        assert scheduled is not None
        assert (scheduled["status"], scheduled["reason"]) == ("False", "Unschedulable")
        assert scheduled["message"] == (
            "0/3 nodes are available: 3 cannot allocate all claims. still not schedulable, "
            "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        )


def test_it_creates_a_template_claim_named_annotated_owned_allocated_and_reserved_for_the_pod() -> None:
    with running() as (cluster, _, _):
        (trainer, *_) = pods(cluster, app="trainer")
        (claim,) = claims_of(cluster, trainer)

        assert claim["metadata"]["name"].startswith(f"{trainer['metadata']['name']}-gpu-")
        assert claim["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"] == "gpu"
        owner = claim["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["uid"], owner["controller"]) == ("Pod", trainer["metadata"]["uid"], True)
        assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
        assert claim["status"]["reservedFor"] == [
            {"resource": "pods", "name": trainer["metadata"]["name"], "uid": trainer["metadata"]["uid"]}
        ]
        ((driver, pool, _),) = devices_of(claim)
        assert (driver, pool) == ("gpu.example.com", trainer["spec"]["nodeName"])
        assert trainer["status"]["resourceClaimStatuses"] == [
            {"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}
        ]


def test_it_serves_example_com_gpu_through_an_extended_resource_claim() -> None:
    with running() as (cluster, _, _):
        (pod,) = pods(cluster, app="legacy-gpu")
        assert pod["status"]["phase"] == "Running"
        extended = pod["status"]["extendedResourceClaimStatus"]
        assert extended["requestMappings"] == [
            {
                "containerName": "main",
                "resourceName": "example.com/gpu",
                "requestName": "container-0-request-0",
            }
        ]
        (claim,) = claims_of(cluster, pod)
        assert claim["metadata"]["name"].startswith("legacy-gpu-extended-resources-")
        assert claim["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"] == "true"
        assert claim["spec"]["devices"]["requests"][0]["name"] == "container-0-request-0"
        assert devices_of(claim)[0][:2] == ("gpu.example.com", pod["spec"]["nodeName"])


def test_it_keeps_a_gpu_and_a_nic_on_the_same_numa_node() -> None:
    with running() as (cluster, _, _):
        cluster.store.create(
            "resourceclaimtemplates",
            claim_template(
                "gpu-nic",
                [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}},
                    {"name": "nic", "exactly": {"deviceClassName": "nic.example.com"}},
                ],
                constraints=[
                    {"requests": ["gpu", "nic"], "matchAttribute": "resource.kubernetes.io/numaNode"}
                ],
            ),
        )
        cluster.store.create("pods", template_pod("paired", "gpu-nic", claim="devices"))
        settle(cluster)

        (pod,) = pods(cluster, app="paired")
        (claim,) = claims_of(cluster, pod)
        slices = cluster.store.list("resourceslices")
        numa = {
            (s["spec"]["driver"], d["name"]): d["attributes"]["resource.kubernetes.io/numaNode"]["int"]
            for s in slices
            if s["spec"]["pool"]["name"] == pod["spec"]["nodeName"]
            for d in s["spec"].get("devices", [])
        }
        (gpu, nic) = devices_of(claim)
        assert numa[(gpu[0], gpu[2])] == numa[(nic[0], nic[2])] == 0  # the NIC sits on NUMA node 0


def test_it_releases_deallocates_and_deletes_generated_claims_when_the_pod_goes() -> None:
    with running() as (cluster, _, _):
        (pod,) = pods(cluster, app="legacy-gpu")
        (claim,) = claims_of(cluster, pod)

        cluster.store.delete("pods", "legacy-gpu", namespace="default")
        settle(cluster)

        names = [c["metadata"]["name"] for c in cluster.store.list("resourceclaims", namespace="default")]
        assert claim["metadata"]["name"] not in names


def test_it_deallocates_a_shared_claim_only_when_its_last_pod_is_gone() -> None:
    with running() as (cluster, _, _):
        cluster.store.create(
            "resourceclaims",
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "shared", "namespace": "ml"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]
                    }
                },
            },
        )
        for name in ("reader-a", "reader-b"):
            pod = template_pod(name, "unused")
            pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "shared"}]
            cluster.store.create("pods", pod)
        settle(cluster)
        shared = cluster.store.get("resourceclaims", "shared", namespace="ml")
        assert sorted(r["name"] for r in shared["status"]["reservedFor"]) == ["reader-a", "reader-b"]
        a, b = (
            cluster.store.get("pods", "reader-a", namespace="ml"),
            cluster.store.get("pods", "reader-b", namespace="ml"),
        )
        assert a["spec"]["nodeName"] == b["spec"]["nodeName"]

        cluster.store.delete("pods", "reader-a", namespace="ml")
        settle(cluster)
        shared = cluster.store.get("resourceclaims", "shared", namespace="ml")
        assert [r["name"] for r in shared["status"]["reservedFor"]] == ["reader-b"]
        assert shared["status"]["allocation"]

        cluster.store.delete("pods", "reader-b", namespace="ml")
        settle(cluster)
        shared = cluster.store.get("resourceclaims", "shared", namespace="ml")
        assert "allocation" not in shared.get("status", {})
        assert "finalizers" not in shared["metadata"]


def test_it_schedules_a_pod_waiting_for_a_claim_once_the_claim_exists() -> None:
    with running() as (cluster, _, _):
        pod = template_pod("waiter", "unused")
        pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "later"}]
        cluster.store.create("pods", pod)
        settle(cluster)
        waiting = cluster.store.get("pods", "waiter", namespace="ml")
        scheduled = condition(waiting, "PodScheduled")
        assert scheduled is not None and "later" in scheduled["message"]

        cluster.store.create(
            "resourceclaims",
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "later", "namespace": "ml"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]
                    }
                },
            },
        )
        settle(cluster)
        assert cluster.store.get("pods", "waiter", namespace="ml")["status"]["phase"] == "Running"


def test_it_schedules_a_pending_pod_when_devices_free_up() -> None:
    with running() as (cluster, _, _):
        blocker = template_pod("blocker", "single-gpu")
        blocker["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "node-0"}
        cluster.store.create("pods", blocker)
        cluster.store.create(
            "resourceclaimtemplates",
            claim_template(
                "four", [{"name": "gpus", "exactly": {"deviceClassName": "gpu.example.com", "count": 4}}]
            ),
        )
        wide = template_pod("wide", "four", claim="gpus")
        wide["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "node-0"}
        cluster.store.create("pods", wide)
        settle(cluster)
        assert cluster.store.get("pods", "wide", namespace="ml")["status"]["phase"] == "Pending"

        cluster.store.patch("replicasets", "trainer", {"spec": {"replicas": 0}}, namespace="ml")
        cluster.store.delete("pods", "legacy-gpu", namespace="default")
        cluster.store.delete("pods", "blocker", namespace="ml")
        settle(cluster)

        running_wide = cluster.store.get("pods", "wide", namespace="ml")
        assert (running_wide["status"]["phase"], running_wide["spec"]["nodeName"]) == ("Running", "node-0")
        assert len(devices_of(claims_of(cluster, running_wide)[0])) == 4


def test_it_binds_pods_without_device_needs_round_robin() -> None:
    with running() as (cluster, _, _):
        for i in range(3):
            cluster.store.create(
                "pods",
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"web-{i}", "namespace": "default", "labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "registry.example.com/web:1"}]},
                },
            )
        settle(cluster)
        web = pods(cluster, app="web")
        assert {p["status"]["phase"] for p in web} == {"Running"}
        assert len({p["spec"]["nodeName"] for p in web}) == 3


def _web_pod(name: str, affinity: JSON | None = None) -> JSON:
    spec: JSON = {"containers": [{"name": "web", "image": "registry.example.com/web:1"}]}
    if affinity:
        spec["affinity"] = {"nodeAffinity": affinity}
    return {"apiVersion": "v1", "kind": "Pod", "spec": spec,
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}}}  # fmt: skip


def _prefer(weight: int, node: str) -> JSON:
    return {"weight": weight, "preference": {"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node]}]}}  # fmt: skip


def test_it_places_pods_on_the_feasible_node_they_prefer_most() -> None:
    with running() as (cluster, _, _):
        prefer = {
            "preferredDuringSchedulingIgnoredDuringExecution": [_prefer(10, "node-1"), _prefer(50, "node-2")]
        }
        for i in range(3):
            cluster.store.create("pods", _web_pod(f"web-{i}", prefer))
        settle(cluster)
        assert {p["spec"]["nodeName"] for p in pods(cluster, app="web")} == {"node-2"}
        # the most preferred node cordoned: the next preference, never a filter broken
        cluster.store.patch("nodes", "node-2", {"spec": {"unschedulable": True}})
        cluster.store.create("pods", _web_pod("web-late", prefer))
        settle(cluster)
        late = cluster.store.get("pods", "web-late", namespace="default")
        assert late["spec"]["nodeName"] == "node-1"
        # a required affinity still filters, whatever the preference
        required = {**prefer, "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-0"]}]}]}}  # fmt: skip
        cluster.store.create("pods", _web_pod("web-pinned", required))
        settle(cluster)
        assert cluster.store.get("pods", "web-pinned", namespace="default")["spec"]["nodeName"] == "node-0"


def test_it_recreates_replicaset_pods_that_are_deleted() -> None:
    with running() as (cluster, _, _):
        first, second = pods(cluster, app="trainer")
        cluster.store.delete("pods", first["metadata"]["name"], namespace="ml")
        settle(cluster)

        trainers = pods(cluster, app="trainer")
        assert len(trainers) == 2
        assert first["metadata"]["name"] not in {p["metadata"]["name"] for p in trainers}
        assert all(p["status"]["phase"] == "Running" for p in trainers)


def test_it_blocks_new_allocations_on_devices_under_a_no_schedule_rule_but_keeps_running_pods() -> None:
    with running() as (cluster, _, _):
        before = {
            p["metadata"]["name"]: p["spec"]["nodeName"] for p in pods(cluster) if p["spec"].get("nodeName")
        }
        for node in ("node-0", "node-1", "node-2"):
            cluster.store.create(
                "devicetaintrules",
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "DeviceTaintRule",
                    "metadata": {"name": f"hold-{node}"},
                    "spec": {
                        "deviceSelector": {"driver": "gpu.example.com", "pool": node},
                        "taint": {"key": "example.com/maintenance", "value": "hold", "effect": "NoSchedule"},
                    },
                },
            )
        cluster.store.create("pods", template_pod("late", "single-gpu"))
        settle(cluster)

        still = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in pods(cluster)}
        assert all(still[name] == node for name, node in before.items())
        late = cluster.store.get("pods", "late", namespace="ml")
        assert late["status"]["phase"] == "Pending"
        assert condition(late, "PodScheduled")["reason"] == "Unschedulable"  # type: ignore[index]

        cluster.store.delete("devicetaintrules", "hold-node-1")
        settle(cluster)
        late = cluster.store.get("pods", "late", namespace="ml")
        assert late["spec"]["nodeName"] == "node-1"


def test_it_frees_a_claim_allocated_where_its_pod_cannot_run_and_allocates_it_again() -> None:
    with running() as (cluster, _, _):
        pod = template_pod("pinned", "unused")
        pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "pinned-gpu"}]
        pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "node-1"}
        pod["spec"]["schedulingGates"] = [{"name": "example.com/hold"}]
        created = cluster.store.create("pods", pod)
        claim = cluster.store.create(
            "resourceclaims",
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "pinned-gpu", "namespace": "ml"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]
                    }
                },
            },
        )
        claim["status"] = {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": "gpu.example.com", "pool": "node-0", "device": "gpu-3"}
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-0"]}]}
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": "pinned", "uid": created["metadata"]["uid"]}],
        }
        cluster.store.update("resourceclaims", claim, subresource="status")
        settle(cluster)

        gated = cluster.store.get("pods", "pinned", namespace="ml")
        gated["spec"]["schedulingGates"] = []
        cluster.store.update("pods", gated)
        settle(cluster)

        running_pod = cluster.store.get("pods", "pinned", namespace="ml")
        assert (running_pod["status"]["phase"], running_pod["spec"]["nodeName"]) == ("Running", "node-1")
        assert devices_of(cluster.store.get("resourceclaims", "pinned-gpu", namespace="ml"))[0][1] == "node-1"


def test_it_adds_no_pod_to_a_claim_whose_device_the_eviction_controller_would_evict_it_from() -> None:
    # The claim tolerates the taint's key with an empty effect: allocation accepts that, eviction does not
    # (only effect NoExecute delays it), so a pod joining the claim would be evicted at once.
    with running(disable=["eviction"]) as (cluster, _, clock):
        tolerant = {"key": "example.com/maintenance", "operator": "Exists"}
        cluster.store.create(
            "resourceclaims",
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "shared", "namespace": "ml"},
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpu",
                                "exactly": {"deviceClassName": "gpu.example.com", "tolerations": [tolerant]},
                            }
                        ]
                    }
                },
            },
        )

        def reader(name: str) -> dict[str, Any]:
            pod = template_pod(name, "unused")
            pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "shared"}]
            return pod

        cluster.store.create("pods", reader("reader-a"))
        settle(cluster)
        ((driver, pool, device),) = devices_of(cluster.store.get("resourceclaims", "shared", namespace="ml"))
        cluster.store.create(
            "devicetaintrules",
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceTaintRule",
                "metadata": {"name": "bad-gpu"},
                "spec": {
                    "deviceSelector": {"driver": driver, "pool": pool, "device": device},
                    "taint": {
                        "key": "example.com/maintenance",
                        "effect": "NoExecute",
                        "timeAdded": format_time(clock.now()),
                    },
                },
            },
        )
        cluster.store.create("pods", reader("reader-b"))
        settle(cluster)

        reader_b = cluster.store.get("pods", "reader-b", namespace="ml")
        assert reader_b["status"]["phase"] == "Pending"
        scheduled = condition(reader_b, "PodScheduled")
        assert scheduled is not None
        assert "untolerated NoExecute taint" in scheduled["message"]
        shared = cluster.store.get("resourceclaims", "shared", namespace="ml")
        assert [r["name"] for r in shared["status"]["reservedFor"]] == ["reader-a"]


def test_it_leaves_an_extended_resource_to_the_device_plugin_of_a_node_that_advertises_it() -> None:
    with running() as (cluster, _, _):
        for node in cluster.store.list("nodes"):
            allocatable = {**node["status"]["allocatable"], "example.com/gpu": "1k"}  # a quantity: 1000
            cluster.store.patch(
                "nodes",
                node["metadata"]["name"],
                {"status": {"allocatable": allocatable}},
                subresource="status",
            )
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "plugin-gpu", "namespace": "default", "labels": {"app": "plugin-gpu"}},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "registry.example.com/x:1",
                        "resources": {"limits": {"example.com/gpu": "1"}},
                    }
                ]
            },
        }
        cluster.store.create("pods", pod)
        settle(cluster)

        (scheduled,) = pods(cluster, app="plugin-gpu")
        assert scheduled["status"]["phase"] == "Running"
        assert "extendedResourceClaimStatus" not in scheduled["status"]
        assert claims_of(cluster, scheduled) == []


def test_it_keeps_a_pod_with_an_unreadable_node_affinity_pending_and_the_scheduler_running() -> None:
    with running() as (cluster, _, _):
        pod = template_pod("odd", "single-gpu")
        pod["spec"]["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "Gt", "values": ["a"]}]}
                    ]
                }
            }
        }
        cluster.store.create("pods", pod)
        settle(cluster)  # also asserts no controller failed its pass

        odd = cluster.store.get("pods", "odd", namespace="ml")
        scheduled = condition(odd, "PodScheduled")
        assert odd["status"]["phase"] == "Pending" and scheduled is not None
        assert scheduled["message"].startswith("invalid required node affinity:")
        assert "must be an integer" in scheduled["message"]


def _fpga_pool(node: str, *slices: list[str]) -> list[JSON]:
    """ResourceSlices of one fpga.example.com pool on ``node``, one per device-name list."""
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-fpga-{i}"},
            "spec": {
                "driver": "fpga.example.com",
                "nodeName": node,
                "pool": {"name": node, "generation": 1, "resourceSliceCount": len(slices)},
                "devices": [{"name": d} for d in names],
            },
        }
        for i, names in enumerate(slices)
    ]


def _ask_for_an_fpga(cluster: SimCluster) -> None:
    cluster.store.create(
        "deviceclasses",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "fpga.example.com"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "fpga.example.com"'}}]},
        },
    )
    cluster.store.create(
        "resourceclaimtemplates",
        claim_template("fpga", [{"name": "fpga", "exactly": {"deviceClassName": "fpga.example.com"}}]),
    )
    cluster.store.create("pods", template_pod("fpga-user", "fpga", claim="fpga"))
    settle(cluster)


def test_it_passes_over_a_node_whose_pool_is_invalid_and_schedules_on_the_next() -> None:
    with running() as (cluster, _, _):
        *others, last = sorted(n["metadata"]["name"] for n in cluster.store.list("nodes"))
        # The same device name in both slices of a pool: invalid, a node-local failure upstream.
        for node in others:
            for s in _fpga_pool(node, ["fpga-0"], ["fpga-0"]):
                cluster.store.create("resourceslices", s)
        for s in _fpga_pool(last, ["fpga-0"]):
            cluster.store.create("resourceslices", s)
        _ask_for_an_fpga(cluster)

        (pod,) = pods(cluster, app="fpga-user")
        assert (pod["status"]["phase"], pod["spec"]["nodeName"]) == ("Running", last)


def test_it_names_the_invalid_pool_when_no_node_fits() -> None:
    with running() as (cluster, _, _):
        first, *_ = sorted(n["metadata"]["name"] for n in cluster.store.list("nodes"))
        for s in _fpga_pool(first, ["fpga-0"], ["fpga-0"]):
            cluster.store.create("resourceslices", s)
        _ask_for_an_fpga(cluster)

        (pod,) = pods(cluster, app="fpga-user")
        assert pod["status"]["phase"] == "Pending"
        scheduled = condition(pod, "PodScheduled")
        assert scheduled is not None
        assert (
            f"1 invalid resource pools were encountered (fpga.example.com/{first}: duplicate device name fpga-0)"
            in scheduled["message"]
        )


def test_it_serves_example_com_gpu_by_the_device_plugin_where_a_node_advertises_it_and_counts_it() -> None:
    with running("demo") as (cluster, _, _):
        legacy = pods(cluster, app="cuda-legacy") + pods(cluster, app="cuda-legacy-wide")
        assert len(legacy) == 6
        running_ = [p for p in legacy if p["status"]["phase"] == "Running"]
        # pinned to the device-plugin nodes: no extended-resource claim, the plugin's devices are used,
        # even on legacy-01 whose GPUs DRA also publishes (the device plugin wins there)
        assert {p["spec"]["nodeName"] for p in running_} == {"legacy-00", "legacy-01"}
        assert all("extendedResourceClaimStatus" not in p["status"] for p in legacy)
        # DRA serves it on nodes that advertise none
        assert all(p["status"].get("extendedResourceClaimStatus") for p in pods(cluster, app="legacy-gpu"))
        # 5 × 1 + 4 GPUs asked of 4 + 4 the plugins advertise: one pod waits, counted per node
        # the wide pod is seeded before the ReplicaSet makes its replicas, so it is queued first: the
        # replica that finds no GPU left is the one that waits, on every start
        (waiting,) = [p for p in legacy if p["status"]["phase"] == "Pending"]
        assert waiting["metadata"]["labels"]["app"] == "cuda-legacy"
        scheduled = condition(waiting, "PodScheduled")
        assert scheduled is not None
        assert "2 Insufficient example.com/gpu" in scheduled["message"]


def test_it_reserves_a_claim_a_pod_group_lists_for_the_group_and_lets_every_member_use_it() -> None:
    from simcluster.controllers.scheduler import DEFAULT_FEATURES as ON

    with running(features=ON | {"WorkloadResourceClaims"}) as (cluster, _, _):
        store = cluster.store
        store.create(
            "resourceclaims",
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "shared-gpu", "namespace": "default"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]
                    }
                },
            },
        )
        group = store.create(
            "podgroups",
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": "trainers", "namespace": "default"},
                "spec": {
                    "schedulingPolicy": {"basic": {}},
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared-gpu"}],
                },
            },
        )
        for i in range(3):
            store.create(
                "pods",
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"trainer-{i}", "namespace": "default", "labels": {"app": "group"}},
                    "spec": {
                        "schedulingGroup": {"podGroupName": "trainers"},
                        "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared-gpu"}],
                        "containers": [
                            {"name": "main", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}
                        ],
                    },
                },
            )
        store.create(
            "pods",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "orphan", "namespace": "default", "labels": {"app": "orphan"}},
                "spec": {
                    "schedulingGroup": {"podGroupName": "nobody"},
                    "containers": [{"name": "m", "image": "x"}],
                },
            },
        )
        settle(cluster)
        members = pods(cluster, app="group")
        assert all(p["status"]["phase"] == "Running" for p in members)
        assert len({p["spec"]["nodeName"] for p in members}) == 1  # where the claim's device is
        claim = store.get("resourceclaims", "shared-gpu", namespace="default")
        assert claim["status"]["reservedFor"] == [
            {
                "apiGroup": "scheduling.k8s.io",
                "resource": "podgroups",
                "name": "trainers",
                "uid": group["metadata"]["uid"],
            }
        ]
        (orphan,) = pods(cluster, app="orphan")
        scheduled = condition(orphan, "PodScheduled")
        assert scheduled is not None and 'pod group "nobody" does not exist' in scheduled["message"]
