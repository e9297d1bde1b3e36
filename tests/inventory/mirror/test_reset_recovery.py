"""Issue 10's done-when: the API server comes back on the same address with other state (its resourceVersions
lower, other uids under the same names, as after an etcd restore or a rebuilt cluster). The mirror matches it
again within 30 s — device, claim, pod and rule counts equal kubectl's — and until then the pages and the API
say the data is not current."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from inventory.kube import connect
from inventory.middleware import DATA_AGE_HEADER, DATA_SYNCED_HEADER
from inventory.mirror.reflector import RESET_REASONS
from inventory.mirror.runner import Mirror, wait_for_sync
from inventory.models import Claim, Device, KubeObject, WatchState
from simcluster.app import start_simcluster
from tests.inventory.mirror.helpers import wait_until
from tests.kubectl import run_kubectl

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.kubectl]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def kubectl_counts(kubeconfig: Path) -> dict[str, int]:
    result = run_kubectl(
        kubeconfig, "get", "resourceslices,resourceclaims,pods,devicetaintrules", "-A", "-o", "json"
    )
    assert result.returncode == 0, result.stderr
    items = json.loads(result.stdout)["items"]
    slices = [i for i in items if i["kind"] == "ResourceSlice"]
    return {
        "devices": sum(len(s["spec"].get("devices") or []) for s in slices),
        "claims": sum(1 for i in items if i["kind"] == "ResourceClaim"),
        "pods": sum(1 for i in items if i["kind"] == "Pod"),
        "rules": sum(1 for i in items if i["kind"] == "DeviceTaintRule"),
    }


def mirror_counts() -> dict[str, int]:
    return {
        "devices": Device.objects.count(),
        "claims": Claim.objects.count(),
        "pods": KubeObject.objects.filter(kind="pods").count(),
        "rules": KubeObject.objects.filter(kind="devicetaintrules").count(),
    }


def watched_rvs() -> list[int]:
    return [int(rv) for rv in WatchState.objects.values_list("resource_version", flat=True) if rv]


def page_and_api(client: Client) -> tuple[str, Any]:
    page = client.get("/devices/").content.decode()
    api = client.get("/api/devices/")
    return page, api


def test_it_matches_an_api_server_that_came_back_with_other_state_and_says_not_current_until_then(
    tmp_path: Path,
) -> None:
    port, pki, kubeconfig = free_port(), tmp_path / "pki", tmp_path / "kubeconfig"
    # Bookmarks every half second keep every kind's resourceVersion at the server's, as a real server's
    # (about one a minute) do over time; see below.
    first = start_simcluster(
        topology="demo", port=port, pki_dir=pki, kubeconfig_path=kubeconfig, bookmark_interval=0.5
    )
    second = None
    handle = None
    try:
        handle = Mirror(connect(str(kubeconfig)), inactivity_timeout=30, resync_seconds=0).start()
        assert wait_for_sync(handle, timeout=60)
        wait_until(lambda: mirror_counts() == kubectl_counts(kubeconfig), timeout=30, what="the first mirror")
        # The mirror tells a reset server by resourceVersions (too large, gone backwards) and by other uids
        # under names it holds. A quiet kind whose rv the new server has already passed, and whose names it
        # never had, looks like a kind where nothing happened: that is why an etcd restore ends with
        # `--mark-compacted` (every watch then gets 410 and re-lists). So the scenario starts from every
        # kind's rv at the server's, and the new server below all of them.
        caught_up = first.store.resource_version
        wait_until(
            lambda: min(watched_rvs()) >= caught_up, timeout=30, what="every kind's rv at the server's"
        )
        old_uids = set(KubeObject.objects.values_list("uid", flat=True))
        old_rv = min(watched_rvs())
        user = User.objects.create_user("viewer", password="x" * 12)
        client = Client()
        client.force_login(user)
        page, api = page_and_api(client)
        assert 'data-testid="status-banner"' not in page
        assert api[DATA_SYNCED_HEADER] == "true" and api[DATA_AGE_HEADER].isdigit()

        first.stop()
        wait_until(
            lambda: WatchState.objects.filter(state="unreachable").exists(), timeout=30, what="unreachable"
        )
        page, api = page_and_api(client)
        assert 'data-testid="status-banner"' in page and "unreachable since" in page
        assert api[DATA_SYNCED_HEADER] == "false"

        # Same address, same CA and keys (the kubeconfig stays valid), another world: tiny, rvs from 1.
        second = start_simcluster(topology="tiny", port=port, pki_dir=pki, kubeconfig_path=kubeconfig)
        assert second.store.resource_version < old_rv
        started = time.monotonic()
        wait_until(
            lambda: mirror_counts() == kubectl_counts(kubeconfig),
            timeout=30,
            what="the mirror to match kubectl",
        )
        recovered = time.monotonic() - started
        wait_until(
            lambda: not WatchState.objects.exclude(state__in=("synced", "stopped")).exists(),
            timeout=30,
            what="every watch synced again",
        )
        print(f"reset recovery: counts equal kubectl's {recovered:.1f}s after the new API server started")

        ghosts = list(KubeObject.objects.filter(uid__in=old_uids).values_list("kind", "namespace", "name"))
        assert not ghosts, (
            ghosts[:10],
            list(WatchState.objects.values_list("kind", "state", "last_relist_reason")),
        )
        reasons = set(WatchState.objects.values_list("last_relist_reason", flat=True))
        assert reasons & set(RESET_REASONS), reasons
        page, api = page_and_api(client)
        assert 'data-testid="status-banner"' not in page
        assert api[DATA_SYNCED_HEADER] == "true"
    finally:
        if handle is not None:
            handle.stop()
        for cluster in (first, second):
            if cluster is not None:
                cluster.stop()
