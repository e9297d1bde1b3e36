"""Topologies: the world a simulated cluster starts with, read from compact YAML files.

A topology file describes node groups ("node-{i}" × count), device models, DeviceClasses, namespaces,
driver taints and seed workloads. `load_topology` expands it into API JSON (camelCase dicts, as the
server stores them) plus one `PoolSpec` per (driver, node) pool that the simulated driver publishes.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dra.objects import NUMA_ATTRIBUTE

TOPOLOGY_DIR = Path(__file__).with_name("topologies")
PCI_BUS_ID_ATTRIBUTE = "resource.kubernetes.io/pciBusID"

JSON = dict[str, Any]


class TopologyError(ValueError):
    """A topology file is malformed; the message names the file and the field."""


@dataclass(frozen=True)
class PoolSpec:
    """The devices one driver publishes for one node: one pool named after the node."""

    driver: str
    node: str
    devices: tuple[JSON, ...]
    counter_sets: tuple[JSON, ...] = ()

    @property
    def pool_name(self) -> str:
        return self.node


@dataclass(frozen=True)
class Topology:
    name: str
    namespaces: tuple[JSON, ...]
    nodes: tuple[JSON, ...]
    device_classes: tuple[JSON, ...]
    pools: tuple[PoolSpec, ...]
    # Everything else to create at start, in order: templates, claims, rules, owners, pods.
    workloads: tuple[tuple[str, JSON], ...] = ()
    drivers: tuple[str, ...] = field(default=())

    def seed_objects(self) -> list[tuple[str, JSON]]:
        """(plural, object) pairs to create at start, dependencies first. Slices are the driver's."""
        seeded: list[tuple[str, JSON]] = [("namespaces", ns) for ns in self.namespaces]
        seeded += [("nodes", node) for node in self.nodes]
        seeded += [("deviceclasses", cls) for cls in self.device_classes]
        seeded += list(self.workloads)
        return [(plural, copy.deepcopy(obj)) for plural, obj in seeded]

    @property
    def device_count(self) -> int:
        return sum(len(pool.devices) for pool in self.pools)


def available_topologies() -> list[str]:
    return sorted(p.stem for p in TOPOLOGY_DIR.glob("*.yaml"))


SCALE_PREFIX = "scale:"


def load_topology(name: str, *, workload_pods: int | None = None) -> Topology:
    """Load `simcluster/topologies/<name>.yaml` (or a path to a YAML file), or `scale:<nodes>`.

    `workload_pods` overrides the file's `generatedWorkloads.count` (pods that each ask for one GPU
    through a template), so benchmarks can fill the `large` topology.

    `scale:<nodes>[:rules=<n>]` is `large` grown or shrunk to `nodes` nodes (`scale_topology`).
    """
    if name.startswith(SCALE_PREFIX):
        nodes, options = _scale_options(name)
        return scale_topology(nodes, workload_pods=workload_pods, taint_rules=options.get("rules", 0))
    path = Path(name) if name.endswith((".yaml", ".yml")) else TOPOLOGY_DIR / f"{name}.yaml"
    if not path.is_file():
        raise TopologyError(f"unknown topology {name!r}; available: {', '.join(available_topologies())}")
    with path.open() as handle:
        document = yaml.safe_load(handle)
    if not isinstance(document, dict):
        raise TopologyError(f"{path.name}: the document must be a mapping")
    return build_topology(document, source=path.name, workload_pods=workload_pods)


def _scale_options(name: str) -> tuple[int, dict[str, int]]:
    head, *rest = name.removeprefix(SCALE_PREFIX).split(":")
    options: dict[str, int] = {}
    try:
        nodes = int(head)
        for part in rest:
            key, _, value = part.partition("=")
            options[key] = int(value)
    except ValueError:
        raise TopologyError(
            f"{name!r}: expected scale:<nodes>[:rules=<n>] with whole numbers, e.g. scale:3000"
        ) from None
    unknown = set(options) - {"rules"}
    if nodes < 1 or unknown:
        raise TopologyError(f"{name!r}: nodes must be ≥ 1 and the only option is rules=<n>")
    return nodes, options


