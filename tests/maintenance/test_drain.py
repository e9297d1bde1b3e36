"""The PDB-aware drain on the demo topology (issue 14): draining never lets ml/trainer drop below its
minAvailable, waits "blocked by PDB" when the budget says no, ends with every affected pod gone from the
devices and every replacement running elsewhere; two drivers evict each pod once; a driver that dies is
replaced and the drain finishes."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from inventory.kube import connect
from inventory.mirror.runner import Mirror
from maintenance import states
from maintenance.drain import drain_document, drain_step, maintenance_drain_start
from maintenance.models import AuditEntry, Drain, DrainPod
from simcluster.testing import run_simcluster
from tests.maintenance.drain_support import (
    TrainerWatch,
    drain_ready,
    gpus_of,
    healthy_trainers,
    step_until,
    trainer_nodes,
)
from tests.maintenance.support import GPU, create

MIN_AVAILABLE = 10  # the demo's ml/trainer budget


@pytest.fixture
def demo(tmp_path: Path, settings: Any, db: Any) -> Iterator[Any]:
    # Controllers react after 0.3 s (a slower kubelet and scheduler than the default 0.02 s): replacements take
    # a moment to be Ready, as in a real cluster, so a budget says no while they start.
    with run_simcluster(topology="demo", kubeconfig_path=tmp_path / "kubeconfig", batch_delay=0.3) as cluster:
        assert cluster.controllers is not None and cluster.controllers.wait_idle(60)
        settings.DRADASH_KUBECONFIG = str(cluster.kubeconfig_path)
        settings.DRADASH_KUBE_CONTEXT = ""
        settings.DRADASH_DRAIN_BACKOFF_SECONDS = 0.2
        settings.DRADASH_DRAIN_BACKOFF_MAX_SECONDS = 1.0
        mirror = Mirror(connect(str(cluster.kubeconfig_path)))
        mirror.sync_once()
        cluster.sync = mirror.sync_once
        yield cluster


def _finished(m: Any) -> bool:
    return Drain.objects.get(maintenance=m).state == Drain.COMPLETE


def _gpu_pods_on(cluster: Any, nodes: list[str]) -> set[str]:
    held = set()
    for claim in cluster.store.list("resourceclaims"):
        results = claim.get("status", {}).get("allocation", {}).get("devices", {}).get("results", [])
        if any(r["driver"] == GPU and r["pool"] in nodes for r in results):
            held |= {r["uid"] for r in claim["status"].get("reservedFor", [])}
    return held


def test_draining_the_busiest_trainer_node_keeps_the_budget_and_moves_every_pod(
    demo: Any, operator: Any
) -> None:
    """The issue's Done-when: the demo's busiest trainer node (worker-06, four of the twelve trainers, which
    prefer the dataset-cache nodes) drained at a concurrency of four — the budget (minAvailable 10) allows
    two at a time, so the drain waits "blocked by PDB" for replacements, while a watcher counts healthy
    trainers through the API every second. The replacements are held back (the other GPUs out of service
    for a moment) until the drain was seen waiting, so the wait does not depend on how fast the machine
    is; then they start and the drain finishes."""
    nodes = trainer_nodes(demo)
    node = nodes[0]
    on_node = sum(
        1
        for p in demo.store.list("pods", namespace="ml")
        if p["spec"].get("nodeName") == node and p["metadata"]["labels"].get("app") == "trainer"
    )
    assert on_node >= 3, f"the demo's busiest trainer node {node} runs {on_node} trainers"
    m, run, phrase = drain_ready(operator, [node])
    before = _gpu_pods_on(demo, [node])
    assert before
    reasons: set[str] = set()

    def look() -> None:
        watch.look()
        reasons.update(
            DrainPod.objects.filter(drain__maintenance=m, state=states.BLOCKED).values_list(
                "reason", flat=True
            )
        )

    held = _out_of_service(demo, except_node=node)
    with TrainerWatch(str(demo.kubeconfig_path)) as watch:
        maintenance_drain_start(maintenance=m, user=operator, confirmed=True, typed=phrase, preview_id=run,
                                concurrency=on_node)  # fmt: skip
        m.refresh_from_db()
        assert m.state == states.DRAINING and m.applied_effect == "NoSchedule"
        step_until(m, demo.sync, until=lambda: bool(reasons), each=look, timeout=60)
        for name in held:  # the replacements may start now
            demo.store.delete("devicetaintrules", name)
        step_until(m, demo.sync, until=lambda: _finished(m), each=look, timeout=60)
    assert len(watch.seen) > 3 and min(watch.seen) >= MIN_AVAILABLE, watch.seen
    assert "blocked by PDB ml/trainer: minAvailable 10, 10 healthy" in reasons, reasons
    demo.sync()
    pods = list(DrainPod.objects.filter(drain__maintenance=m))
    assert sum(1 for p in pods if p.owner.startswith("ReplicaSet/trainer")) == on_node
    evicted = {p.uid for p in pods if p.state == states.RUNNING}
    assert evicted == {p.uid for p in pods if p.state != states.NO_OWNER}
    now_on_node = _gpu_pods_on(demo, [node])
    assert not (now_on_node & {p.uid for p in pods})  # no affected pod on those devices
    live = {p["metadata"]["uid"]: p for p in demo.store.list("pods")}
    for pod in pods:
        if pod.state == states.RUNNING:  # its replacement runs, elsewhere
            replacement = live[pod.replacement_uid]
            assert replacement["status"]["phase"] == "Running"
            assert replacement["spec"]["nodeName"] == pod.replacement_node != node
            assert pod.replacement_uid not in now_on_node
    assert healthy_trainers(connect(str(demo.kubeconfig_path))) == 12
    m.refresh_from_db()
    assert m.state == states.APPLIED and m.applied_effect == "NoSchedule"
    assert AuditEntry.objects.filter(maintenance=m, action="eviction", outcome__status=201).count() == len(
        evicted
    )
    assert AuditEntry.objects.filter(maintenance=m, action="eviction", outcome__status=429).exists()


def _out_of_service(cluster: Any, *, except_node: str) -> list[str]:
    """NoSchedule rules (someone else's) on every GPU pool but `except_node`'s: nothing new fits elsewhere."""
    pools = {
        s["spec"]["pool"]["name"] for s in cluster.store.list("resourceslices") if s["spec"]["driver"] == GPU
    }
    names = []
    for pool in sorted(pools - {except_node}):
        cluster.store.create(
            "devicetaintrules",
            {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": f"out-{pool}"},
             "spec": {"deviceSelector": {"driver": GPU, "pool": pool},
                      "taint": {"key": "example.com/out", "value": "rma", "effect": "NoSchedule"}}},
        )  # fmt: skip
        names.append(f"out-{pool}")
    return names


def _set_min_available(cluster: Any, value: int) -> None:
    cluster.store.patch("poddisruptionbudgets", "trainer", {"spec": {"minAvailable": value}}, namespace="ml")


def test_a_drain_waits_blocked_by_the_budget_and_never_goes_below_it(demo: Any, operator: Any) -> None:
    nodes = trainer_nodes(demo)[:1]  # the busiest node's four trainers, every pod at once
    m, run, phrase = drain_ready(operator, nodes)
    # First the budget allows nothing (someone raised minAvailable to 12 of 12): every trainer waits.
    _set_min_available(demo, 12)
    assert demo.controllers.wait_idle(20)
    trainers = DrainPod.objects.filter(drain__maintenance=m, owner__startswith="ReplicaSet/trainer")

    def all_trainers_blocked() -> bool:
        now = list(trainers.all())
        return len(now) == 4 and all(p.state == states.BLOCKED for p in now)

    with TrainerWatch(str(demo.kubeconfig_path)) as watch:
        maintenance_drain_start(maintenance=m, user=operator, confirmed=True, typed=phrase, preview_id=run,
                                concurrency=50)  # fmt: skip
        step_until(m, demo.sync, until=all_trainers_blocked, each=watch.look)
        assert {p.reason for p in trainers.all()} == {
            "blocked by PDB ml/trainer: minAvailable 12, 12 healthy"
        }
        assert {p.budget for p in trainers.all()} == {"ml/trainer"}
        doc = drain_document(maintenance=m, now=timezone.now())
        assert doc is not None and [(b["name"], b["disruptions_allowed"]) for b in doc["budgets"]] == [
            ("trainer", 0)
        ]
        assert len(doc["blocked"]) == 4
        # Back to the demo's minAvailable 10: two at a time may go, the drain retries and finishes.
        _set_min_available(demo, 10)
        step_until(m, demo.sync, until=lambda: _finished(m), each=watch.look)
    assert min(watch.seen) >= MIN_AVAILABLE
    refused = AuditEntry.objects.filter(maintenance=m, action="eviction", outcome__status=429)
    assert refused.count() >= 4 and "blocked by PDB ml/trainer" in refused.first().message  # type: ignore[union-attr]
    assert all(p.state == states.RUNNING for p in trainers.all())
    assert healthy_trainers(connect(str(demo.kubeconfig_path))) == 12


def test_two_drivers_stepping_at_once_evict_each_pod_once(
    transactional_db: Any, demo: Any, operator: Any, settings: Any
) -> None:
    settings.DRADASH_DRAIN_LEASE_SECONDS = (
        0.0  # no lease protection at all: the per-pod claim alone must hold
    )
    nodes = trainer_nodes(demo)[:2]
    m, run, phrase = drain_ready(operator, nodes)
    maintenance_drain_start(maintenance=m, user=operator, confirmed=True, typed=phrase, preview_id=run,
                            concurrency=3)  # fmt: skip
    errors: list[BaseException] = []
    go = threading.Barrier(2)

    def driver(name: str) -> None:
        # Bounded by time, not by a number of steps: on a loaded machine the evicted pods take longer to
        # go (a CI run exhausted 400 quick steps before the drain could finish), and a real driver ticks.
        deadline = time.monotonic() + 100
        try:
            go.wait()
            while time.monotonic() < deadline:
                if _finished(m):
                    return
                drain_step(m.id, driver=name)
                time.sleep(0.02)
        except BaseException as error:  # reported below
            errors.append(error)

    lock = threading.Lock()
    stop = threading.Event()

    def mirror() -> None:
        while not stop.is_set():
            with lock:
                demo.sync()
            stop.wait(0.2)

    threads = [threading.Thread(target=driver, args=(n,)) for n in ("driver-a", "driver-b")]
    syncer = threading.Thread(target=mirror)
    syncer.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    stop.set()
    syncer.join(timeout=10)
    assert not errors, errors
    accepted = list(
        AuditEntry.objects.filter(maintenance=m, action="eviction", outcome__status=201).values_list(
            "object_uid", flat=True
        )
    )
    assert accepted and len(accepted) == len(set(accepted))  # each pod evicted once
    assert _finished(m)


def test_a_drain_survives_its_driver_dying_and_a_new_one_finishes_it(
    demo: Any, operator: Any, settings: Any
) -> None:
    settings.DRADASH_DRAIN_LEASE_SECONDS = 1.0
    settings.DRADASH_DRAIN_IN_FLIGHT_SECONDS = 1.0
    nodes = trainer_nodes(demo)[:1]
    m, run, phrase = drain_ready(operator, nodes)
    maintenance_drain_start(maintenance=m, user=operator, confirmed=True, typed=phrase, preview_id=run)
    # The first driver evicts one pod, then "dies" holding the lease with a second eviction claimed but
    # never sent (as if killed between the claim and the request).
    demo.sync()
    assert drain_step(m.id, driver="dead").evicted == 1
    next_pod = DrainPod.objects.filter(drain__maintenance=m, state=states.WAITING).order_by("order").first()
    assert next_pod is not None
    DrainPod.objects.filter(pk=next_pod.pk).update(state=states.EVICTING, claimed_by="dead",
                                                   requested_at=next_pod.updated_at)  # fmt: skip
    assert not drain_step(m.id, driver="new").held  # the dead driver's lease still holds
    step_until(m, demo.sync, driver="new", until=lambda: _finished(m))
    pods = list(DrainPod.objects.filter(drain__maintenance=m))
    assert all(p.state in (states.RUNNING, states.NO_OWNER) for p in pods)
    accepted = list(
        AuditEntry.objects.filter(maintenance=m, action="eviction", outcome__status=201).values_list(
            "object_uid", flat=True
        )
    )
    assert len(accepted) == len(set(accepted)) == sum(1 for p in pods if p.state == states.RUNNING)


def test_the_api_drains_with_pause_resume_and_abort(demo: Any, operator: Any, viewer: Any) -> None:
    from django.test import Client

    nodes = trainer_nodes(demo)[:2]
    m, run, phrase = drain_ready(operator, nodes)
    api = Client()
    api.force_login(operator)

    def post(path: str, body: dict[str, Any]) -> Any:
        return api.post(f"/api/maintenance/{m.id}/{path}/", body, content_type="application/json")

    # strict input: a drain applies NoSchedule; concurrency only with the drain; the phrase is checked
    bad = post("apply", {"mode": "drain", "effect": "NoExecute", "concurrency": 0, "confirm": True})
    assert bad.status_code == 400 and {e["field"] for e in bad.json()["errors"]} >= {"effect", "concurrency"}
    assert post("apply", {"effect": "NoSchedule", "concurrency": 2}).status_code == 400
    untyped = post("apply", {"mode": "drain", "confirm": True, "preview": run, "version": m.version})
    assert untyped.status_code == 400 and untyped.json()["errors"][0]["field"] == "typed"
    assert post("pause", {}).status_code == 409  # nothing to pause yet
    viewer_api = Client()
    viewer_api.force_login(viewer)
    assert (
        viewer_api.post(f"/api/maintenance/{m.id}/pause/", {}, content_type="application/json").status_code
        == 403
    )

    m.refresh_from_db()
    started = post("apply", {"mode": "drain", "concurrency": 2, "replacement_timeout": 120, "confirm": True,
                             "typed": phrase, "preview": run, "version": m.version})  # fmt: skip
    assert started.status_code == 200, started.json()
    body = started.json()
    assert body["state"] == "draining" and body["applied_effect"] == "NoSchedule"
    assert body["drain"]["state"] == "running" and body["drain"]["concurrency"] == 2
    version = body["version"]

    paused = post("pause", {"version": version})
    assert paused.status_code == 200 and paused.json()["drain"]["state"] == "paused"
    before = DrainPod.objects.filter(drain__maintenance=m).exclude(state=states.WAITING).count()
    demo.sync()
    drain_step(m.id, driver="api-test")
    assert DrainPod.objects.filter(drain__maintenance=m).exclude(state=states.WAITING).count() == before
    stale = post("resume", {"version": version})  # the version before the pause
    assert stale.status_code == 409 and stale.json()["current"]["drain"] == "paused"
    assert post("pause", {"version": paused.json()["version"]}).status_code == 409  # paused already
    resumed = post("resume", {"version": paused.json()["version"]})
    assert resumed.status_code == 200 and resumed.json()["drain"]["state"] == "running"
    step_until(m, demo.sync, driver="api-test",
               until=lambda: DrainPod.objects.filter(drain__maintenance=m, evicted_at__isnull=False).exists())  # fmt: skip
    aborted = post("abort", {"version": resumed.json()["version"]})
    assert aborted.status_code == 200
    body = aborted.json()
    assert body["state"] == "applied" and body["applied_effect"] == "NoSchedule"
    assert body["drain"]["state"] == "aborted" and "NoSchedule" in body["drain"]["message"]
    evicted = DrainPod.objects.filter(drain__maintenance=m, evicted_at__isnull=False).count()
    demo.sync()
    drain_step(m.id, driver="api-test")  # an aborted drain evicts nothing more
    assert DrainPod.objects.filter(drain__maintenance=m, evicted_at__isnull=False).count() == evicted
    assert evicted < DrainPod.objects.filter(drain__maintenance=m).exclude(state=states.NO_OWNER).count()
    progress = api.get(f"/api/maintenance/{m.id}/progress/").json()
    assert progress["drain"]["state"] == "aborted"
    actions = list(AuditEntry.objects.filter(maintenance=m, action="drain").values_list("message", flat=True))
    assert any(a.startswith("drain paused") for a in actions) and any(
        a.startswith("drain aborted") for a in actions
    )


def test_the_page_offers_the_drain_with_its_forecast_and_drives_it(demo: Any, operator: Any) -> None:
    from django.test import Client

    from maintenance.drain import drain_forecast
    from maintenance.services import maintenance_preview_observe

    nodes = trainer_nodes(demo)[:1]
    m, run, phrase = drain_ready(operator, nodes)
    result = maintenance_preview_observe(maintenance=m).result
    # The busiest trainer node: 4 trainers under ml/trainer (2 disruptions allowed) and a server, 5 pods. At
    # concurrency 8 the budget forces a second wave (one wave would take all 4 trainers); at concurrency 2
    # the concurrency alone makes 3 waves.
    at2 = drain_forecast(maintenance=m, result=result, concurrency=2)
    at8 = drain_forecast(maintenance=m, result=result, concurrency=8)
    assert at2["pods"] == at8["pods"] == 5
    assert at8["waves"] == 2 and at8["budget_waves"] is True
    assert at2["waves"] == 3 and at2["budget_waves"] is False
    trainer_waves = [e["wave"] for e in at8["order"] if e["budget"] == "ml/trainer"]
    assert sorted(trainer_waves) == [1, 1, 2, 2]
    assert [b["name"] for b in at8["budgets"]] == ["trainer"] and at8["budgets"][0][
        "disruptions_allowed"
    ] == 2
    assert at8["unmovable"] == [] and at8["blocked"] == []
    assert at8["order"] == sorted(at8["order"], key=lambda e: (e["created"], e["namespace"], e["name"]))
    assert at8["seconds"] > 0 and at8["duration"].startswith("about")

    page = Client()
    page.force_login(operator)
    html = page.get(f"/maintenance/{m.id}/").content.decode()
    assert 'id="drain-form"' in html and "Drain, respecting PDBs" in html
    assert 'class="drain-waves"' in html and "ETA" in html and phrase in html
    assert "<script>" not in html.split('id="drain-form"')[1].split("</form>")[0]
    response = page.post(f"/maintenance/{m.id}/apply/", {"mode": "drain", "version": m.version, "preview": run,
                                                         "confirm": "yes", "typed": phrase, "concurrency": "2"})  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    html = page.get(f"/maintenance/{m.id}/").content.decode()
    assert 'id="drain-pause"' in html and 'id="drain-abort"' in html and 'id="drain-resume"' not in html
    m.refresh_from_db()
    assert page.post(f"/maintenance/{m.id}/pause/", {"version": m.version}).status_code == 302
    html = page.get(f"/maintenance/{m.id}/").content.decode()
    assert 'id="drain-resume"' in html and 'id="drain-pause"' not in html
    assert Drain.objects.get(maintenance=m).concurrency == 2


TAINT_AUTHOR = [
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "taint-author"},
     "rules": [{"apiGroups": ["resource.k8s.io"], "resources": ["devicetaintrules"],
                "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "olivia-authors"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "taint-author"},
     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "olivia"}]},
]  # fmt: skip


def test_evictions_are_made_as_the_user_who_started_the_drain(
    demo: Any, operator: Any, settings: Any
) -> None:
    """Under impersonation the cluster's RBAC decides on each eviction as for rule writes: olivia may write
    DeviceTaintRules but not evict pods, so the rules go in and the first eviction is refused — the drain
    pauses and says who was denied what, instead of retrying a refusal that cannot change."""
    settings.DRADASH_IMPERSONATION_ENABLED = True
    for obj in TAINT_AUTHOR:
        demo.store.create("clusterroles" if obj["kind"] == "ClusterRole" else "clusterrolebindings", obj)
    m, run, phrase = drain_ready(operator, trainer_nodes(demo)[:1])
    maintenance_drain_start(maintenance=m, user=operator, confirmed=True, typed=phrase, preview_id=run)
    m.refresh_from_db()
    assert m.applied_effect == "NoSchedule"  # olivia's rule writes went through
    demo.sync()
    drain_step(m.id, driver="rbac-test")
    drain = Drain.objects.get(maintenance=m)
    assert drain.state == Drain.PAUSED
    assert "Kubernetes denied: olivia cannot create pods/eviction" in drain.message
    denied = AuditEntry.objects.get(maintenance=m, action="eviction")
    assert denied.outcome["status"] == 403 and denied.actor == "olivia"
    assert not DrainPod.objects.filter(drain=drain, evicted_at__isnull=False).exists()


def test_pods_with_no_room_elsewhere_are_predicted_and_shown_unschedulable(
    demo: Any, operator: Any, viewer: Any
) -> None:
    """Every other GPU out of service (someone else's NoSchedule rules): the preview predicts that none of
    the busiest trainer node's pods can move (per the allocator), the API's forecast says so, and the drain
    shows the first pod's replacement "unschedulable" with the scheduler's words, then moves on after the
    replacement timeout instead of waiting for a replacement that cannot come."""
    from django.test import Client

    node = trainer_nodes(demo)[0]
    _out_of_service(demo, except_node=node)
    demo.sync()
    m, run, phrase = drain_ready(operator, [node])
    on_node = {p["metadata"]["name"] for p in demo.store.list("pods") if p["spec"].get("nodeName") == node}

    api = Client()
    api.force_login(viewer)  # viewers may read what a drain would do
    url = f"/api/maintenance/{m.id}/drain-forecast/"
    answer = api.get(url, {"concurrency": "4"})
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["preview"]["run"] == run and body["preview"]["ready"] is True
    assert body["confirmation"]["phrase"] == phrase
    forecast = body["forecast"]
    assert forecast["concurrency"] == 4 and forecast["pods"] == len(on_node) == 5
    assert {u["name"] for u in forecast["unmovable"]} == on_node
    assert all("no node has room" in u["why"] for u in forecast["unmovable"])
    assert [e["movable"] for e in forecast["order"]] == [False] * 5
    for bad, field in (({"concurrency": "0"}, "concurrency"), ({"concurrency": "two"}, "concurrency"),
                       ({"concurrency": "51"}, "concurrency"), ({"speed": "1"}, "speed")):  # fmt: skip
        refused = api.get(url, bad)
        assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == field, bad
    unpreviewed = create(operator, devices=gpus_of([node]), filters={"node": node}, effect="NoSchedule")
    refused = api.get(f"/api/maintenance/{unpreviewed.id}/drain-forecast/")
    assert refused.status_code == 409 and refused.json()["errors"][0]["field"] == "preview"
    html = Client()
    html.force_login(operator)
    page = html.get(f"/maintenance/{m.id}/").content.decode()
    assert 'id="drain-unmovable"' in page and "<strong>5</strong> pods cannot move" in page

    maintenance_drain_start(maintenance=m, user=operator, confirmed=True, typed=phrase, preview_id=run,
                            concurrency=1, replacement_timeout=2)  # fmt: skip
    first = DrainPod.objects.filter(drain__maintenance=m).order_by("order").first()
    assert first is not None

    def first_unschedulable() -> bool:
        first.refresh_from_db()
        return first.state == states.UNSCHEDULABLE

    step_until(m, demo.sync, until=first_unschedulable)
    assert first.reason.startswith(
        "no node has room for the replacement (the scheduler: 0/18 nodes are available"
    )
    doc = drain_document(maintenance=m, now=timezone.now())
    assert doc is not None and doc["counts"]["unschedulable"] == 1
    # the drain moves on: after 2 s the pod is timed out and the next one is evicted
    step_until(m, demo.sync, until=lambda: DrainPod.objects.filter(drain__maintenance=m,
                                                                   evicted_at__isnull=False).count() >= 2)  # fmt: skip
    first.refresh_from_db()
    assert first.timed_out and first.state == states.UNSCHEDULABLE
    row = next(p for p in drain_document(maintenance=m, now=timezone.now())["pods"] if p["uid"] == first.uid)  # type: ignore[index]
    assert row["label"] == "replacement unschedulable (timed out)"
