"""The reflector notices that the API server's state was reset and re-lists; it resyncs periodically; a
kind it may not list is "forbidden" and one it cannot reach "unreachable", never "synced" (fakes only)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from typing import Any

from inventory.kube import KubeError
from inventory.mirror.reflector import (
    EXPIRED,
    INITIAL,
    RESET_RV_BACKWARDS,
    RESET_TOO_LARGE,
    RESET_UID_CHANGED,
    RESYNC,
    Backoff,
    Health,
    Reflector,
)

JSON = dict[str, Any]
TOO_LARGE = KubeError(
    504,
    "Timeout",
    "Too large resource version: 900, current: 40",
    [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
)


def obj(uid: str, rv: int, name: str | None = None) -> JSON:
    return {"metadata": {"uid": uid, "name": name or uid, "resourceVersion": str(rv)}}


def bookmark(rv: int) -> JSON:
    return {"metadata": {"resourceVersion": str(rv)}}


class Sink:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.health_log: list[Health] = []

    def replace(self, kind: str, items: list[JSON], resource_version: str, reason: str) -> None:
        self.calls.append(("replace", [i["metadata"]["uid"] for i in items], resource_version, reason))

    def apply(self, kind: str, event_type: str, o: JSON, resource_version: str) -> None:
        self.calls.append((event_type, o["metadata"].get("uid"), resource_version))

    def health(self, kind: str, health: Health) -> None:
        self.health_log.append(Health(**vars(health)))

    @property
    def states(self) -> list[str]:
        return [h.state for h in self.health_log]

    @property
    def reasons(self) -> list[str]:
        return [c[3] for c in self.calls if c[0] == "replace"]


class FakeServer:
    """Each list, check, snapshot and watch call pops its next answer (an exception is raised)."""

    def __init__(
        self,
        *,
        lists: list[Any],
        watches: list[list[Any]],
        checks: list[Any] | None = None,
        snapshots: list[Any] | None = None,
        clock: list[float] | None = None,
    ) -> None:
        self.lists, self.watches = lists, watches
        self.checks = checks if checks is not None else []
        self.snapshots = snapshots if snapshots is not None else []
        self.watch_rvs: list[str] = []
        self.check_rvs: list[str] = []
        self.snapshot_rvs: list[str] = []
        self.reflector: Reflector | None = None
        self.clock = clock if clock is not None else [0.0]

    @staticmethod
    def _pop(answers: list[Any]) -> Any:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def list_fn(self) -> tuple[list[JSON], str]:
        result: tuple[list[JSON], str] = self._pop(self.lists)
        return result

    def check_fn(self, rv: str) -> tuple[list[JSON], str]:
        self.check_rvs.append(rv)
        if not self.checks:
            return [], rv
        result: tuple[list[JSON], str] = self._pop(self.checks)
        return result

    def snapshot_fn(self, rv: str) -> tuple[list[JSON], str]:
        self.snapshot_rvs.append(rv)
        result: tuple[list[JSON], str] = self._pop(self.snapshots)
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
            if isinstance(step, float):  # time passes
                self.clock[0] += step
                continue
            yield step


def make(
    server: FakeServer, *, resync_seconds: float = 0.0, sink: Sink | None = None, **kwargs: Any
) -> tuple[Reflector, Sink]:
    sink = sink if sink is not None else Sink()
    reflector = Reflector(
        kind="resourceslices",
        list_fn=server.list_fn,
        check_fn=server.check_fn,
        snapshot_fn=server.snapshot_fn,
        watch_fn=server.watch_fn,
        sink=sink,
        wait=lambda seconds: False,
        wall_clock=lambda: 1000.0 + server.clock[0],
        monotonic=lambda: server.clock[0],
        backoff=Backoff(rng=random.Random(1)),
        rng=random.Random(1),
        resync_seconds=resync_seconds,
        **kwargs,
    )
    server.reflector = reflector
    return reflector, sink


# ---- a reset of the API server's state


def test_it_relists_when_a_watch_answers_too_large_resource_version() -> None:
    server = FakeServer(
        lists=[([obj("a", 800), obj("b", 850)], "900"), ([obj("x", 30)], "40")],
        watches=[[TOO_LARGE], [("ADDED", obj("y", 41))]],
    )
    reflector, sink = make(server)

    reflector.run()

    assert sink.calls[1] == ("replace", ["x"], "40", RESET_TOO_LARGE)
    assert server.watch_rvs[:2] == ["900", "40"]
    assert reflector.health.relists == 1 and reflector.health.relist_reason == RESET_TOO_LARGE


def test_it_relists_when_the_check_before_watching_again_answers_too_large() -> None:
    server = FakeServer(
        lists=[([obj("a", 800)], "900"), ([obj("x", 30)], "40")],
        watches=[[("MODIFIED", obj("a", 901))], []],
        checks=[TOO_LARGE],
    )
    reflector, sink = make(server)

    reflector.run()

    assert server.check_rvs[0] == "901"  # checked after the first watch closed, not after the list
    assert ("replace", ["x"], "40", RESET_TOO_LARGE) in sink.calls
    assert server.watch_rvs[:2] == ["900", "40"]


def test_it_relists_when_an_event_brings_a_lower_resource_version_and_does_not_apply_it() -> None:
    server = FakeServer(
        lists=[([obj("a", 800)], "900"), ([obj("x", 30), obj("y", 35)], "40")],
        watches=[[("ADDED", obj("y", 35))], []],
    )
    reflector, sink = make(server)

    reflector.run()

    assert ("ADDED", "y", "35") not in sink.calls
    assert sink.reasons == [INITIAL, RESET_RV_BACKWARDS]
    assert reflector.resource_version == "40"


def test_it_relists_when_a_bookmark_goes_backwards() -> None:
    server = FakeServer(
        lists=[([obj("a", 800)], "900"), ([], "12")],
        watches=[[("BOOKMARK", bookmark(12))], []],
    )
    reflector, sink = make(server)

    reflector.run()

    assert sink.reasons == [INITIAL, RESET_RV_BACKWARDS]
    assert server.watch_rvs[:2] == ["900", "12"]


def test_it_relists_when_the_check_answers_a_lower_list_resource_version() -> None:
    # A server that ignores resourceVersion on lists: its list rv alone gives the reset away.
    server = FakeServer(
        lists=[([obj("a", 800)], "900"), ([obj("x", 3)], "4")],
        watches=[[], []],
        checks=[([obj("x", 3)], "4")],
    )
    reflector, sink = make(server)

    reflector.run()

    assert sink.reasons == [INITIAL, RESET_RV_BACKWARDS]


def test_it_never_compares_resource_versions_that_are_not_integers() -> None:
    server = FakeServer(
        lists=[([obj("a", 1)], "zz-900")],
        watches=[[("MODIFIED", {"metadata": {"uid": "a", "name": "a", "resourceVersion": "aa-1"}})]],
    )
    reflector, sink = make(server)

    reflector.run()

    assert sink.reasons == [INITIAL]
    assert ("MODIFIED", "a", "aa-1") in sink.calls


def test_it_relists_when_a_uid_changes_under_the_same_name_without_a_delete() -> None:
    server = FakeServer(
        lists=[([obj("uid-1", 10, name="slice-a")], "10"), ([obj("uid-2", 11, name="slice-a")], "11")],
        watches=[[("MODIFIED", obj("uid-2", 11, name="slice-a"))], []],
    )
    reflector, sink = make(server)

    reflector.run()

    assert sink.reasons == [INITIAL, RESET_UID_CHANGED]
    assert ("MODIFIED", "uid-2", "11") not in sink.calls


def test_it_accepts_a_new_uid_under_an_old_name_after_the_delete() -> None:
    server = FakeServer(
        lists=[([obj("uid-1", 10, name="slice-a")], "10")],
        watches=[
            [("DELETED", obj("uid-1", 11, name="slice-a")), ("ADDED", obj("uid-2", 12, name="slice-a"))]
        ],
    )
    reflector, sink = make(server)

    reflector.run()

    assert sink.reasons == [INITIAL]
    assert sink.calls[-1] == ("ADDED", "uid-2", "12")


def test_it_relists_when_the_check_returns_another_uid_for_a_name_it_holds() -> None:
    server = FakeServer(
        lists=[([obj("uid-1", 10, name="slice-a")], "10"), ([obj("uid-9", 99, name="slice-a")], "100")],
        watches=[[], []],
        checks=[([obj("uid-9", 99, name="slice-a")], "100")],
    )
    reflector, sink = make(server)

    reflector.run()

    assert sink.reasons == [INITIAL, RESET_UID_CHANGED]


def test_it_checks_a_stored_resource_version_against_held_uids_before_resuming() -> None:
    server = FakeServer(
        lists=[([obj("new", 5, name="slice-a")], "6")],
        watches=[[]],
        checks=[([obj("new", 5, name="slice-a")], "950")],
    )
    reflector, sink = make(server, resume_from="900", resume_names={("", "slice-a"): "old"})

    reflector.run()

    assert server.check_rvs[0] == "900"
    assert sink.reasons == [RESET_UID_CHANGED]
    assert "synced" not in sink.states[: sink.states.index("relisting")]


def test_it_still_relists_on_410_as_expired() -> None:
    server = FakeServer(
        lists=[([], "10"), ([], "50")],
        watches=[[KubeError(410, "Expired", "too old resource version: 10 (40)")], []],
    )
    reflector, sink = make(server)

    reflector.run()

    assert sink.reasons == [INITIAL, EXPIRED]


# ---- periodic resync


def test_it_resyncs_at_exactly_its_resource_version_then_watches_on_from_there() -> None:
    server = FakeServer(
        lists=[([obj("a", 5)], "10")],
        watches=[[("ADDED", obj("b", 11)), 301.0, ("BOOKMARK", bookmark(12))], []],
        snapshots=[([obj("a", 5), obj("b", 11)], "12")],
    )
    reflector, sink = make(server, resync_seconds=300)

    reflector.run()

    assert server.snapshot_rvs == ["12"]
    assert ("replace", ["a", "b"], "12", RESYNC) in sink.calls
    assert server.watch_rvs[:2] == ["10", "12"]


def test_it_does_not_resync_when_the_period_is_zero() -> None:
    server = FakeServer(lists=[([], "10")], watches=[[10_000.0, ("BOOKMARK", bookmark(11))], []])
    reflector, sink = make(server, resync_seconds=0)

    reflector.run()

    assert server.snapshot_rvs == []
    assert sink.reasons == [INITIAL]


def test_it_resyncs_from_the_newest_list_when_its_rv_was_compacted() -> None:
    server = FakeServer(
        lists=[([obj("a", 5)], "10"), ([obj("c", 70)], "80")],
        watches=[[400.0, ("BOOKMARK", bookmark(11))], []],
        snapshots=[KubeError(410, "Expired", "too old resource version")],
    )
    reflector, sink = make(server, resync_seconds=300)

    reflector.run()

    assert ("replace", ["c"], "80", RESYNC) in sink.calls
    assert server.watch_rvs[-1] == "80"


class PagedSink(Sink):
    """A sink that takes lists page by page, as the running mirror's does."""

    def begin_list(self, kind: str, reason: str) -> None:
        self.calls.append(("begin", reason))

    def page(self, kind: str, items: list[JSON]) -> None:
        self.calls.append(("page", [i["metadata"]["uid"] for i in items]))

    def end_list(self, kind: str, resource_version: str, reason: str) -> None:
        self.calls.append(("end", resource_version, reason))

    def abandon_list(self, kind: str) -> None:
        self.calls.append(("abandon",))


