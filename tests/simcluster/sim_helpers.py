"""Helpers for tests that drive the simulated controllers (not a test module)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from simcluster.controllers import Controllers, FakeClock
from simcluster.testing import SimCluster, run_simcluster

JSON = dict[str, Any]


@contextlib.contextmanager
def running(
    topology: str | None = "tiny", **options: Any
) -> Iterator[tuple[SimCluster, Controllers, FakeClock]]:
    """A running simcluster whose controllers use a fake clock and write rule status without delay."""
    clock = FakeClock()
    options.setdefault("rule_status_period", 0)
    with run_simcluster(topology=topology, clock=clock, **options) as cluster:
        settle(cluster)
        yield cluster, cluster.controllers, clock


def settle(cluster: SimCluster) -> None:
    controllers: Controllers = cluster.controllers
    assert controllers.wait_idle(60), "controllers did not settle"
    assert controllers.errors() == {}


def pods(cluster: SimCluster, *, app: str | None = None, namespace: str | None = None) -> list[JSON]:
    found = cluster.store.list("pods", namespace=namespace)
    return [p for p in found if app is None or (p["metadata"].get("labels") or {}).get("app") == app]


def claims_of(cluster: SimCluster, pod: JSON) -> list[JSON]:
    status = pod.get("status") or {}
    names = [s["resourceClaimName"] for s in status.get("resourceClaimStatuses") or []]
    names += [
        r["resourceClaimName"]
        for r in (pod["spec"].get("resourceClaims") or [])
        if r.get("resourceClaimName")
    ]
    if status.get("extendedResourceClaimStatus"):
        names.append(status["extendedResourceClaimStatus"]["resourceClaimName"])
    return [cluster.store.get("resourceclaims", n, namespace=pod["metadata"]["namespace"]) for n in names]


def devices_of(claim: JSON) -> list[tuple[str, str, str]]:
    results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get(
        "results"
    ) or []
    return [(r["driver"], r["pool"], r["device"]) for r in results]


def condition(obj: JSON, kind: str) -> JSON | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind), None)


def template_pod(
    name: str, template: str, *, namespace: str = "ml", claim: str = "gpu", labels: JSON | None = None
) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {"app": name}},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example.com/x:1",
                    "resources": {"claims": [{"name": claim}]},
                }
            ],
            "resourceClaims": [{"name": claim, "resourceClaimTemplateName": template}],
        },
    }


def claim_template(
    name: str, requests: list[JSON], *, namespace: str = "ml", constraints: list[JSON] | None = None
) -> JSON:
    devices: JSON = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": {"devices": devices}},
    }
