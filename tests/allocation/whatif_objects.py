"""A small hand-made cluster for the what-if tests, written into the inventory mirror's rows.

node-a: gpu-0 (A100, held by claim train-0 for pod train-0), gpu-1 (A100)
node-b: gpu-0 (H100), gpu-1 (H100)
DeviceClass gpu.example.com serves the extended resource example.com/gpu.
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

Obj = dict[str, Any]
DRIVER = "gpu.example.com"
_uids = itertools.count(1)

PLURAL = {
    "DeviceClass": "deviceclasses",
    "ResourceSlice": "resourceslices",
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "DeviceTaintRule": "devicetaintrules",
    "Pod": "pods",
    "Node": "nodes",
    "PodDisruptionBudget": "poddisruptionbudgets",
}


def _meta(name: str, namespace: str = "", **extra: Any) -> Obj:
    m: Obj = {
        "name": name,
        "uid": f"uid-{name}-{next(_uids)}",
        "resourceVersion": "1",
        "creationTimestamp": "2026-11-01T00:00:00Z",
    }
    if namespace:
        m["namespace"] = namespace
    m.update(extra)
    return m


def device_class(
    name: str = DRIVER, *, extended: str | None = "example.com/gpu", created: str = "2026-11-01T00:00:00Z"
) -> Obj:
    spec: Obj = {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": _meta(name, creationTimestamp=created),
        "spec": spec,
    }


def node(name: str, **labels: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _meta(name, labels={"kubernetes.io/hostname": name, **labels}),
        "status": {"allocatable": {"cpu": "8"}},
    }


def gpu_slice(node_name: str, model: str, count: int = 2, taints: list[Obj] | None = None) -> Obj:
    devices = []
    for i in range(count):
        d: Obj = {
            "name": f"gpu-{i}",
            "attributes": {"model": {"string": model}, "index": {"int": i}},
            "capacity": {"memory": {"value": "80Gi"}},
        }
        if taints and i == 0:
            d["taints"] = taints
        devices.append(d)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": _meta(f"{node_name}-{DRIVER}"),
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def claim_spec(count: int = 1, selector: str | None = None, tolerations: list[Obj] | None = None) -> Obj:
    exactly: Obj = {"deviceClassName": DRIVER, "allocationMode": "ExactCount", "count": count}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    if tolerations:
        exactly["tolerations"] = tolerations
    return {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}


def claim(name: str, namespace: str = "default", **kw: Any) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": _meta(name, namespace),
        "spec": claim_spec(**kw),
    }


def allocated_claim(
    name: str,
    node_name: str,
    device: str,
    pod: Obj | None,
    *,
    tolerations: list[Obj] | None = None,
    namespace: str = "default",
) -> Obj:
    c = claim(name, namespace, tolerations=tolerations)
    result: Obj = {"request": "gpu", "driver": DRIVER, "pool": node_name, "device": device}
    if tolerations:
        result["tolerations"] = tolerations
    c["status"] = {
        "allocation": {
            "devices": {"results": [result]},
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                ]
            },
        },
        "reservedFor": [{"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}]
        if pod
        else [],
    }
    return c


def template(name: str, namespace: str = "default", **kw: Any) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": _meta(name, namespace),
        "spec": {"spec": claim_spec(**kw)},
    }


def pod(
    name: str,
    namespace: str = "default",
    *,
    node_name: str | None = None,
    labels: dict[str, str] | None = None,
    claims: list[Obj] | None = None,
    resources: dict[str, str] | None = None,
    node_selector: dict[str, str] | None = None,
) -> Obj:
    container: Obj = {"name": "main", "image": "busybox"}
    if resources:
        container["resources"] = {"requests": resources, "limits": resources}
    spec: Obj = {"containers": [container]}
    if claims:
        spec["resourceClaims"] = claims
    if node_name:
        spec["nodeName"] = node_name
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _meta(name, namespace, labels=labels or {}),
        "spec": spec,
        "status": {"phase": "Running" if node_name else "Pending"},
    }


def pdb(name: str, match: dict[str, str], *, current: int, desired: int, namespace: str = "default") -> Obj:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": _meta(name, namespace),
        "spec": {"selector": {"matchLabels": match}, "minAvailable": desired},
        "status": {"currentHealthy": current, "desiredHealthy": desired, "expectedPods": current},
    }


def taint_rule(name: str, selector: Obj, key: str, effect: str, value: str = "") -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": _meta(name),
        "spec": {
            "deviceSelector": selector,
            "taint": {"key": key, "value": value, "effect": effect, "timeAdded": "2026-11-01T00:00:00Z"},
        },
    }


def store(*objects: Obj, versions: dict[str, str] | None = None) -> None:
    """Write objects into the mirror's rows (as `manage.py mirror` would) and the watch versions."""
    from inventory.models import KubeObject, WatchState

    for obj in objects:
        m = obj["metadata"]
        KubeObject.objects.create(
            kind=PLURAL[obj["kind"]],
            uid=m["uid"],
            name=m["name"],
            namespace=m.get("namespace", ""),
            resource_version=m.get("resourceVersion", ""),
            raw=obj,
        )
    for kind, rv in (versions or {}).items():
        WatchState.objects.update_or_create(kind=kind, defaults={"resource_version": rv, "state": "synced"})