def _paged(server: FakeServer, pages: list[Any], resync_pages: list[Any]) -> tuple[Reflector, PagedSink]:
    """A reflector over a paged sink: `pages` answers each newest-state list (a list of pages, or an
    exception), `resync_pages` each list at exactly our rv."""

    def pages_fn() -> Iterator[tuple[list[JSON], str]]:
        yield from FakeServer._pop(pages)

    def snapshot_pages_fn(rv: str) -> Iterator[tuple[list[JSON], str]]:
        server.snapshot_rvs.append(rv)
        yield from FakeServer._pop(resync_pages)

    sink = PagedSink()
    reflector, _ = make(
        server, resync_seconds=300, sink=sink, pages_fn=pages_fn, snapshot_pages_fn=snapshot_pages_fn
    )
    return reflector, sink


def test_a_paged_sink_gets_the_resync_page_by_page_at_exactly_its_resource_version() -> None:
    server = FakeServer(lists=[], watches=[[("ADDED", obj("b", 11)), 301.0, ("BOOKMARK", bookmark(12))], []])
    reflector, sink = _paged(
        server,
        pages=[[([obj("a", 5)], "10")]],
        resync_pages=[[([obj("a", 5)], "12"), ([obj("b", 11)], "12")]],
    )

    reflector.run()

    assert server.snapshot_rvs == ["12"]
    resync = sink.calls[sink.calls.index(("begin", RESYNC)) :]
    assert resync[:4] == [("begin", RESYNC), ("page", ["a"]), ("page", ["b"]), ("end", "12", RESYNC)]
    assert not [c for c in sink.calls if c[0] == "replace"], "no list is handed over whole"
    assert server.watch_rvs[:2] == ["10", "12"]


