"""A small mirrored world written straight into the database, for page, live and auth tests.

Rows are shaped as inventory.mirror writes them (see inventory/models.py), so the pages can be tested
without a cluster. The e2e test uses the real mirror against simcluster instead.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group, User

from inventory.mirror.derive.attributes import indexed_lines
from inventory.mirror.writer import index_key
from inventory.models import Allocation, Claim, Device, DeviceAttribute, KubeObject, Pool, WatchState

DRIVER = "gpu.example.com"
NIC_DRIVER = "nic.example.com"


def make_user(username: str = "ada", *, role: str = "viewer", password: str = "pw-for-tests-1") -> User:
    user = User.objects.create_user(username=username, password=password)
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def kube(kind: str, name: str, raw: dict[str, Any], *, namespace: str = "", uid: str = "") -> KubeObject:
    uid = uid or f"uid-{kind}-{namespace}-{name}"
    meta = raw.setdefault("metadata", {})
    meta.setdefault("name", name)
    meta.setdefault("uid", uid)
    meta.setdefault("creationTimestamp", "2026-11-01T10:00:00Z")
    if namespace:
        meta.setdefault("namespace", namespace)
    return KubeObject.objects.create(
        kind=kind,
        uid=uid,
        name=name,
        namespace=namespace,
        resource_version="1",
        creation_timestamp=meta["creationTimestamp"],
        index_key=index_key(kind, raw),  # as the mirror writes it (a pod's node, a slice's pool)
        raw=raw,
    )


def device(
    name: str, *, node: str = "node-1", driver: str = DRIVER, numa: int | None = 0, **fields: Any
) -> Device:
    pool = fields.pop("pool", node)
    classes = fields.pop("classes", ["gpu.example.com" if driver == DRIVER else "nic.example.com"])
    attributes = fields.pop("attributes", {"model": {"string": "h200"}})
    if numa is not None:
        attributes["resource.kubernetes.io/numaNode"] = {"int": numa}
    flat = {k.rpartition("/")[2]: str(next(iter(v.values()))) for k, v in attributes.items()} | {
        k if "/" in k else f"{driver}/{k}": str(next(iter(v.values()))) for k, v in attributes.items()
    }
    row = Device.objects.create(
        slice_uid=f"slice-{driver}-{pool}".replace("/", "-"),
        slice_name=f"{pool}-{driver}",
        driver=driver,
        pool=pool,
        name=name,
        node_name=node,
        node_selection="node",
        attributes=attributes,
        attributes_flat=flat,
        # As inventory.mirror.derive writes it: one "key=value" line per flat attribute.
        attribute_index="\n" + "".join(f"{k}={v}\n" for k, v in flat.items()),
        capacity=fields.pop("capacity", {"memory": {"value": "141Gi"}}),
        numa_node=numa,
        classes=classes,
        class_index=" " + " ".join(classes) + " ",
        **fields,
    )
    # The attribute filter's indexed lines, as inventory.mirror.derive.attributes writes them.
    DeviceAttribute.objects.bulk_create(
        DeviceAttribute(device=row, line=line, own=own)
        for line, own in indexed_lines(row.driver, row.attribute_index)
    )
    return row


def taint(key: str, effect: str, *, value: str = "", rule: str = "") -> dict[str, Any]:
    return {
        "key": key,
        "value": value,
        "effect": effect,
        "effectiveEffect": effect if effect in ("None", "NoSchedule", "NoExecute") else "None",
        "knownEffect": effect in ("None", "NoSchedule", "NoExecute"),
        "timeAdded": "2026-11-02T10:00:00Z",
        "source": "rule" if rule else "slice",
        "rule": rule,
    }


def taint_fields(*taints: dict[str, Any]) -> dict[str, Any]:
    effects = {t["effectiveEffect"] for t in taints}
    level = max(({"None": 1, "NoSchedule": 2, "NoExecute": 3}[e] for e in effects), default=0)
    return {
        "taints": list(taints),
        "tainted": bool(taints),
        "taint_none": "None" in effects,
        "taint_no_schedule": "NoSchedule" in effects,
        "taint_no_execute": "NoExecute" in effects,
        "max_taint_effect": ["", "None", "NoSchedule", "NoExecute"][level],
    }


def small_world() -> dict[str, Any]:
    """Two nodes, four GPUs and two NICs; one claim allocated and reserved for a pod; one taint rule."""
    for cls, driver in (("gpu.example.com", DRIVER), ("nic.example.com", NIC_DRIVER)):
        kube(
            "deviceclasses",
            cls,
            {"spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}},
        )
    Pool.objects.create(
        driver=DRIVER,
        name="node-1",
        generation=1,
        slice_count=1,
        expected_slice_count=1,
        complete=True,
        node_name="node-1",
        device_count=2,
    )
    rule = kube(
        "devicetaintrules",
        "drain-gpu-1",
        {
            "spec": {
                "deviceSelector": {"driver": DRIVER, "pool": "node-1", "device": "gpu-1"},
                "taint": {"key": "example.com/maintenance", "value": "drain", "effect": "NoExecute"},
            },
            "status": {
                "conditions": [
                    {
                        "type": "EvictionInProgress",
                        "status": "True",
                        "reason": "PodsPendingEviction",
                        "message": "1 pod to evict",
                    }
                ]
            },
        },
    )
    claim_raw = {
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": [{"request": "gpu", "driver": DRIVER, "pool": "node-1", "device": "gpu-0"}]
                }
            },
            "reservedFor": [{"resource": "pods", "name": "trainer-0", "uid": "uid-pod-trainer-0"}],
            "devices": [
                {
                    "driver": DRIVER,
                    "pool": "node-1",
                    "device": "gpu-0",
                    "conditions": [
                        {
                            "type": "Ready",
                            "status": "True",
                            "reason": "Prepared",
                            "message": "ok",
                            "lastTransitionTime": "2026-11-02T10:00:00Z",
                        }
                    ],
                    "networkData": {
                        "interfaceName": "eth1",
                        "ips": ["10.0.0.5/24"],
                        "hardwareAddress": "aa:bb",
                    },
                }
            ],
        },
    }
    claim_obj = kube("resourceclaims", "train", claim_raw, namespace="ml")
    kube(
        "pods",
        "trainer-0",
        {"spec": {"nodeName": "node-1"}, "status": {"phase": "Running"}},
        namespace="ml",
        uid="uid-pod-trainer-0",
    )
    Claim.objects.create(
        uid=claim_obj.uid,
        namespace="ml",
        name="train",
        state="reserved",
        request_count=1,
        device_count=1,
        reserved_for=[{"resource": "pods", "name": "trainer-0", "uid": "uid-pod-trainer-0"}],
        device_classes=["gpu.example.com"],
        created="2026-11-01T10:00:00Z",
    )
    Allocation.objects.create(
        claim_uid=claim_obj.uid,
        claim_namespace="ml",
        claim_name="train",
        request="gpu",
        driver=DRIVER,
        pool="node-1",
        device="gpu-0",
    )
    allocation = {
        "claimUid": claim_obj.uid,
        "namespace": "ml",
        "claim": "train",
        "request": "gpu",
        "subrequest": "",
        "adminAccess": False,
        "shareID": "",
        "consumedCapacity": {},
        "pods": [{"namespace": "ml", "name": "trainer-0", "uid": "uid-pod-trainer-0"}],
        "extendedResource": "",
    }
    gpu0 = device(
        "gpu-0",
        allocation_state="allocated",
        allocations=[allocation],
        claim_namespace="ml",
        claim_name="train",
        health="Healthy",
        statuses=[{"namespace": "ml", "claim": "train", "shareID": "", **claim_raw["status"]["devices"][0]}],
    )
    gpu1 = device(
        "gpu-1",
        numa=1,
        **taint_fields(taint("example.com/maintenance", "NoExecute", value="drain", rule="drain-gpu-1")),
    )
    device("gpu-0", node="node-2", numa=0, **taint_fields(taint("gpu.example.com/ecc", "NoSchedule")))
    device("gpu-1", node="node-2", numa=1)
    device("nic-0", node="node-1", driver=NIC_DRIVER, numa=0, pool="node-1-nic")
    device("nic-1", node="node-1", driver=NIC_DRIVER, numa=1, pool="node-1-nic")
    kube("nodes", "node-1", {"metadata": {"labels": {"zone": "a"}}})
    kube("nodes", "node-2", {"metadata": {"labels": {"zone": "b"}}})
    WatchState.objects.create(kind="resourceslices", state="synced", resource_version="100", object_count=3)
    return {"gpu0": gpu0, "gpu1": gpu1, "rule": rule, "claim": claim_obj}
