"""`sync_once` fetches list pages ahead of the one it writes: in order, at most a few ahead, the list's
error raised where the pages are written, and nothing left running when the writer stops early."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from inventory.kube import KubeError
from inventory.mirror.runner import ReadAhead


def _threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "list-read-ahead"]


def _wait_gone() -> None:
    deadline = time.monotonic() + 5
    while _threads() and time.monotonic() < deadline:
        time.sleep(0.01)


def _counted(count: int, fetched: list[int]) -> Iterator[int]:
    """Pages 0 … count-1, each noted in `fetched` as the server hands it over."""
    for i in range(count):
        fetched.append(i)
        yield i


def test_it_yields_every_page_in_order() -> None:
    assert list(ReadAhead(iter(range(50)))) == list(range(50))
    _wait_gone()
    assert not _threads()


def test_it_fetches_at_most_depth_pages_ahead_of_the_writer() -> None:
    fetched: list[int] = []
    pages = _counted(20, fetched)

    seen = []
    for page in ReadAhead(pages, depth=2):
        time.sleep(0.02)  # the writer is slower than the server
        seen.append(page)
        # fetched: what was queued (≤ 2), the one being handed over, and this one
        assert len(fetched) - len(seen) <= 3
    assert seen == list(range(20))


def test_a_list_that_fails_mid_way_raises_after_the_pages_before_it() -> None:
    def pages() -> Iterator[int]:
        yield 1
        yield 2
        raise KubeError(410, "Expired", "continue token expired")

    seen = []
    with pytest.raises(KubeError, match="continue token expired"):
        for page in ReadAhead(pages()):
            seen.append(page)
    assert seen == [1, 2]


def test_a_writer_that_stops_early_stops_the_fetching() -> None:
    fetched: list[int] = []
    pages = _counted(1000, fetched)

    with pytest.raises(RuntimeError):
        for page in ReadAhead(pages, depth=2):
            if page == 3:
                raise RuntimeError("the database went away")
    _wait_gone()
    assert not _threads()
    assert len(fetched) < 10


def test_it_starts_fetching_before_the_first_page_is_asked_for() -> None:
    """sync_once computes availability while the pods' first pages arrive."""
    fetched: list[int] = []
    pages = _counted(10, fetched)

    ahead = ReadAhead(pages, depth=4)
    deadline = time.monotonic() + 5
    while len(fetched) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(fetched) == 5  # four queued and one waiting for room, before any `next`
    assert list(ahead) == list(range(10))


def test_closing_it_unread_stops_the_fetching() -> None:
    ahead = ReadAhead(iter(range(1000)), depth=2)
    ahead.close()
    _wait_gone()
    assert not _threads()
