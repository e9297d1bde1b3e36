"""A controller loop batches the store events of a burst into one pass, and a paced loop leaves the CPU
to the others: its passes wait at least `pace` times the last one's duration."""

from __future__ import annotations

import time
from collections.abc import Callable

from simcluster.controllers.base import Loop


def _loop(*, batch_delay: float, pace: float = 0.0, cost: float = 0.0) -> tuple[Loop, list[float]]:
    starts: list[float] = []

    def reconcile() -> None:
        starts.append(time.monotonic())
        if cost:
            time.sleep(cost)

    loop = Loop("test", reconcile, batch_delay=batch_delay, pace=pace)
    loop.start()
    assert loop.wait_idle(5)
    return loop, starts


def test_pokes_within_the_batch_delay_make_one_pass() -> None:
    loop, starts = _loop(batch_delay=0.3)
    try:
        before = len(starts)
        for _ in range(10):  # a burst of store events, 10 ms apart: all inside one batch window
            loop.poke()
            time.sleep(0.01)
        assert loop.wait_idle(5)
        assert len(starts) - before == 1
    finally:
        loop.stop()


def test_a_paced_loop_makes_fewer_passes_under_a_steady_stream_of_events() -> None:
    counts = {}
    for pace in (0.0, 3.0):
        loop, starts = _loop(batch_delay=0.0, pace=pace, cost=0.03)
        try:
            before = len(starts)
            deadline = time.monotonic() + 0.6
            while time.monotonic() < deadline:
                loop.poke()
                time.sleep(0.005)
            assert loop.wait_idle(5)
            counts[pace] = len(starts) - before
        finally:
            loop.stop()
    # Unpaced: a pass every ~30 ms (≈ 20); paced at 3×: one every ≥ 120 ms (≤ 6).
    assert counts[3.0] <= 6 < counts[0.0], counts


def test_stopping_asks_every_loop_before_waiting_for_any() -> None:
    import threading

    from simcluster.controllers.base import stop_loops

    release = threading.Event()
    in_pass = [threading.Event(), threading.Event()]

    def blocking(i: int) -> Callable[[], None]:
        def reconcile() -> None:
            in_pass[i].set()
            release.wait(10)

        return reconcile

    loops = [Loop(f"busy-{i}", blocking(i), batch_delay=0.0) for i in range(2)]
    for loop in loops:
        loop.start()
        loop.poke()
    assert all(event.wait(5) for event in in_pass), "both loops are in a long pass"
    stopper = threading.Thread(target=stop_loops, args=(loops,), kwargs={"timeout": 10})
    stopper.start()
    try:
        # While the first loop still holds its pass, the second was asked to stop too.
        deadline = time.monotonic() + 5
        while not all(loop._stopped for loop in loops) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert all(loop._stopped for loop in loops)
        assert stopper.is_alive(), "it waits for the passes to end"
    finally:
        release.set()
        stopper.join(10)
    assert not stopper.is_alive()
    assert not any(loop._thread.is_alive() for loop in loops)


def test_a_dirty_loop_is_not_woken_again_and_still_makes_one_more_pass() -> None:
    loop, starts = _loop(batch_delay=1.0)
    try:
        before = len(starts)
        loop.poke()
        with loop._cond:
            assert loop._dirty
        notified = []
        original = loop._cond.notify_all
        loop._cond.notify_all = lambda: notified.append(1) or original()  # type: ignore[method-assign,func-returns-value]
        for _ in range(20):  # within the batch window: the loop is dirty, nobody needs waking
            loop.poke()
        assert notified == []
        loop._cond.notify_all = original  # type: ignore[method-assign]
        assert loop.wait_idle(5)
        assert len(starts) - before == 1
    finally:
        loop.stop()
