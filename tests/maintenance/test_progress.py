"""Eviction progress as an operator watches it: who waits (with a countdown), who is being evicted,
who is gone, and where the replacements went — computed from the mirror, sent live over a websocket."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from inventory.models import Allocation, KubeObject
from maintenance.models import Maintenance
from maintenance.progress import affected_pods, maintenance_progress, owner_pods
from maintenance.routing import websocket_urlpatterns

GPU = "gpu.example.com"
T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def pod(name: str, uid: str, *, owner: str = "rs-uid", phase: str = "Running", created: str = "2026-11-29T11:00:00Z",
        conditions: list[dict[str, Any]] | None = None, node: str = "node-0") -> dict[str, Any]:  # fmt: skip
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", "uid": uid, "creationTimestamp": created,
                     "ownerReferences": [{"kind": "ReplicaSet", "name": "trainer", "uid": owner, "controller": True}]},
        "spec": {"nodeName": node},
        "status": {"phase": phase, "conditions": conditions or []},
    }  # fmt: skip


def claim(
    name: str, uid: str, device: str, pod_name: str, pod_uid: str, tolerations: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "ml", "uid": uid},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU}}]}},
        "status": {
            "allocation": {"devices": {"results": [
                {"request": "gpu", "driver": GPU, "pool": "node-0", "device": device, "tolerations": tolerations}]}},
            "reservedFor": [{"resource": "pods", "name": pod_name, "uid": pod_uid}],
        },
    }  # fmt: skip


def store(kind: str, obj: dict[str, Any]) -> None:
    meta = obj["metadata"]
    KubeObject.objects.update_or_create(
        kind=kind, uid=meta["uid"],
        defaults={"name": meta["name"], "namespace": meta.get("namespace", ""), "raw": obj,
                  "creation_timestamp": meta.get("creationTimestamp", "")},
    )  # fmt: skip


def world() -> Maintenance:
    """Two trainer pods on gpu-0 and gpu-1; the second tolerates the taint for 60 s."""
    store("pods", pod("trainer-a", "pod-a"))
    store("pods", pod("trainer-b", "pod-b"))
    tolerate_60 = [
        {
            "key": "example.com/maintenance",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 60,
        }
    ]
    for name, uid, device, pod_name, pod_uid, tol in [
        ("claim-a", "claim-a", "gpu-0", "trainer-a", "pod-a", []),
        ("claim-b", "claim-b", "gpu-1", "trainer-b", "pod-b", tolerate_60),
    ]:
        store("resourceclaims", claim(name, uid, device, pod_name, pod_uid, tol))
        Allocation.objects.create(claim_uid=uid, claim_namespace="ml", claim_name=name, request="gpu",
                                  driver=GPU, pool="node-0", device=device)  # fmt: skip
    m = Maintenance.objects.create(
        title="t", reason="r", taint_key="example.com/maintenance", taint_value="fw", target_effect="NoExecute",
        devices=[{"driver": GPU, "pool": "node-0", "device": d} for d in ("gpu-0", "gpu-1")],
        rules=[{"name": "dradash-x-node-0", "selector": {"driver": GPU, "pool": "node-0"}}],
        state=Maintenance.APPLIED, applied_effect="NoExecute", enforced_at=T0,
    )  # fmt: skip
    m.affected = affected_pods(maintenance=m, taint_time=T0)
    m.save()
    return m


@pytest.mark.django_db
def test_it_computes_eviction_times_from_the_claims_tolerations() -> None:
    m = world()
    times = {p["name"]: p["evict_at"] for p in m.affected}
    assert times == {"trainer-a": "2026-11-29T12:00:00Z", "trainer-b": "2026-11-29T12:01:00Z"}


@pytest.mark.django_db
def test_it_follows_pods_from_waiting_to_gone_with_replacements() -> None:
    m = world()
    progress = maintenance_progress(maintenance=m, now=T0 + timedelta(seconds=10))
    states = {p["name"]: (p["state"], p["seconds_left"]) for p in progress["pods"]}
    assert states == {"trainer-a": ("waiting", 0.0), "trainer-b": ("waiting", 50.0)}
    assert progress["counts"]["gone"] == 0 and not progress["complete"]

    disrupted = [{"type": "DisruptionTarget", "status": "True", "reason": "DeletionByDeviceTaintManager",
                  "lastTransitionTime": "2026-11-29T12:00:01Z"}]  # fmt: skip
    store("pods", pod("trainer-b", "pod-b", conditions=disrupted))
    KubeObject.objects.filter(kind="pods", uid="pod-a").delete()
    store(
        "pods", pod("trainer-sibling", "pod-s", created="2026-11-29T11:59:00Z")
    )  # ran before: not a replacement
    store("pods", pod("trainer-c", "pod-c", phase="Pending", created="2026-11-29T12:00:02Z",
                      conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]))  # fmt: skip

    progress = maintenance_progress(maintenance=m, now=T0 + timedelta(seconds=11))
    by_name = {p["name"]: p for p in progress["pods"]}
    assert by_name["trainer-a"]["state"] == "gone"
    assert by_name["trainer-a"]["replacement"] == {
        "name": "trainer-c",
        "namespace": "ml",
        "state": "unschedulable",
        "node": "node-0",
    }
    assert by_name["trainer-b"]["state"] == "evicting"
    assert progress["counts"] == {
        **progress["counts"],
        "gone": 1,
        "evicting": 1,
        "replacement_unschedulable": 1,
    }
    assert progress["percent"] == 50.0
    assert progress["bar"] == {"done": 1, "of": 2, "percent": 50.0, "label": "1 of 2 evicted"}
    assert any("marked for eviction" in item["what"] for item in progress["timeline"])


@pytest.mark.django_db
def test_it_does_not_take_a_sibling_from_the_same_second_for_a_replacement() -> None:
    m = world()
    store("pods", pod("trainer-0-twin", "pod-t", created="2026-11-29T12:00:00Z"))  # the second of T0
    m.owner_pods = owner_pods(affected=m.affected)
    m.save()
    assert "pod-t" in m.owner_pods
    KubeObject.objects.filter(kind="pods", uid="pod-a").delete()
    store("pods", pod("trainer-new", "pod-n", created="2026-11-29T12:00:00Z", node="node-1"))
    progress = maintenance_progress(maintenance=m, now=T0 + timedelta(seconds=1))
    gone = next(p for p in progress["pods"] if p["name"] == "trainer-a")
    assert gone["replacement"]["name"] == "trainer-new"


@pytest.mark.django_db
def test_it_fills_the_bar_only_as_far_as_its_counts_say() -> None:
    m = world()
    m.affected = [{**p, "evict_at": None} for p in m.affected]  # both tolerate the taint forever
    m.save()
    progress = maintenance_progress(maintenance=m, now=T0)
    assert progress["bar"] == {"done": 0, "of": 0, "percent": 0.0, "label": "no pod to evict"}
    KubeObject.objects.filter(
        kind="pods", uid="pod-a"
    ).delete()  # a tolerating pod that left is not "evicted"
    progress = maintenance_progress(maintenance=m, now=T0)
    assert progress["bar"]["done"] == 0 and progress["counts"]["gone"] == 1

    nothing = Maintenance.objects.create(title="t", reason="r", taint_key="k", target_effect="NoExecute")
    assert maintenance_progress(maintenance=nothing, now=T0)["bar"]["percent"] == 0.0


@pytest.mark.django_db
def test_it_lists_the_pods_in_motion_first_when_there_are_many() -> None:
    m = world()
    m.affected = [{**m.affected[0], "uid": f"gone-{i}", "name": f"gone-{i}"} for i in range(300)] + m.affected
    m.save()
    progress = maintenance_progress(maintenance=m, now=T0)
    assert len(progress["pods"]) == 200 and progress["pods_total"] == 302
    assert progress["pods"][0]["state"] == "waiting" and progress["counts"]["gone"] == 300
    assert progress["bar"] == {"done": 300, "of": 302, "percent": 99.3, "label": "300 of 302 evicted"}


@pytest.mark.django_db(transaction=True)
async def test_it_sends_the_current_state_on_connect_and_updates_live(django_user_model: Any) -> None:
    from asgiref.sync import sync_to_async
    from channels.layers import get_channel_layer

    m = await sync_to_async(world)()
    user = await sync_to_async(django_user_model.objects.create_user)("viewer1", password="x")
    communicator = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns), f"/ws/maintenance/{m.id}/", headers=[(b"host", b"127.0.0.1")]
    )
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected
    first = await communicator.receive_json_from(timeout=5)
    assert first["type"] == "progress" and first["progress"]["counts"]["total"] == 2
    assert first["progress"]["state"] == "applied" and "undo-delete" in first["progress"]["actions"]

    await sync_to_async(KubeObject.objects.filter(kind="pods", uid="pod-a").delete)()
    await get_channel_layer().group_send(
        "inventory", {"type": "inventory.changed", "kinds": ["pods"], "changes": []}
    )
    update = await communicator.receive_json_from(timeout=5)
    assert update["progress"]["counts"]["gone"] == 1
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_it_closes_the_progress_socket_for_anonymous_users() -> None:
    from django.contrib.auth.models import AnonymousUser

    communicator = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns), "/ws/maintenance/mnope/", headers=[(b"host", b"127.0.0.1")]
    )
    communicator.scope["user"] = AnonymousUser()
    await communicator.connect()
    closed = await communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4401}
