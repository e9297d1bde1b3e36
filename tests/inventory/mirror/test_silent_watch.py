"""A watch that delivers nothing — closed as soon as it opens, or silent until the inactivity timeout (a
proxy that cuts or buffers long-lived responses) — must not keep the data "confirmed current". The check
before each new watch only says the server still has our resourceVersion, not that we have what came after
it: counted as a confirmation, it refreshed `confirmed_at` every cycle while no change ever arrived."""

from __future__ import annotations

import random

import pytest

from inventory.kube import KubeTimeout
from inventory.mirror.reflector import Backoff, Reflector
from tests.inventory.mirror.test_reflector_reset import FakeServer, Sink, bookmark, obj

SILENT = KubeTimeout("watch resourceslices: no data within the read timeout")


def run(server: FakeServer) -> Sink:
    sink = Sink()

    def wait(seconds: float) -> bool:
        server.clock[0] += seconds
        return False

    reflector = Reflector(
        kind="resourceslices",
        list_fn=server.list_fn,
        check_fn=server.check_fn,
        watch_fn=server.watch_fn,
        sink=sink,
        wait=wait,
        wall_clock=lambda: 1000.0 + server.clock[0],
        monotonic=lambda: server.clock[0],
        backoff=Backoff(rng=random.Random(1)),
        rng=random.Random(1),
    )
    server.reflector = reflector
    reflector.run()
    return sink


def last_confirmed(sink: Sink) -> float | None:
    return [h.confirmed_at for h in sink.health_log][-1]


@pytest.mark.parametrize(
    "watch", [[120.0, SILENT], []], ids=["silent until the inactivity timeout", "closed at once, empty"]
)
def test_watches_that_deliver_nothing_do_not_confirm_the_data(watch: list[object]) -> None:
    server = FakeServer(lists=[([obj("a", 5)], "10")], watches=[list(watch) for _ in range(8)])

    sink = run(server)

    assert server.clock[0] >= 60, "time passed"
    assert last_confirmed(sink) == 1000.0, "confirmed only by the list"


def test_a_watch_that_delivered_a_bookmark_lets_the_next_check_confirm() -> None:
    server = FakeServer(
        lists=[([obj("a", 5)], "10")],
        watches=[[30.0, ("BOOKMARK", bookmark(11)), 100.0, SILENT]],
    )

    sink = run(server)

    assert server.check_rvs == ["11"]
    assert last_confirmed(sink) == 1000.0 + 130.0, "the check after a watch that worked"
