"""A what-if worker reads the mirror before its first run and keeps that snapshot current, so the
first run a fresh worker gets does not start by reading and decoding the whole inventory."""

from __future__ import annotations

import pytest

import allocation.snapshot as snapshot_module
from allocation.snapshot import snapshot_load
from allocation.whatif import view
from allocation.worker import start_warmer
from inventory.mirror.writer import BatchWriter, Event
from tests.allocation import whatif_objects as o
from tests.allocation.test_worker_loop import wait_until
from tests.allocation.whatif_objects import _migrated_sqlite_file, shared_db  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)


def claim_names() -> list[str]:
    cached = snapshot_module._cached
    return [] if cached is None else [c["metadata"]["name"] for c in cached[1].claims]


def test_a_worker_reads_the_mirror_before_any_run_and_keeps_it_current(
    shared_db: str,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    o.store(*o.small_cluster().values())
    monkeypatch.setattr(snapshot_module, "_cached", None)
    monkeypatch.setattr(snapshot_module, "_kinds", {})
    warmer = start_warmer(every=0.05)
    assert warmer is not None
    try:
        wait_until(lambda: "train-0" in claim_names(), "the first warm-up")
        BatchWriter().apply([Event("resourceclaims", "ADDED", o.claim("late"), "7")])
        wait_until(lambda: "late" in claim_names(), "the change followed")
        cached = snapshot_module._cached
        assert cached is not None
        wait_until(
            lambda: any(v[0] is snapshot_module._cached[1] for v in view._bases.values()),  # type: ignore[index]
            "the base view of the current snapshot",
        )
        base = next(v[2] for v in view._bases.values() if v[0] is cached[1])
        # every node's fingerprint is made for a question naming no attribute (a feasibility of a claim
        # without selectors finds them)
        assert {key[0] for key in base.fingerprint_memo} == {"node-a", "node-b"}
    finally:
        warmer.stopped.set()
        warmer.join(timeout=10)
    assert not warmer.is_alive()

    # A run now reads no object again: nothing is decoded, the warm snapshot is the run's.
    decoded: list[str] = []
    real = snapshot_module.fastjson.loads
    monkeypatch.setattr(snapshot_module.fastjson, "loads", lambda raw: decoded.append(raw) or real(raw))
    snapshot = snapshot_load()
    assert decoded == []
    assert "late" in [c["metadata"]["name"] for c in snapshot.claims]
    assert snapshot is snapshot_module._cached[1]  # type: ignore[index]


def test_warming_is_off_at_zero_seconds() -> None:
    assert start_warmer(every=0) is None
