"""A controller loop batches the store events of a burst into one pass, and a paced loop leaves the CPU
to the others: its passes wait at least `pace` times the last one's duration."""

from __future__ import annotations

import time

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
