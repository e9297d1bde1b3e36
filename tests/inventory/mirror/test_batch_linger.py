"""The mirror's writer batches a burst: an event that arrives while events keep coming waits up to
`batch_linger` for more (one transaction, one broadcast, one derivation for all of them), where an event
after a quiet spell is written on its own, at once."""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

import pytest

from inventory.mirror.runner import Mirror, MirrorHandle
from inventory.mirror.writer import Event

pytestmark = pytest.mark.django_db(transaction=True)


class _Recorder:
    """Stands in for the BatchWriter: records the batches the loop hands it."""

    has_deferred = False
    has_vacuum_listed = False

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.applied = threading.Event()

    def apply(self, ops: list[Event], defer: bool = False) -> None:
        self.batches.append([op.obj["metadata"]["name"] for op in ops])
        self.applied.set()


def _event(name: str) -> Event:
    return Event("resourceclaims", "ADDED", {"metadata": {"name": name, "uid": name}}, "1")


def _put_and_wait(q: queue.Queue[Any], recorder: _Recorder, name: str) -> None:
    recorder.applied.clear()
    q.put(_event(name))
    assert recorder.applied.wait(5), f"{name} was not written"


def test_a_burst_is_written_in_one_batch_and_an_event_after_a_quiet_spell_alone() -> None:
    mirror = Mirror(client=None, batch_linger=0.5)  # type: ignore[arg-type]
    recorder = _Recorder()
    mirror.writer = recorder  # type: ignore[assignment]
    q: queue.Queue[Any] = queue.Queue()
    handle = MirrorHandle(threading.Event(), [], [], threading.Thread(), q, batch_writer=None)
    writer = threading.Thread(target=mirror._write_loop, args=(handle,), daemon=True)
    writer.start()
    try:
        _put_and_wait(q, recorder, "first")  # nothing came before it: written alone
        recorder.applied.clear()
        for i in range(10):  # a burst: 10 ms apart, each within the linger of the batch before
            q.put(_event(f"burst-{i}"))
            time.sleep(0.01)
        assert recorder.applied.wait(5)
        q.join()
        time.sleep(0.8)  # a quiet spell, longer than the linger
        _put_and_wait(q, recorder, "later")
    finally:
        handle.stop_event.set()
        writer.join(5)

    assert recorder.batches == [["first"], [f"burst-{i}" for i in range(10)], ["later"]]
    assert handle.applied_batches == 3 and handle.applied_ops == 12
