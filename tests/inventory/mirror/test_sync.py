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
