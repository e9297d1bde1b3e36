"""The reflector's list+watch loop, driven by fake list and watch functions (no server, no database)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from typing import Any

from inventory.kube import KubeError, KubeTimeout
from inventory.mirror.reflector import Backoff, Health, Reflector

JSON = dict[str, Any]


def obj(uid: str, rv: int) -> JSON:
    return {"metadata": {"uid": uid, "name": uid, "resourceVersion": str(rv)}}


def bookmark(rv: int) -> JSON:
    return {"kind": "ResourceSlice", "metadata": {"resourceVersion": str(rv)}}


class RecordingSink:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.states: list[str] = []
        self.reasons: list[str] = []

    def replace(self, kind: str, items: list[JSON], resource_version: str, reason: str) -> None:
        self.calls.append(("replace", [i["metadata"]["uid"] for i in items], resource_version))
        self.reasons.append(reason)

    def apply(self, kind: str, event_type: str, o: JSON, resource_version: str) -> None:
        self.calls.append((event_type, o["metadata"].get("uid"), resource_version))

    def health(self, kind: str, health: Health) -> None:
        self.states.append(health.state)


class Script:
    """Fake server: each list call pops a (items, rv); each watch call pops a step list and records its rv."""

    def __init__(
        self, lists: list[tuple[list[JSON], str]], watches: list[list[Any]], reflector_stop: Any = None
    ):
        self.lists = lists
        self.watches = watches
        self.watch_rvs: list[str] = []
        self.list_calls = 0
        self.reflector: Reflector | None = None

    def list_fn(self) -> tuple[list[JSON], str]:
        self.list_calls += 1
        result = self.lists.pop(0)
        if isinstance(result, Exception):
            raise result
        return result

    def watch_fn(self, rv: str, timeout: int) -> Iterable[tuple[str, JSON]]:
        self.watch_rvs.append(rv)
        if not self.watches:
            assert self.reflector is not None
            self.reflector.stop()
            return iter(())
        return self._stream(self.watches.pop(0))

    def _stream(self, steps: list[Any]) -> Iterator[tuple[str, JSON]]:
        for step in steps:
            if isinstance(step, Exception):
                raise step
            yield step


def make(script: Script, *, waits: list[float] | None = None) -> tuple[Reflector, RecordingSink]:
    sink = RecordingSink()
    recorded = waits if waits is not None else []

    def wait(seconds: float) -> bool:
        recorded.append(seconds)
        return False

    reflector = Reflector(
        kind="resourceslices",
        list_fn=script.list_fn,
        watch_fn=script.watch_fn,
        sink=sink,
        wait=wait,
        wall_clock=lambda: 1000.0,
        backoff=Backoff(rng=random.Random(1)),
        rng=random.Random(1),
    )
    script.reflector = reflector
    return reflector, sink


def test_it_lists_then_watches_from_the_list_resource_version() -> None:
    script = Script(lists=[([obj("a", 5)], "10")], watches=[[("ADDED", obj("b", 11))]])
    reflector, sink = make(script)

    reflector.run()

    assert sink.calls[0] == ("replace", ["a"], "10")
    assert sink.calls[1] == ("ADDED", "b", "11")
    assert script.watch_rvs[0] == "10"


def test_it_advances_the_resource_version_on_bookmarks() -> None:
    script = Script(lists=[([], "10")], watches=[[("BOOKMARK", bookmark(50))], []])
    reflector, sink = make(script)

    reflector.run()

    assert script.watch_rvs[:2] == ["10", "50"]
    assert ("BOOKMARK", None, "50") in sink.calls


def test_it_resumes_from_the_last_event_after_a_normal_close_without_listing_again() -> None:
    script = Script(
        lists=[([obj("a", 5)], "10")],
        watches=[[("MODIFIED", obj("a", 12))], [("DELETED", obj("a", 13))]],
    )
    reflector, sink = make(script)

    reflector.run()

    assert script.list_calls == 1
    assert script.watch_rvs[:2] == ["10", "12"]
    assert sink.calls[-1] == ("DELETED", "a", "13")


def test_it_relists_on_410_and_replaces_so_deleted_objects_disappear() -> None:
    gone = KubeError(410, "Expired", "too old resource version: 10 (40)")
    script = Script(
        lists=[([obj("a", 5), obj("b", 6)], "10"), ([obj("b", 30), obj("c", 31)], "40")],
        watches=[[gone], []],
    )
    reflector, sink = make(script)

    reflector.run()

    assert script.list_calls == 2
    assert sink.calls[-1] == ("replace", ["b", "c"], "40")
    assert script.watch_rvs[:2] == ["10", "40"]
    assert "relisting" in sink.states
    assert reflector.health.relists == 1


def test_it_does_not_relist_on_other_errors_but_backs_off_and_watches_again() -> None:
    waits: list[float] = []
    broken = KubeError(0, "ConnectionError", "connection refused")
    script = Script(lists=[([], "10")], watches=[[broken], [broken], [broken], [("ADDED", obj("a", 11))]])
    reflector, sink = make(script, waits=waits)

    reflector.run()

    assert script.list_calls == 1
    assert script.watch_rvs[:4] == ["10", "10", "10", "10"]
    assert len(waits) == 3
    assert waits[0] < waits[1] < waits[2]  # exponential back-off
    assert "unreachable" in sink.states and sink.states[-2] == "synced"  # recovered, then stopped


def test_it_jitters_the_back_off_and_caps_it() -> None:
    backoff = Backoff(initial=1.0, maximum=8.0, jitter=1.0, rng=random.Random(3))
    delays = [backoff.next() for _ in range(8)]

    assert all(1.0 <= d < 2.0 for d in delays[:1])
    assert all(8.0 <= d < 16.0 for d in delays[4:])
    assert len(set(delays[4:])) > 1  # jittered, not identical
    backoff.reset()
    assert backoff.next() < 2.0


def test_it_reconnects_from_the_last_rv_when_the_watch_goes_silent() -> None:
    script = Script(
        lists=[([], "10")],
        watches=[[("ADDED", obj("a", 11)), KubeTimeout("no data")], [("ADDED", obj("b", 12))]],
    )
    reflector, sink = make(script)

    reflector.run()

    assert script.list_calls == 1
    assert script.watch_rvs[:2] == ["10", "11"]
    assert "error" not in sink.states


def test_it_retries_a_failing_list_with_back_off() -> None:
    waits: list[float] = []
    script = Script(lists=[KubeError(503, "ServiceUnavailable", "starting"), ([], "7")], watches=[])  # type: ignore[list-item]
    reflector, sink = make(script, waits=waits)

    reflector.run()

    assert script.list_calls == 2
    assert len(waits) == 1
    assert sink.calls[0] == ("replace", [], "7")


def test_it_stops_when_asked_and_reports_stopped() -> None:
    script = Script(lists=[([], "10")], watches=[])
    reflector, sink = make(script)

    reflector.run()

    assert sink.states[-1] == "stopped"


def test_it_resumes_from_a_stored_resource_version_without_listing() -> None:
    script = Script(lists=[], watches=[[("ADDED", obj("a", 21))]])
    sink = RecordingSink()
    reflector = Reflector(
        kind="pods",
        list_fn=script.list_fn,
        watch_fn=script.watch_fn,
        sink=sink,
        resume_from="20",
        wait=lambda s: False,
        rng=random.Random(1),
    )
    script.reflector = reflector

    reflector.run()

    assert script.list_calls == 0
    assert script.watch_rvs[0] == "20"
    assert sink.calls[0] == ("ADDED", "a", "21")


def test_it_backs_off_when_watches_close_at_once_without_events() -> None:
    waits: list[float] = []
    script = Script(lists=[([], "10")], watches=[[], [], [], [("ADDED", obj("a", 11))]])
    reflector, sink = make(script, waits=waits)

    reflector.run()

    assert len(waits) == 3 and waits[0] < waits[1] < waits[2]
    assert script.list_calls == 1
    assert "error" not in sink.states


def test_an_unexpected_failure_mid_watch_is_an_error_and_the_watch_goes_on_from_the_last_rv() -> None:
    """Not a KubeError (a malformed object, a bug): the kind says "error", then goes on; its thread does not
    end with the kind "stopped" for good while the rest of the mirror runs."""
    script = Script(
        lists=[([obj("a", 5)], "10")],
        watches=[[("ADDED", obj("b", 11)), ValueError("malformed")], [("ADDED", obj("c", 12))]],
    )
    reflector, sink = make(script)

    reflector.run()

    assert script.watch_rvs[:2] == ["10", "11"]
    assert ("ADDED", "c", "12") in sink.calls
    assert sink.states[-3:] == ["error", "synced", "stopped"]


def test_an_unexpected_failure_of_a_list_is_retried() -> None:
    script = Script(lists=[TypeError("not a list"), ([obj("a", 5)], "10")], watches=[])  # type: ignore[list-item]
    reflector, sink = make(script)

    reflector.run()

    assert script.list_calls == 2
    assert sink.calls[0] == ("replace", ["a"], "10")
    assert sink.states[0] == "error"
