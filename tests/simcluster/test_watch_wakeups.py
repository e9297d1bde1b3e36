"""A write reaches every open watch on an event loop with one wake-up of that loop, made after the writer has
let go of the store lock (the wake-up is a system call; made under the lock, it kept every other writer
waiting through a GIL hand-off)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from simcluster.resources import BY_PLURAL
from simcluster.store import Store
from simcluster.watch import WatchParams, WatchStream

PARAMS = WatchParams(
    since=None,
    send_initial=False,
    bookmarks=False,
    timeout=30,
    matcher=None,
    as_table=False,
    include_object="",
)


def _namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def _in_thread(work: Any) -> None:
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()


async def _open(store: Store, count: int) -> list[WatchStream]:
    streams = [WatchStream(store, BY_PLURAL["namespaces"], None, PARAMS) for _ in range(count)]
    for stream in streams:
        store.open_watch(
            "namespaces", namespace=None, since_rv=store.resource_version, deliver=stream.deliver
        )
    return streams


def _names(stream: WatchStream) -> list[str]:
    out = []
    while not stream.queue.empty():
        item = stream.queue.get_nowait()
        out.append(item.entry.obj["metadata"]["name"])  # type: ignore[union-attr]
    return out


def _count_wakeups(loop: asyncio.AbstractEventLoop, store: Store) -> list[bool]:
    """Patch the loop: each wake-up from another thread is recorded with whether the store lock was held."""
    held: list[bool] = []
    original = loop.call_soon_threadsafe

    def counting(callback: Any, *args: Any, **kwargs: Any) -> Any:
        held.append(not _free_elsewhere(store))
        return original(callback, *args, **kwargs)

    loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
    return held


def _free_elsewhere(store: Store) -> bool:
    """Can another thread take the store lock right now?"""
    got: list[bool] = []

    def probe() -> None:
        acquired = store.lock._lock.acquire(blocking=False)
        got.append(acquired)
        if acquired:
            store.lock._lock.release()

    _in_thread(probe)
    return got[0]


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_one_write_wakes_the_loop_once_for_all_its_watches_and_after_the_lock_is_free() -> None:
    store = Store()

    async def scenario() -> tuple[list[bool], list[list[str]]]:
        streams = await _open(store, 3)
        wakeups = _count_wakeups(asyncio.get_running_loop(), store)
        _in_thread(lambda: store.create("namespaces", _namespace("team-a")))
        await _settle()
        return wakeups, [_names(s) for s in streams]

    wakeups, seen = asyncio.run(scenario())
    assert wakeups == [False], "one wake-up, made with the store lock free"
    assert seen == [["team-a"]] * 3


def test_writes_under_one_hold_of_the_lock_wake_the_loop_once_after_it_and_arrive_in_order() -> None:
    store = Store()

    async def scenario() -> tuple[list[bool], list[list[str]]]:
        streams = await _open(store, 2)
        wakeups = _count_wakeups(asyncio.get_running_loop(), store)

        def writes() -> None:
            with store.lock:
                for name in ("b", "a", "c"):
                    store.create("namespaces", _namespace(name))
                assert wakeups == [], "no wake-up while the lock is held"

        _in_thread(writes)
        await _settle()
        _in_thread(lambda: store.create("namespaces", _namespace("d")))
        await _settle()
        return wakeups, [_names(s) for s in streams]

    wakeups, seen = asyncio.run(scenario())
    assert wakeups == [False, False]
    assert seen == [["b", "a", "c", "d"]] * 2


def test_work_after_release_runs_once_the_outermost_hold_ends_and_a_failure_does_not_stop_the_rest() -> None:
    store = Store()
    ran: list[tuple[str, bool]] = []

    def boom() -> None:
        raise RuntimeError("a failing wake-up")

    with store.lock:
        with store.lock:
            store.lock.after_release(lambda: ran.append(("first", _free_elsewhere(store))))
            store.lock.after_release(boom)
        store.lock.after_release(lambda: ran.append(("second", _free_elsewhere(store))))
        assert ran == []
    assert ran == [("first", True), ("second", True)]
    store.lock.after_release(lambda: ran.append(("unlocked", True)))
    assert ran[-1] == ("unlocked", True), "a thread that does not hold the lock runs the work at once"


@pytest.mark.parametrize("count", [1, 50])
def test_uids_are_distinct_version_4_uuids(count: int) -> None:
    store = Store()
    uids = [store.create("namespaces", _namespace(f"ns-{i}"))["metadata"]["uid"] for i in range(count)]
    assert len(set(uids)) == count
    assert all(len(uid) == 36 and uid[14] == "4" and uid[19] in "89ab" for uid in uids)