def small_cluster() -> dict[str, Obj]:
    """node-a (A100 ×2, gpu-0 held by pod train-0), node-b (H100 ×2), a template and a PDB."""
    train = pod(
        "train-0",
        node_name="node-a",
        labels={"app": "train"},
        claims=[{"name": "gpu", "resourceClaimName": "train-0"}],
    )
    objs = {
        "class": device_class(),
        "node-a": node("node-a", zone="z1"),
        "node-b": node("node-b", zone="z2"),
        "slice-a": gpu_slice("node-a", "A100"),
        "slice-b": gpu_slice("node-b", "H100"),
        "train-0": train,
        "claim-train-0": allocated_claim("train-0", "node-a", "gpu-0", train),
        "template": template("one-gpu"),
    }
    return objs


# --------------------------------------------------------------------------- a database threads can share


@pytest.fixture(scope="session")
def _migrated_sqlite_file(tmp_path_factory: pytest.TempPathFactory, django_db_blocker: Any) -> Path:
    """A migrated SQLite file, made once per session and copied for each test that needs one."""
    from django.core.management import call_command
    from django.db import connections

    path = tmp_path_factory.mktemp("whatif-db") / "template.sqlite3"
    conn = connections["default"]
    if conn.vendor != "sqlite":
        return path
    with django_db_blocker.unblock(), _pointed_at(conn, path):
        call_command("migrate", verbosity=0)
    return path


@contextmanager
def _pointed_at(conn: Any, path: Path) -> Iterator[None]:
    """Point `conn` (and, through its shared settings dict, every thread's) at the SQLite file `path`.

    Django ignores close() on an in-memory database (closing would destroy it), so its raw
    connection is set aside and put back afterwards.
    """
    old_name, saved = conn.settings_dict["NAME"], conn.connection
    conn.connection = None
    conn.settings_dict["NAME"] = str(path)
    try:
        yield
    finally:
        conn.close()
        conn.settings_dict["NAME"] = old_name
        conn.connection = saved


@pytest.fixture
def shared_db(
    transactional_db: None, _migrated_sqlite_file: Path, tmp_path: Path, django_db_blocker: Any
) -> Iterator[str]:
    """A database that worker threads and worker processes can reach too; yields its DATABASE_URL.

    PostgreSQL (DATABASE_URL set) already is one. SQLite's in-memory test database is not (shared-cache
    in-memory SQLite locks whole tables and fails instead of waiting), so on SQLite every connection
    of this process is pointed at a fresh copy of a migrated file — as the embedded default runs.
    """
    from django.db import connections

    conn = connections["default"]
    if conn.vendor != "sqlite":
        s = conn.settings_dict
        yield f"postgres://{s['USER']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"
        return
    path = tmp_path / "whatif.sqlite3"
    shutil.copy(_migrated_sqlite_file, path)
    with _pointed_at(conn, path):
        yield f"sqlite:///{path}"
