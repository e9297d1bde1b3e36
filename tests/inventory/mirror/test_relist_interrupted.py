"""A re-list that fails part-way (a 410 on its continue token, a 503, the mirror stopped) leaves the kind
without a resourceVersion in WatchState, as `begin_list` made it: its rows are part of a list, and a
mirror resuming from the rv it held before would watch from a state it no longer holds (after a reset,
from another history), with the ghosts of that list never deleted."""

from __future__ import annotations

import queue
import random
from collections.abc import Iterator
from typing import Any

import pytest

from inventory.kube import KubeError
from inventory.mirror.reflector import Backoff, Reflector
from inventory.mirror.runner import QueueSink
from inventory.mirror.writer import LIST_OPS, BatchWriter
from inventory.models import KubeObject, WatchState
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db

KIND = "devicetaintrules"


def rule(name: str, rv: int) -> dict[str, Any]:
    obj = f.taint_rule(name, selector=None)
    obj["metadata"]["resourceVersion"] = str(rv)
    return obj


@pytest.mark.parametrize("stop_after_failure", [True, False])
def test_a_relist_that_fails_part_way_leaves_no_resource_version_to_resume_from(
    stop_after_failure: bool,
) -> None:
    q: queue.Queue[Any] = queue.Queue()
    lists = [[([rule("old-a", 5), rule("old-b", 6)], "10")], [([rule("new-a", 50)], "60"), None]]

    def pages() -> Iterator[tuple[list[Any], str]]:
        for page in lists.pop(0):
            if page is None:
                raise KubeError(410, "Expired", "the provided continue parameter is too old")
            yield page

    def watch(rv: str, timeout: int) -> Any:
        assert rv == "10", "no watch from a partial list"
        raise KubeError(410, "Expired", "too old resource version")

    def wait(seconds: float) -> bool:
        reflector.stop()  # the mirror stopped during the back-off (or right after it)
        return stop_after_failure

    reflector = Reflector(
        kind=KIND,
        list_fn=lambda: ([], ""),
        watch_fn=watch,
        pages_fn=pages,
        sink=QueueSink(q),
        wait=wait,
        backoff=Backoff(rng=random.Random(1)),
    )
    reflector.run()

    writer = BatchWriter()
    while not q.empty():
        op = q.get()
        if isinstance(op, LIST_OPS):
            writer.apply_list_op(op)
        else:
            writer.apply([op])
    state = WatchState.objects.get(kind=KIND)
    assert set(KubeObject.objects.filter(kind=KIND).values_list("name", flat=True)) == {
        "old-a",
        "old-b",
        "new-a",
    }
    assert state.resource_version == "", "a mirror resuming would watch from 10 over a partial list"
    assert state.state != "synced"
