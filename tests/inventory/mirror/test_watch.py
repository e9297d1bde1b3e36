"""The running mirror follows the cluster: changes arrive through the watch, and after forced 410s,
dropped watches and an API server restart the database equals the cluster again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from inventory.kube import connect
from inventory.mirror.runner import Mirror, MirrorHandle, wait_for_sync
from inventory.models import Claim, Device, KubeObject, WatchState
from tests.inventory.mirror.helpers import wait_for_db_to_equal_cluster, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

RULE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceTaintRule",
    "metadata": {"name": "drain-node-0"},
    "spec": {
        "deviceSelector": {"driver": "gpu.example.com", "pool": "node-0"},
        "taint": {"key": "example.com/maintenance", "value": "drain", "effect": "None"},
    },
}


@pytest.fixture
def mirror(simcluster: Any) -> Iterator[MirrorHandle]:
    handle = Mirror(connect(str(simcluster.kubeconfig_path)), inactivity_timeout=30).start()
    assert wait_for_sync(handle, timeout=30)
    yield handle
    handle.stop()


def rule_taints_on(pool: str) -> list[list[str]]:
    return [
        [t["rule"] for t in d.taints if t["source"] == "rule"]
        for d in Device.objects.filter(driver="gpu.example.com", pool=pool)
    ]


def test_it_shows_a_new_taint_rule_on_the_devices_it_selects(simcluster: Any, mirror: MirrorHandle) -> None:
    simcluster.store.create("devicetaintrules", RULE)

    wait_until(lambda: all(r == ["drain-node-0"] for r in rule_taints_on("node-0")), what="rule taints")
    assert Device.objects.filter(pool="node-0", driver="gpu.example.com", taint_none=True).count() == 4
    assert not any(rule_taints_on("node-1")[0])


def test_it_removes_the_taint_when_the_rule_is_deleted(simcluster: Any, mirror: MirrorHandle) -> None:
    simcluster.store.create("devicetaintrules", RULE)
    wait_until(lambda: all(rule_taints_on("node-0")), what="rule taints")

    simcluster.store.delete("devicetaintrules", "drain-node-0")

    wait_until(lambda: not any(rule_taints_on("node-0")), what="rule taints to go")
    assert not KubeObject.objects.filter(kind="devicetaintrules").exists()


def test_it_follows_a_modified_rule_effect(simcluster: Any, mirror: MirrorHandle) -> None:
    simcluster.store.create("devicetaintrules", RULE)
    wait_until(lambda: all(rule_taints_on("node-0")), what="rule taints")

    simcluster.store.patch("devicetaintrules", "drain-node-0", {"spec": {"taint": {"effect": "NoSchedule"}}})

    wait_until(
        lambda: (
            Device.objects.filter(pool="node-0", driver="gpu.example.com", taint_no_schedule=True).count()
            == 4
        ),
        what="NoSchedule on node-0",
    )


def test_it_shows_a_new_claim_and_its_deletion(simcluster: Any, mirror: MirrorHandle) -> None:
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "extra", "namespace": "default"},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}
        },
    }
    simcluster.store.create("resourceclaims", claim, namespace="default")
    wait_until(lambda: Claim.objects.filter(namespace="default", name="extra").exists(), what="the claim")

    simcluster.store.delete("resourceclaims", "extra", namespace="default")

    wait_until(
        lambda: not Claim.objects.filter(namespace="default", name="extra").exists(), what="claim gone"
    )


def test_it_rebuilds_devices_when_a_slice_is_deleted_and_republished(
    simcluster: Any, mirror: MirrorHandle
) -> None:
    victim = next(
        s for s in simcluster.store.list("resourceslices") if s["spec"]["driver"] == "nic.example.com"
    )
    name = victim["metadata"]["name"]
    device_names = {d["name"] for d in victim["spec"]["devices"]}

    simcluster.store.delete("resourceslices", name)

    wait_until(
        lambda: not Device.objects.filter(slice_name=name).exists() or _republished(simcluster, name),
        what="devices of the deleted slice to go",
    )
    wait_for_db_to_equal_cluster(simcluster)
    assert device_names  # the slice had devices to lose


def _republished(cluster: Any, name: str) -> bool:
    # The simulated driver may republish the slice at once; then the DB must follow the new uid.
    current = [s for s in cluster.store.list("resourceslices") if s["metadata"]["name"] == name]
    return bool(current) and Device.objects.filter(slice_uid=current[0]["metadata"]["uid"]).exists()


def test_it_recovers_after_history_compaction_and_dropped_watches(
    simcluster: Any, mirror: MirrorHandle
) -> None:
    simcluster.faults.drop_watches()
    simcluster.store.create("devicetaintrules", RULE)
    simcluster.faults.compact_history()
    simcluster.faults.drop_watches()
    victim = simcluster.store.list("deviceclasses")[-1]["metadata"]["name"]
    simcluster.store.delete("deviceclasses", victim)

    wait_for_db_to_equal_cluster(simcluster)
    assert not KubeObject.objects.filter(kind="deviceclasses", name=victim).exists()


def test_it_recovers_after_the_api_server_restarts(simcluster: Any, mirror: MirrorHandle) -> None:
    simcluster.faults.restart()
    simcluster.store.create("devicetaintrules", RULE)

    wait_for_db_to_equal_cluster(simcluster)
    wait_until(lambda: all(rule_taints_on("node-0")), what="rule taints after restart")
    wait_until(
        lambda: WatchState.objects.filter(kind="devicetaintrules", state="synced").exists(),
        what="the rule watch to report synced",
    )


def test_it_stops_cleanly_and_reports_the_watches_stopped(simcluster: Any) -> None:
    handle = Mirror(connect(str(simcluster.kubeconfig_path))).start()
    assert wait_for_sync(handle, timeout=30)

    handle.stop(timeout=15)

    assert not handle.is_alive()
    assert set(WatchState.objects.values_list("state", flat=True)) <= {"stopped", "error"}


def test_the_running_mirror_lists_page_by_page_retries_a_failed_page_and_deletes_ghosts(
    simcluster: Any,
) -> None:
    from django.db import OperationalError

    from inventory.mirror.runner import PAGES_IN_FLIGHT
    from inventory.mirror.writer import ListOp, ListPage

    client = connect(str(simcluster.kubeconfig_path))
    Mirror(client).sync_once()
    victim = simcluster.store.list("deviceclasses")[0]["metadata"]["name"]
    simcluster.store.delete("deviceclasses", victim)  # gone while no mirror ran: a ghost for the next list

    mirror = Mirror(client, page_size=1, inactivity_timeout=30)
    handles: list[MirrorHandle] = []
    queued: list[int] = []
    failed: list[str] = []
    apply_list_op = mirror.writer.apply_list_op

    def flaky(op: ListOp) -> None:
        if isinstance(op, ListPage):
            if handles:  # how many pages wait behind this one: the list is never all in memory
                queued.append(sum(isinstance(o, ListPage) for o in list(handles[0].queue.queue)))
            if op.kind == "resourceslices" and not failed:
                failed.append(op.kind)
                raise OperationalError("the database went away")
        apply_list_op(op)

    mirror.writer.apply_list_op = flaky  # type: ignore[method-assign]
    handle = mirror.start()
    handles.append(handle)
    try:
        assert wait_for_sync(handle, timeout=30)
        wait_for_db_to_equal_cluster(simcluster)
    finally:
        handle.stop()
    assert failed == ["resourceslices"], "a page's failed transaction was retried"
    assert queued and max(queued) <= PAGES_IN_FLIGHT
    assert not KubeObject.objects.filter(kind="deviceclasses", name=victim).exists()
    assert WatchState.objects.get(kind="resourceslices").object_count == len(
        simcluster.store.list("resourceslices")
    )


def test_a_periodic_resync_repairs_the_database_page_by_page_while_the_kind_stays_synced(
    simcluster: Any,
) -> None:
    from inventory.mirror.reflector import RESYNC
    from inventory.mirror.writer import ListOp, ListPage

    client = connect(str(simcluster.kubeconfig_path))
    mirror = Mirror(client, page_size=1, inactivity_timeout=30, resync_seconds=2)
    resync_pages: list[tuple[str, str]] = []  # (kind, its WatchState while a resync page is written)
    apply_list_op = mirror.writer.apply_list_op

    def watching(op: ListOp) -> None:
        listing = mirror.writer._listing.get(op.kind)
        if isinstance(op, ListPage) and listing is not None and listing.reason == RESYNC:
            resync_pages.append((op.kind, WatchState.objects.get(kind=op.kind).state))
        apply_list_op(op)

    mirror.writer.apply_list_op = watching  # type: ignore[method-assign]
    handle = mirror.start()
    try:
        assert wait_for_sync(handle, timeout=30)
        # The last class in list order: a resync restores it at its last page, so every page of that
        # resync has been recorded when the row is back (the first would stop the mirror after one page).
        victim = KubeObject.objects.filter(kind="deviceclasses").order_by("name").last()
        assert victim is not None
        victim.delete()  # the database diverges from the cluster behind the mirror's back
        wait_until(
            lambda: KubeObject.objects.filter(kind="deviceclasses", uid=victim.uid).exists(),
            timeout=30,
            what="the resync restores the deleted row",
        )
    finally:
        handle.stop()
    classes = [state for kind, state in resync_pages if kind == "deviceclasses"]
    assert len(classes) >= len(simcluster.store.list("deviceclasses")) > 1, "one object a page"
    assert set(classes) == {"synced"}
    assert WatchState.objects.get(kind="deviceclasses").last_divergence
