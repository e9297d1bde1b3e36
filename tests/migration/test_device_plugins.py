"""Device plugin → DRA assistant (issue 13 item 1): the report, the page, the API and the plugin_removal
what-if, on hand-made objects and on the demo topology as simcluster's scheduler placed it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from allocation.snapshot import snapshot_load
from allocation.whatif.kinds.plugin_removal import plugin_removal
from inventory.kube import MIRRORED_KINDS
from migration.device_plugins import assistant_report
from tests.inventory.factories import write
from tests.simcluster.sim_helpers import running

GPU = "example.com/gpu"


def cls(name: str, created: str, extended: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": []}
    if extended:
        spec["extendedResourceName"] = extended
    return {"metadata": {"name": name, "creationTimestamp": created}, "spec": spec}


def node(name: str, gpus: int = 0) -> dict[str, Any]:
    allocatable = {"cpu": "8", "pods": "110", **({GPU: str(gpus)} if gpus else {})}
    return {"metadata": {"name": name}, "status": {"allocatable": allocatable}}


def pod(name: str, count: int, node_name: str = "", dra_claim: str = "") -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Running" if node_name else "Pending"}
    if dra_claim:
        status["extendedResourceClaimStatus"] = {
            "resourceClaimName": dra_claim,
            "requestMappings": [
                {"containerName": "main", "resourceName": GPU, "requestName": "container-0-request-0"}
            ],
        }
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            **({"nodeName": node_name} if node_name else {}),
            "containers": [{"name": "main", "resources": {"limits": {GPU: str(count)}}}],
        },
        "status": status,
    }


def test_it_says_which_class_wins_a_contested_name_and_why() -> None:
    classes = [
        cls("old-gpu", "2026-01-01T00:00:00Z", GPU),
        cls("b-gpu", "2026-03-01T00:00:00Z", GPU),
        cls("a-gpu", "2026-03-01T00:00:00Z", GPU),
    ]
    report = assistant_report(classes=classes, nodes=[], pods=[], devices_of_class=lambda c: ({}, 0))
    (gpu,) = [r for r in report.resources if r.name == GPU]
    assert gpu.device_class == "a-gpu" and gpu.mapping == "explicit" and gpu.conflict
    verdicts = {c.device_class: (c.wins, c.why) for c in gpu.contenders}
    assert verdicts["a-gpu"] == (True, "created at the same time as b-gpu; its name sorts first")
    assert verdicts["b-gpu"] == (False, "same creationTimestamp as a-gpu, whose name sorts first")
    assert verdicts["old-gpu"] == (False, "older than a-gpu")
    assert any("a-gpu wins" in n for n in report.notes)


def test_it_sorts_pods_by_backend_and_flags_nodes_with_both_backends() -> None:
    report = assistant_report(
        classes=[cls("gpu.example.com", "2026-01-01T00:00:00Z", GPU)],
        nodes=[node("dp-only", 4), node("dp-and-dra", 4), node("dra-only")],
        pods=[
            pod("on-plugin", 2, "dp-only"),
            pod("on-dra", 1, "dra-only", dra_claim="on-dra-extended-resources-x"),
            pod("waiting", 3),
        ],
        devices_of_class=lambda c: ({"dp-and-dra": 4, "dra-only": 8}, 2),
    )
    (gpu,) = [r for r in report.resources if r.name == GPU]
    assert [(p.name, p.backend, p.moves) for p in gpu.pods] == [
        ("on-plugin", "device plugin", True),
        ("waiting", "pending", True),
        ("on-dra", "DRA", False),
    ]
    assert [(n.name, n.allocatable, n.used, n.dra_devices) for n in gpu.plugin_nodes] == [
        ("dp-and-dra", 4, 0, 4),
        ("dp-only", 4, 2, 0),
    ]
    assert [n.name for n in gpu.both] == ["dp-and-dra"]
    assert gpu.dra_nodes == {"dra-only": 8} and gpu.shared_devices == 2
    # every class's implicit name is listed only when a pod asks for it
    assert [r.name for r in report.resources] == [GPU]


@pytest.fixture(scope="module")
def demo_objects() -> Iterator[dict[str, list[dict[str, Any]]]]:
    with running("demo") as (cluster, _, _):
        yield {kind: cluster.store.list(kind) for kind in MIRRORED_KINDS}


@pytest.fixture
def mirrored_demo(db: Any, demo_objects: dict[str, list[dict[str, Any]]]) -> None:
    write(*((kind, obj) for kind, objs in demo_objects.items() for obj in objs))


@pytest.fixture
def viewer(db: Any) -> Client:
    user = User.objects.create_user("viewer-mig", password="x")
    client = Client()
    client.force_login(user)
    return client


def test_the_page_shows_which_demo_pods_would_move_from_the_device_plugin_to_dra(
    mirrored_demo: None, viewer: Client
) -> None:
    page = viewer.get("/migration/device-plugins/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-resource="example.com/gpu"' in html
    assert "Both backends on <bdi>legacy-01</bdi>" in html
    assert html.count('data-backend="device plugin"') == 5  # cuda-legacy replicas and the wide pod, one waits
    assert html.count('data-backend="pending"') == 1
    assert html.count('data-backend="DRA"') == 3  # legacy-gpu, through extended-resource claims
    assert 'name="kind" value="plugin_removal"' in html
    assert "<script>" not in html and "style=" not in html

    api = viewer.get("/api/migration/device-plugins/").json()
    (gpu,) = [r for r in api["resources"] if r["name"] == GPU]
    assert gpu["device_class"] == "gpu.example.com" and gpu["both_backends_nodes"] == ["legacy-01"]
    assert sorted(n["name"] for n in gpu["device_plugin_nodes"]) == ["legacy-00", "legacy-01"]
    assert sum(p["moves_to_dra"] for p in gpu["pods"]) == 6
    assert "Kueue" in api["quota_note"]


def test_removing_the_plugin_moves_pods_to_dra_where_devices_are_and_says_who_does_not_fit(
    mirrored_demo: None,
) -> None:
    answer = plugin_removal(snapshot=snapshot_load(), resource=GPU, nodes=[])
    assert answer["nodes_removed"] == ["legacy-00", "legacy-01"]
    assert answer["device_class"] == "gpu.example.com"
    pods = {p["name"]: p for p in answer["pods"]}
    assert len(pods) == 6
    # the pods may only go to the two legacy nodes (nodeSelector); only legacy-01 has DRA GPUs: 4 of them
    placed = [p for p in pods.values() if p["fits"]]
    assert {p["node"] for p in placed} == {"legacy-01"} and {p["backend"] for p in placed} == {"DRA"}
    assert sum(p["count"] for p in placed) <= 4
    for p in placed:
        assert all(d["pool"] == "legacy-01" and d["driver"] == "gpu.example.com" for d in p["devices"])
    assert not answer["all_fit"]
    misfits = [p for p in pods.values() if not p["fits"]]
    assert misfits and all("not enough devices through DRA" in p["reason"] for p in misfits)
    # legacy-gpu keeps its DRA claims
    assert sorted(s["backend"] for s in answer["staying"]) == ["DRA", "DRA", "DRA"]


def test_removing_the_plugin_from_one_node_only_keeps_the_other_plugin_serving(mirrored_demo: None) -> None:
    answer = plugin_removal(snapshot=snapshot_load(), resource=GPU, nodes=["legacy-01"])
    assert answer["nodes_removed"] == ["legacy-01"]
    backends = {p["name"]: (p["fits"], p["backend"], p["node"]) for p in answer["pods"]}
    # pods bound to legacy-01 stay on legacy-01, now through DRA
    on_01 = [p for p in answer["pods"] if p["was_node"] == "legacy-01"]
    assert on_01 and all(p["fits"] and p["node"] == "legacy-01" and p["backend"] == "DRA" for p in on_01)
    assert any(s["why"] == "its node keeps the device plugin" for s in answer["staying"])
    assert backends  # the pending pod is tried too
    assert any(p["was_backend"] == "pending" for p in answer["pods"])


def test_the_what_if_refuses_a_name_that_is_not_an_extended_resource(viewer: Client) -> None:
    from allocation.services import whatif_input_normalize
    from allocation.whatif.base import WhatIfInputError

    with pytest.raises(WhatIfInputError) as error:
        whatif_input_normalize(kind="plugin_removal", input={"resource": "cpu"})
    assert error.value.field == "input.resource"
    with pytest.raises(WhatIfInputError) as error:
        whatif_input_normalize(kind="plugin_removal", input={"resource": GPU, "nodes": ["nope"]})
    assert error.value.field == "input.nodes[0]"


def test_feasibility_counts_the_device_plugin_devices_other_pods_hold(mirrored_demo: None) -> None:
    """The scheduler's NodeResourcesFit: a node's device-plugin devices held by other pods are not free."""
    from allocation.whatif.kinds.feasibility import feasibility
    from allocation.whatif.subject import resolve_subject

    snapshot = snapshot_load()
    legacy = [p for p in snapshot.pods if (p["metadata"].get("labels") or {}).get("app") == "cuda-legacy"]
    (pending,) = [p for p in legacy if not p["spec"].get("nodeName")]
    question = {
        "source": "object",
        "kind": "Pod",
        "namespace": "default",
        "name": pending["metadata"]["name"],
    }
    answer = feasibility(snapshot=snapshot, subject=resolve_subject(question, snapshot))
    assert answer["feasible"] is False
    reasons = {n["node"]: n["reason"] for n in answer["infeasible_nodes"]}
    for node in ("legacy-00", "legacy-01"):
        assert reasons[node].startswith("Insufficient example.com/gpu (device plugin: 4 of 4 in use"), (
            reasons[node]
        )

    # A bound pod asked about does not compete with itself: it fits where it runs.
    wide = snapshot.find("Pod", "default", "cuda-legacy-wide")
    assert wide is not None
    question = {"source": "object", "kind": "Pod", "namespace": "default", "name": "cuda-legacy-wide"}
    answer = feasibility(snapshot=snapshot, subject=resolve_subject(question, snapshot))
    assert [n["node"] for n in answer["feasible_nodes"]] == [wide["spec"]["nodeName"]]
