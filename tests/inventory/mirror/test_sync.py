"""The mirror makes the database equal to the cluster, over HTTP, the way `manage.py mirror` does."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from inventory.kube import connect
from inventory.mirror.runner import Mirror
from inventory.models import Device, KubeObject, Pool, WatchState
from tests.inventory.mirror.helpers import cluster_state, db_state, wait_until

pytestmark = pytest.mark.django_db


def test_it_lists_every_kind_into_the_database_once(simcluster: Any) -> None:
    mirror = Mirror(connect(str(simcluster.kubeconfig_path)))

    # The simulated controllers are still scheduling pods: list until a list catches the cluster at rest.
    wait_until(
        lambda: bool(mirror.sync_once()) and db_state() == cluster_state(simcluster), what="a quiet list"
    )

    slices = simcluster.store.list("resourceslices")
    assert Device.objects.count() == sum(len(s["spec"].get("devices") or []) for s in slices)
    assert Pool.objects.filter(complete=True).count() == Pool.objects.count() > 0


def test_it_records_watch_health_for_each_kind_after_a_sync(simcluster: Any) -> None:
    Mirror(connect(str(simcluster.kubeconfig_path))).sync_once()

    states = {w.kind: w for w in WatchState.objects.all()}
    assert states["resourceslices"].state == "synced"
    assert states["resourceslices"].object_count == KubeObject.objects.filter(kind="resourceslices").count()
    assert states["resourceslices"].resource_version


def test_it_deletes_what_is_gone_when_listing_again(simcluster: Any) -> None:
    mirror = Mirror(connect(str(simcluster.kubeconfig_path)))
    mirror.sync_once()
    victim = simcluster.store.list("deviceclasses")[0]["metadata"]["name"]

    simcluster.store.delete("deviceclasses", victim)
    mirror.sync_once()

    assert not KubeObject.objects.filter(kind="deviceclasses", name=victim).exists()
    names = set(KubeObject.objects.filter(kind="deviceclasses").values_list("name", flat=True))
    assert names == {c["metadata"]["name"] for c in simcluster.store.list("deviceclasses")}


def test_it_mirrors_once_from_the_management_command(simcluster: Any) -> None:
    out = StringIO()

    call_command("mirror", "--once", "--kubeconfig", str(simcluster.kubeconfig_path), stdout=out)

    assert "mirrored" in out.getvalue()
    assert Device.objects.count() > 0
    assert KubeObject.objects.filter(kind="nodes").count() == len(simcluster.store.list("nodes"))


def test_it_fails_clearly_when_the_kubeconfig_does_not_exist(tmp_path: Any) -> None:
    with pytest.raises(CommandError, match="cannot reach the cluster"):
        call_command("mirror", "--once", "--kubeconfig", str(tmp_path / "missing"))


def _rule(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com"},
            "taint": {"key": f"example.com/{name}", "effect": "None"},
        },
    }


def test_a_list_of_many_pages_leaves_exactly_the_clusters_objects_and_is_synced_only_after_its_last_page(
    simcluster: Any,
) -> None:
    mirror = Mirror(connect(str(simcluster.kubeconfig_path)), page_size=1)  # one object a page
    pages: list[tuple[str, int, str, str]] = []
    write_page = mirror.writer.write_page

    def observed(kind: str, items: list[dict[str, Any]]) -> int:
        # What a page reading the database sees while this page is written.
        state, rv = WatchState.objects.filter(kind=kind).values_list("state", "resource_version").get()
        pages.append((kind, len(items), state, rv))
        return write_page(kind, items)

    mirror.writer.write_page = observed  # type: ignore[method-assign]

    def relist() -> bool:
        pages.clear()  # the simulated controllers may still be scheduling pods: keep the last list's pages
        mirror.sync_once()
        return db_state() == cluster_state(simcluster)

    for name in ("kept-1", "kept-2", "ghost-1", "ghost-2"):
        simcluster.store.create("devicetaintrules", _rule(name))
    wait_until(relist, what="a quiet list")

    # Gone while the mirror was away (ghosts), new, and one deviceclass deleted: a re-list, page by page.
    simcluster.store.delete("devicetaintrules", "ghost-1")
    simcluster.store.delete("devicetaintrules", "ghost-2")
    simcluster.store.create("devicetaintrules", _rule("new-1"))
    simcluster.store.delete("deviceclasses", simcluster.store.list("deviceclasses")[0]["metadata"]["name"])
    wait_until(relist, what="a quiet list")

    assert db_state() == cluster_state(simcluster)  # no ghost left, nothing missing
    rules = set(KubeObject.objects.filter(kind="devicetaintrules").values_list("name", flat=True))
    assert rules == {"kept-1", "kept-2", "new-1"}
    listed = [kind for kind, _n, _s, _rv in pages]
    assert listed.count("devicetaintrules") == 3 and listed.count("resourceslices") > 1, pages
    assert max(n for _k, n, _s, _rv in pages) == 1, "every page written as it arrived, one object each"
    assert [p for p in pages if p[2] == "synced" or p[3]] == [], (
        "no kind says synced (or holds a resourceVersion to resume from) before its last page is written"
    )
    states = dict(WatchState.objects.values_list("kind", "state"))
    assert states["devicetaintrules"] == states["resourceslices"] == "synced"
    assert WatchState.objects.get(kind="devicetaintrules").object_count == 3