def scale_topology(nodes: int, *, workload_pods: int | None = None, taint_rules: int = 0) -> Topology:
    """`large`'s node and device mix (8 H100 GPUs + 2 CX7 NICs a node, two pools a node) at `nodes` nodes:
    1,000 / 3,000 / 10,000 nodes are 10k / 30k / 100k devices. `taint_rules` adds that many one-pool
    DeviceTaintRules (effect None, so nothing is evicted) over the GPU pools of the first nodes."""
    path = TOPOLOGY_DIR / "large.yaml"
    with path.open() as handle:
        document = yaml.safe_load(handle)
    width = max(4, len(str(nodes - 1)))
    document["name"] = f"scale-{nodes}"
    document["nodes"][0]["count"] = nodes
    document["nodes"][0]["name"] = f"node-{{i:0{width}d}}"
    topology = build_topology(document, source=f"scale:{nodes}", workload_pods=workload_pods)
    if taint_rules:
        rules = tuple(
            ("devicetaintrules", scale_rule(i, f"node-{i % nodes:0{width}d}")) for i in range(taint_rules)
        )
        topology = dataclasses.replace(topology, workloads=topology.workloads + rules)
    return topology


def scale_rule(index: int, pool: str, *, effect: str = "None") -> JSON:
    """A one-pool DeviceTaintRule over a node's GPUs (the benchmarks' "1,000 rules in place")."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": f"scale-{index:05d}"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": pool},
            "taint": {"key": "example.com/scale", "value": str(index), "effect": effect},
        },
    }


def build_topology(
    document: Mapping[str, Any], *, source: str = "<topology>", workload_pods: int | None = None
) -> Topology:
    builder = _Builder(document, source)
    return builder.build(workload_pods=workload_pods)


def _require(condition: bool, source: str, where: str, rule: str) -> None:
    if not condition:
        raise TopologyError(f"{source}: {where}: {rule}")


class _Builder:
    def __init__(self, document: Mapping[str, Any], source: str) -> None:
        self.doc = document
        self.source = source
        self.models: dict[str, Mapping[str, Any]] = dict(document.get("deviceModels") or {})

    def build(self, *, workload_pods: int | None) -> Topology:
        name = str(self.doc.get("name") or self.source.removesuffix(".yaml"))
        namespaces = tuple(self._namespace(n) for n in self.doc.get("namespaces") or ["default"])
        nodes: list[JSON] = []
        pools: dict[tuple[str, str], tuple[list[JSON], list[JSON]]] = {}
        for index, group in enumerate(self.doc.get("nodes") or []):
            self._node_group(group, f"nodes[{index}]", nodes, pools)
        self._apply_taints(pools)
        drivers = sorted({driver for driver, _ in pools})
        pool_specs = tuple(
            PoolSpec(driver=driver, node=node, devices=tuple(devices), counter_sets=tuple(counters))
            for (driver, node), (devices, counters) in sorted(
                pools.items(), key=lambda kv: (kv[0][1], kv[0][0])
            )
        )
        classes = tuple(
            self._device_class(c, f"deviceClasses[{i}]")
            for i, c in enumerate(self.doc.get("deviceClasses") or [])
        )
        workloads = self._workloads(workload_pods)
        return Topology(
            name=name,
            namespaces=namespaces,
            nodes=tuple(nodes),
            device_classes=classes,
            pools=pool_specs,
            workloads=tuple(workloads),
            drivers=tuple(drivers),
        )

    # --- nodes and devices -------------------------------------------------------------------------------

    @staticmethod
    def _namespace(entry: Any) -> JSON:
        name = entry if isinstance(entry, str) else entry["name"]
        labels = {} if isinstance(entry, str) else dict(entry.get("labels") or {})
        labels.setdefault("kubernetes.io/metadata.name", name)
        return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}

    def _node_group(
        self,
        group: Mapping[str, Any],
        where: str,
        nodes: list[JSON],
        pools: dict[tuple[str, str], tuple[list[JSON], list[JSON]]],
    ) -> None:
        pattern = group.get("name")
        _require(
            isinstance(pattern, str),
            self.source,
            f"{where}.name",
            "a name pattern such as 'node-{i}' is required",
        )
        count = int(group.get("count", 1))
        start = int(group.get("start", 0))
        for i in range(start, start + count):
            node_name = str(pattern).format(i=i)
            nodes.append(self._node(node_name, group, i, ordinal=len(nodes)))
            per_driver_index: dict[str, int] = {}
            for d_index, entry in enumerate(group.get("devices") or []):
                self._devices(node_name, entry, f"{where}.devices[{d_index}]", per_driver_index, pools)

    def _node(self, name: str, group: Mapping[str, Any], i: int, *, ordinal: int) -> JSON:
        """The Node a kubelet registers; `ordinal` (its place among the topology's nodes) makes its
        InternalIP unique in 10.0.0.0/8, as a cluster's node addresses are."""
        labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
        labels.update({k: str(v).format(i=i) for k, v in (group.get("labels") or {}).items()})
        allocatable = {
            k: str(v)
            for k, v in (group.get("allocatable") or {"cpu": "64", "memory": "512Gi", "pods": "110"}).items()
        }
        allocatable.setdefault("ephemeral-storage", "195386010028")
        allocatable.setdefault("hugepages-1Gi", "0")
        allocatable.setdefault("hugepages-2Mi", "0")
        ready = bool(group.get("ready", True))
        node: JSON = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": labels,
                # what the kubelet and the attach/detach and TTL controllers put on every node
                "annotations": {
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
            },
            "spec": {},
            "status": {
                "capacity": {**allocatable, "ephemeral-storage": "203056560Ki"},
                "allocatable": dict(allocatable),
                "conditions": [
                    *_PRESSURE_CONDITIONS,
                    {
                        "type": "Ready",
                        "status": "True" if ready else "False",
                        "reason": "KubeletReady" if ready else "KubeletNotReady",
                        "message": "kubelet is posting ready status"
                        if ready
                        else "simulated node is not ready",
                    },
                ],
                "addresses": [
                    {"type": "InternalIP", "address": _internal_ip(ordinal)},
                    {"type": "Hostname", "address": name},
                ],
                "nodeInfo": _node_info(name),
            },
        }
        if group.get("unschedulable"):
            node["spec"]["unschedulable"] = True
        if group.get("taints"):
            node["spec"]["taints"] = [dict(t) for t in group["taints"]]
        return node

    def _devices(
        self,
        node: str,
        entry: Mapping[str, Any],
        where: str,
        per_driver_index: dict[str, int],
        pools: dict[tuple[str, str], tuple[list[JSON], list[JSON]]],
    ) -> None:
        model_name = entry.get("model")
        _require(
            model_name in self.models,
            self.source,
            f"{where}.model",
            f"must name one of deviceModels ({', '.join(self.models)})",
        )
        model = self.models[str(model_name)]
        driver = model.get("driver")
        _require(
            isinstance(driver, str) and bool(driver),
            self.source,
            f"deviceModels.{model_name}.driver",
            "is required",
        )
        driver = str(driver)
        prefix = str(model.get("namePrefix") or entry.get("namePrefix") or driver.split(".")[0])
        count = int(entry.get("count", 1))
        numa_nodes = max(1, int(entry.get("numaNodes", 1)))
        devices, counter_sets = pools.setdefault((driver, node), ([], []))
        for local in range(count):
            index = per_driver_index.get(driver, 0)
            per_driver_index[driver] = index + 1
            numa = local * numa_nodes // count
            common = self._common_attributes(driver, node, index, numa, model)
            if model.get("partitionable"):
                self._partitionable(node, driver, prefix, index, common, model, devices, counter_sets)
            else:
                device: JSON = {"name": f"{prefix}-{index}", "attributes": common}
                if model.get("capacity"):
                    device["capacity"] = copy.deepcopy(dict(model["capacity"]))
                devices.append(device)

    @staticmethod
    def _common_attributes(driver: str, node: str, index: int, numa: int, model: Mapping[str, Any]) -> JSON:
        digest = hashlib.sha1(f"{driver}/{node}/{index}".encode()).hexdigest()
        attributes: JSON = copy.deepcopy(dict(model.get("attributes") or {}))
        attributes["index"] = {"int": index}
        attributes["uuid"] = {"string": f"{driver.split('.')[0]}-{digest[:8]}-{digest[8:12]}-{digest[12:16]}"}
        attributes[NUMA_ATTRIBUTE] = {"int": numa}
        bus = (0x18 if driver.startswith("gpu") else 0x80) + index * 8 + numa * 0x40
        attributes[PCI_BUS_ID_ATTRIBUTE] = {"string": f"0000:{bus % 256:02x}:00.0"}
        if driver.startswith("nic"):
            mac = ":".join(digest[i : i + 2] for i in range(0, 12, 2))
            attributes["macAddress"] = {"string": "02" + mac[2:]}
        return attributes

    def _partitionable(
        self,
        node: str,
        driver: str,
        prefix: str,
        index: int,
        common: JSON,
        model: Mapping[str, Any],
        devices: list[JSON],
        counter_sets: list[JSON],
    ) -> None:
        """A MIG-style GPU: one counter set per physical GPU; the full GPU and each partition consume it."""
        spec = model["partitionable"]
        memory = str(spec.get("memory", "40Gi"))
        slices = int(spec.get("slices", 7))
        counter_set = f"{prefix}-{index}-counters"
        counter_sets.append(
            {"name": counter_set, "counters": {"memory": {"value": memory}, "slices": {"value": str(slices)}}}
        )
        full: JSON = {
            "name": f"{prefix}-{index}",
            "attributes": {**copy.deepcopy(common), "type": {"string": "gpu"}, "profile": {"string": "full"}},
            "capacity": {"memory": {"value": memory}},
            "consumesCounters": [
                {
                    "counterSet": counter_set,
                    "counters": {"memory": {"value": memory}, "slices": {"value": str(slices)}},
                }
            ],
        }
        devices.append(full)
        for profile in spec.get("profiles") or []:
            profile_name = str(profile["name"])
            short = profile_name.split(".")[0]
            for m in range(int(profile.get("count", 1))):
                attrs = copy.deepcopy(common)
                attrs["type"] = {"string": "mig"}
                attrs["profile"] = {"string": profile_name}
                attrs["parentIndex"] = {"int": index}
                attrs.pop("uuid", None)
                attrs["uuid"] = {"string": f"MIG-{common['uuid']['string']}-{short}-{m}"}
                devices.append(
                    {
                        "name": f"{prefix}-{index}-mig-{short}-{m}",
                        "attributes": attrs,
                        "capacity": {"memory": {"value": str(profile["memory"])}},
                        "consumesCounters": [
                            {
                                "counterSet": counter_set,
                                "counters": {
                                    "memory": {"value": str(profile["memory"])},
                                    "slices": {"value": str(profile["slices"])},
                                },
                            }
                        ],
                    }
                )

    def _apply_taints(self, pools: dict[tuple[str, str], tuple[list[JSON], list[JSON]]]) -> None:
        for t_index, taint in enumerate(self.doc.get("driverTaints") or []):
            where = f"driverTaints[{t_index}]"
            key = (str(taint.get("driver")), str(taint.get("node")))
            _require(key in pools, self.source, where, f"no pool for driver {key[0]!r} on node {key[1]!r}")
            devices = pools[key][0]
            matching = [d for d in devices if d["name"] == taint.get("device")]
            _require(
                bool(matching),
                self.source,
                f"{where}.device",
                f"no device {taint.get('device')!r} in that pool",
            )
            entry = {"key": str(taint["key"]), "effect": str(taint.get("effect", "NoSchedule"))}
            if taint.get("value") is not None:
                entry["value"] = str(taint["value"])
            matching[0].setdefault("taints", []).append(entry)

    # --- classes and workloads ---------------------------------------------------------------------------

    def _device_class(self, entry: Mapping[str, Any], where: str) -> JSON:
        _require(isinstance(entry.get("name"), str), self.source, f"{where}.name", "is required")
        spec: JSON = {"selectors": [{"cel": {"expression": str(e)}} for e in entry.get("selectors") or []]}
        if entry.get("extendedResourceName"):
            spec["extendedResourceName"] = str(entry["extendedResourceName"])
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": entry["name"]},
            "spec": spec,
        }

    def _workloads(self, workload_pods: int | None) -> list[tuple[str, JSON]]:
        out: list[tuple[str, JSON]] = []
        for index, obj in enumerate(self.doc.get("workloads") or []):
            where = f"workloads[{index}]"
            _require(isinstance(obj, dict) and "kind" in obj, self.source, f"{where}.kind", "is required")
            plural = _PLURALS.get(obj["kind"])
            _require(
                plural is not None, self.source, f"{where}.kind", f"must be one of {', '.join(_PLURALS)}"
            )
            obj = copy.deepcopy(obj)
            obj.setdefault("apiVersion", _API_VERSIONS[obj["kind"]])
            out.append((str(plural), obj))
        generated = self.doc.get("generatedWorkloads") or {}
        count = int(generated.get("count", 0)) if workload_pods is None else workload_pods
        if count > 0:
            out += list(generated_workloads(count, namespace=str(generated.get("namespace", "bench"))))
        return out


