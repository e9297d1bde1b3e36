"""Mirror HA through a coordination.k8s.io/v1 Lease on simcluster: one leader of two candidates, a follower
that takes over when the holder stops renewing (or at once when it releases), and two mirrors where the
follower continues mirroring after the leader dies."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from inventory.kube import connect
from inventory.mirror.leader import LEADER, LeaderElector
from inventory.mirror.runner import ElectedMirror
from tests.inventory.mirror.helpers import wait_for_db_to_equal_cluster, wait_until

NAMESPACE = "default"
RULE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceTaintRule",
    "metadata": {"name": "after-failover"},
    "spec": {
        "deviceSelector": {"driver": "gpu.example.com", "pool": "node-1"},
        "taint": {"key": "example.com/maintenance", "effect": "None"},
    },
}


def elector(cluster: Any, identity: str, *, duration: int = 2, **kwargs: Any) -> LeaderElector:
    return LeaderElector(
        connect(str(cluster.kubeconfig_path)),
        name="dradash-mirror",
        namespace=NAMESPACE,
        identity=identity,
        duration_seconds=duration,
        **kwargs,
    )


def lease(cluster: Any) -> dict[str, Any]:
    spec: dict[str, Any] = cluster.store.get("leases", "dradash-mirror", namespace=NAMESPACE)["spec"]
    return spec


def test_it_lets_exactly_one_of_two_candidates_hold_the_lease(empty_simcluster: Any) -> None:
    a, b = elector(empty_simcluster, "mirror-a"), elector(empty_simcluster, "mirror-b")

    assert a.try_acquire_or_renew() is True
    assert b.try_acquire_or_renew() is False

    spec = lease(empty_simcluster)
    assert spec["holderIdentity"] == "mirror-a" and spec["leaseDurationSeconds"] == 2
    assert spec["leaseTransitions"] == 0 and spec["acquireTime"] == spec["renewTime"]
    assert a.try_acquire_or_renew() is True  # a renewal keeps acquireTime and moves renewTime
    renewed = lease(empty_simcluster)
    assert renewed["acquireTime"] == spec["acquireTime"] and renewed["renewTime"] >= spec["renewTime"]


def test_it_takes_over_only_after_the_record_stayed_unchanged_for_the_lease_duration(
    empty_simcluster: Any,
) -> None:
    clock = [100.0]
    a = elector(empty_simcluster, "mirror-a")
    b = elector(empty_simcluster, "mirror-b", monotonic=lambda: clock[0])
    assert a.try_acquire_or_renew()

    assert b.try_acquire_or_renew() is False  # first sight of the record: it starts counting now
    clock[0] += 1.9
    assert b.try_acquire_or_renew() is False
    clock[0] += 0.2
    assert b.try_acquire_or_renew() is True

    spec = lease(empty_simcluster)
    assert spec["holderIdentity"] == "mirror-b" and spec["leaseTransitions"] == 1
    assert a.try_acquire_or_renew() is False  # the old holder now sees b's fresh record


def test_it_takes_over_at_once_after_the_holder_released_the_lease(empty_simcluster: Any) -> None:
    clock = [0.0]
    a = elector(empty_simcluster, "mirror-a", duration=60)
    b = elector(empty_simcluster, "mirror-b", duration=60, monotonic=lambda: clock[0])
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()

    a.release()

    assert b.try_acquire_or_renew() is True
    assert lease(empty_simcluster)["holderIdentity"] == "mirror-b"


@pytest.mark.django_db(transaction=True)
def test_it_fails_the_mirror_over_to_the_follower_when_the_leader_dies(simcluster: Any) -> None:
    mirrors = {
        name: ElectedMirror(connect(str(simcluster.kubeconfig_path)), elector(simcluster, name, duration=3),
                            inactivity_timeout=30, resync_seconds=0)
        for name in ("mirror-a", "mirror-b")
    }  # fmt: skip
    stops = {name: threading.Event() for name in mirrors}
    threads = {
        name: threading.Thread(
            target=m.run, args=(stops[name],), kwargs={"release_on_stop": False}, daemon=True
        )
        for name, m in mirrors.items()
    }
    for thread in threads.values():
        thread.start()
    try:
        wait_until(lambda: any(m.role == LEADER for m in mirrors.values()), timeout=20, what="a leader")
        leader = next(name for name, m in mirrors.items() if m.role == LEADER)
        follower = next(name for name in mirrors if name != leader)
        wait_for_db_to_equal_cluster(simcluster, timeout=30)
        assert mirrors[follower].handle is None  # only the leader mirrors

        # The leader dies: it stops renewing and writing, and never releases the Lease.
        stops[leader].set()
        threads[leader].join(20)
        died = time.monotonic()
        simcluster.store.create("devicetaintrules", RULE)

        wait_until(lambda: mirrors[follower].role == LEADER, timeout=20, what="the follower to take over")
        took_over = time.monotonic() - died
        wait_for_db_to_equal_cluster(simcluster, timeout=30)
        caught_up = time.monotonic() - died
        print(
            f"failover: leader took over {took_over:.1f}s, mirror equal again {caught_up:.1f}s after the death"
        )
        assert lease(simcluster)["holderIdentity"] == follower
        assert lease(simcluster)["leaseTransitions"] == 1
    finally:
        for name in mirrors:
            stops[name].set()
        for thread in threads.values():
            thread.join(20)