def test_a_paged_resync_whose_rv_was_compacted_lists_the_newest_state_page_by_page() -> None:
    server = FakeServer(lists=[], watches=[[400.0, ("BOOKMARK", bookmark(11))], []])
    reflector, sink = _paged(
        server,
        pages=[[([obj("a", 5)], "10")], [([obj("c", 70)], "80"), ([obj("d", 75)], "80")]],
        resync_pages=[KubeError(410, "Expired", "too old resource version")],
    )

    reflector.run()

    assert ("abandon",) in sink.calls
    resync = sink.calls[len(sink.calls) - 1 - sink.calls[::-1].index(("begin", RESYNC)) :]
    assert resync[:4] == [("begin", RESYNC), ("page", ["c"]), ("page", ["d"]), ("end", "80", RESYNC)]
    assert server.watch_rvs[-1] == "80"


# ---- forbidden and unreachable, never synced


def test_it_reports_a_forbidden_list_as_forbidden_and_never_as_synced() -> None:
    denied = KubeError(403, "Forbidden", 'resourceslices is forbidden: User "x" cannot list resource')
    server = FakeServer(lists=[denied, denied, denied], watches=[])
    reflector, sink = make(server)
    calls = {"n": 0}

    def wait(seconds: float) -> bool:
        calls["n"] += 1
        return calls["n"] >= 3  # asked to stop after the third refusal

    reflector._wait = wait

    reflector.run()

    assert sink.states == ["forbidden", "forbidden", "forbidden", "stopped"]
    assert "forbidden" in reflector.health.error


def test_it_reports_unreachable_since_it_stopped_being_synced_and_synced_once_the_check_passes() -> None:
    refused = KubeError(0, "ConnectionError", "connection refused")
    server = FakeServer(
        lists=[([], "10")],
        watches=[[5.0, refused], [("BOOKMARK", bookmark(11))]],
        checks=[refused, ([], "10")],
    )
    reflector, sink = make(server)

    reflector.run()

    states = sink.states
    assert states[:3] == ["synced", "unreachable", "unreachable"]
    unreachable = sink.health_log[1]
    assert unreachable.since == 1005.0 and sink.health_log[2].since == 1005.0  # since it went away
    assert states[3] == "synced" and sink.health_log[3].confirmed_at == 1005.0


def test_it_stays_forbidden_when_lists_are_allowed_but_the_watch_is_not() -> None:
    denied = KubeError(403, "Forbidden", "cannot watch resource")
    server = FakeServer(lists=[([], "10")], watches=[[denied], [denied], [("BOOKMARK", bookmark(11))]])
    reflector, sink = make(server)

    reflector.run()

    assert sink.states[:4] == ["synced", "forbidden", "forbidden", "synced"]  # synced by the bookmark