_PRESSURE_CONDITIONS: tuple[JSON, ...] = tuple(
    {"type": kind, "status": "False", "reason": reason, "message": message}
    for kind, reason, message in (
        ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    )
)


def _internal_ip(ordinal: int) -> str:
    """The `ordinal`-th node's address, from 10.0.1.1 on, skipping each /24's .0 and .255."""
    subnet, host = divmod(ordinal, 254)
    subnet += 1
    return f"10.{subnet // 256 % 256}.{subnet % 256}.{host + 1}"


def _node_info(name: str) -> JSON:
    digest = hashlib.sha1(name.encode()).hexdigest()
    return {
        "machineID": digest[:32],
        "systemUUID": f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}",
        "bootID": f"{digest[8:16]}-{digest[16:20]}-{digest[20:24]}-{digest[24:28]}-{digest[28:40]}",
        "kernelVersion": "6.8.0-simcluster",
        "osImage": "Simulated Linux 24.04",
        "containerRuntimeVersion": "containerd://2.1.0",
        "kubeletVersion": "v1.37.1",
        "kubeProxyVersion": "v1.37.1",
        "operatingSystem": "linux",
        "architecture": "amd64",
    }


_PLURALS = {
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "ResourceClaim": "resourceclaims",
    "DeviceTaintRule": "devicetaintrules",
    "ReplicaSet": "replicasets",
    "Job": "jobs",
    "Pod": "pods",
    "PodDisruptionBudget": "poddisruptionbudgets",
    "PodGroup": "podgroups",
    "Namespace": "namespaces",
    "DeviceClass": "deviceclasses",
}
_API_VERSIONS = {
    "ResourceClaimTemplate": "resource.k8s.io/v1",
    "ResourceClaim": "resource.k8s.io/v1",
    "DeviceTaintRule": "resource.k8s.io/v1",
    "ReplicaSet": "apps/v1",
    "Job": "batch/v1",
    "Pod": "v1",
    "PodDisruptionBudget": "policy/v1",
    "PodGroup": "scheduling.k8s.io/v1beta1",
    "Namespace": "v1",
    "DeviceClass": "resource.k8s.io/v1",
}


def generated_workloads(
    count: int, *, namespace: str = "bench", device_class: str = "gpu.example.com"
) -> Iterable[tuple[str, JSON]]:
    """A namespace, a one-GPU template and `count` pods using it (for benchmarks on `large`)."""
    yield ("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    yield (
        "resourceclaimtemplates",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "bench-gpu", "namespace": namespace},
            "spec": {
                "spec": {
                    "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": device_class}}]}
                }
            },
        },
    )
    for i in range(count):
        yield (
            "pods",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"bench-{i:05d}", "namespace": namespace, "labels": {"app": "bench"}},
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "image": "registry.example.com/bench:1",
                            "resources": {"claims": [{"name": "gpu"}]},
                        }
                    ],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "bench-gpu"}],
                },
            },
        )
