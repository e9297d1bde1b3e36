"""One open watch: query parameters, the queue the store feeds, and the wire lines it writes.

The store calls `deliver` from whatever thread commits a change, under the store lock; the event goes
into the watch's inbox, in commit order. The loop's `_LoopWaker` then wakes the event loop once for every
watch with something in its inbox (`call_soon_threadsafe` is a write to the loop's self-pipe: one per event
per watch was a fifth of a burst's controller time), and only after the committing thread has let go of the
store lock (the write lets go of the GIL; under the lock, every other writer waited through the hand-off).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from simcluster import tables
from simcluster.errors import ApiError, bad_request, invalid_list_options, list_option_causes
from simcluster.jsondata import dumps
from simcluster.resources import ResourceDef
from simcluster.selectors import Matcher
from simcluster.store import Store, WatchEvent

Obj = dict[str, Any]
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
MAX_PENDING_EVENTS = 100_000


def event_line(event_type: str, raw: bytes) -> bytes:
    """`{"type":…,"object":…}` on one line: clients split the stream on newlines."""
    return b'{"type":"' + event_type.encode() + b'","object":' + raw + b"}\n"


@dataclass(frozen=True)
class _Close:
    """Queue sentinel: end this watch now."""


@dataclass(frozen=True)
class _Bookmark:
    rv: int


@dataclass(frozen=True)
class WatchParams:
    since: int | None  # None: start with ADDED for every current object
    send_initial: bool
    bookmarks: bool
    timeout: float
    matcher: Matcher | None
    as_table: bool
    include_object: str


def _flag(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1")


def parse_watch_params(
    query: Mapping[str, str],
    resource: ResourceDef,
    *,
    current_rv: int,
    default_timeout: float,
    matcher: Matcher | None,
    as_table: bool,
) -> WatchParams:
    bookmarks = _flag(query.get("allowWatchBookmarks"))
    rv_param = query.get("resourceVersion", "")
    send_initial_raw = query.get("sendInitialEvents")
    send_initial = _flag(send_initial_raw)
    causes = list_option_causes(query, watch=True)
    if causes:
        raise invalid_list_options(causes)
    since: int | None
    if send_initial or rv_param in ("", "0"):
        since = None
    else:
        try:
            since = int(rv_param)
        except ValueError as error:
            raise bad_request(f'invalid resource version "{rv_param}"') from error
    if send_initial_raw is not None and not send_initial and rv_param in ("", "0"):
        since = current_rv  # sendInitialEvents=false: from now on, without the current state
    try:
        timeout = float(query.get("timeoutSeconds") or default_timeout)
    except ValueError as error:
        raise bad_request("timeoutSeconds must be a number") from error
    return WatchParams(
        since=since,
        send_initial=send_initial,
        bookmarks=bookmarks,
        timeout=timeout,
        matcher=matcher,
        as_table=as_table,
        include_object=query.get("includeObject", "Metadata"),
    )


class _LoopWaker:
    """One per event loop: the watches whose inbox has something, and one wake-up of the loop for all of
    them. The flags are cleared before the work they stand for, so an item handed over meanwhile is either
    moved by this drain or schedules the next."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._due: deque[WatchStream] = deque()
        self._woken = False

    def due(self, stream: WatchStream) -> None:
        """`stream`'s inbox has something (any thread)."""
        self._due.append(stream)
        if not self._woken:
            self._woken = True
            stream.store.lock.after_release(self._wake)

    def _wake(self) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody left to read the events
            self.loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        self._woken = False
        while self._due:
            self._due.popleft()._drain()


_wakers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopWaker] = weakref.WeakKeyDictionary()


class WatchStream:
    """Streams one watch response until its timeout, a drop, or the client going away."""

    def __init__(
        self, store: Store, resource: ResourceDef, namespace: str | None, params: WatchParams
    ) -> None:
        self.store = store
        self.resource = resource
        self.namespace = namespace
        self.params = params
        loop = asyncio.get_running_loop()
        self._waker = _wakers.get(loop) or _wakers.setdefault(loop, _LoopWaker(loop))
        self.queue: asyncio.Queue[WatchEvent | _Close | _Bookmark] = asyncio.Queue()
        # Filled from any thread, moved to `queue` on the loop by `_drain`; `_due`: the waker has this watch.
        self._inbox: deque[WatchEvent | _Close | _Bookmark] = deque()
        self._due = False
        self._columns_sent = False
        self._overflowed = False

    # -- feeding (any thread) -------------------------------------------------------------------------

    def deliver(self, event: WatchEvent) -> None:
        if self._overflowed:
            return
        if self.queue.qsize() + len(self._inbox) >= MAX_PENDING_EVENTS:
            # The client cannot keep up: end its watch, as kube's watch cache does; it re-watches
            # from the last resourceVersion it saw.
            self._overflowed = True
            self.close()
            return
        self._hand_over(event)

    def close(self) -> None:
        self._hand_over(_Close())

    def request_bookmark(self) -> None:
        """Queue a bookmark behind every event already handed over (called on the loop).

        The RV is read under the store lock, and every commit up to it has already put its event in the
        inbox, ahead of the bookmark, so the bookmark never claims an event the client has not seen.
        """
        with self.store.lock:
            self._inbox.append(_Bookmark(self.store.resource_version))
            self._drain()

    def _hand_over(self, item: WatchEvent | _Close) -> None:
        self._inbox.append(item)
        if not self._due:
            self._due = True
            self._waker.due(self)

    def _drain(self) -> None:
        """On the loop: everything in the inbox to the queue, in order. The flag is cleared first, so an
        item appended meanwhile either is moved by this drain or makes the watch due again."""
        self._due = False
        while self._inbox:
            self.queue.put_nowait(self._inbox.popleft())

    # -- rendering ------------------------------------------------------------------------------------

    def render(self, event_type: str, obj: Obj, raw: bytes) -> bytes:
        if not self.params.as_table:
            return event_line(event_type, raw)
        doc = tables.table(
            self.resource,
            [obj],
            include_object=self.params.include_object,
            with_columns=not self._columns_sent,
            now=self.store.clock_now(),
        )
        self._columns_sent = True
        return event_line(event_type, dumps(doc))

    def bookmark(self, rv: int, *, initial_end: bool = False) -> bytes:
        meta: Obj = {"resourceVersion": str(rv)}
        if initial_end:
            meta["annotations"] = {INITIAL_EVENTS_END: "true"}
        body = {"kind": self.resource.kind, "apiVersion": self.resource.api_version, "metadata": meta}
        return event_line("BOOKMARK", dumps(body))

    def translate(self, event: WatchEvent) -> bytes:
        """The line for a store event; selector transitions become ADDED/DELETED like the watch cache."""
        entry = event.entry
        matcher = self.params.matcher
        if matcher is None:
            return self.render(event.type, entry.obj, entry.raw)
        new_match = matcher(entry.obj)
        old_match = event.old is not None and matcher(event.old.obj)
        if event.type == "ADDED":
            return self.render("ADDED", entry.obj, entry.raw) if new_match else b""
        if event.type == "DELETED":
            return self.render("DELETED", entry.obj, entry.raw) if (old_match or new_match) else b""
        if new_match and old_match:
            return self.render("MODIFIED", entry.obj, entry.raw)
        if new_match:
            return self.render("ADDED", entry.obj, entry.raw)
        if old_match:
            return self.render("DELETED", entry.obj, entry.raw)
        return b""

    # -- serving --------------------------------------------------------------------------------------

    async def serve(self, request: web.Request, *, bookmark_interval: float) -> web.StreamResponse:
        response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        try:
            start_rv, initial, backlog, unsubscribe = self.store.open_watch(
                self.resource.plural,
                namespace=self.namespace,
                since_rv=self.params.since,
                deliver=self.deliver,
            )
        except ApiError as error:
            if error.status != 410:
                raise
            # Too old: like kube, a 200 stream whose only event is an ERROR carrying the 410 Status.
            await response.prepare(request)
            await response.write(event_line("ERROR", dumps(error.to_status())))
            await response.write_eof()
            return response
        try:
            await response.prepare(request)
            matcher = self.params.matcher
            chunks = [
                self.render("ADDED", e.obj, e.raw) for e in initial if matcher is None or matcher(e.obj)
            ]
            if self.params.send_initial and self.params.bookmarks:  # the cacher's: no bookmarks, no end mark
                chunks.append(self.bookmark(start_rv, initial_end=True))
            chunks.extend(self.translate(e) for e in backlog)
            if any(chunks):
                await response.write(b"".join(chunks))
            await self._pump(response, bookmark_interval)
            with contextlib.suppress(ConnectionResetError, RuntimeError):
                await response.write_eof()
        except ConnectionResetError:
            pass  # the client went away; nothing to tell it
        finally:
            unsubscribe()
        return response

    async def _pump(self, response: web.StreamResponse, bookmark_interval: float) -> None:
        """Write queued events in batches until the timeout (ending with a bookmark) or a drop."""
        bookmarks = self.params.bookmarks
        deadline = time.monotonic() + self.params.timeout
        next_bookmark = time.monotonic() + bookmark_interval
        bookmark_pending = False
        closing = False
        while True:
            now = time.monotonic()
            if now >= deadline and not closing:
                if not bookmarks:
                    return
                closing = True
                self.request_bookmark()  # a last bookmark before closing, as kube sends
            wait = 5.0 if closing else max(0.0, min(deadline, next_bookmark) - now)
            try:
                item = await asyncio.wait_for(self.queue.get(), timeout=wait)
            except TimeoutError:
                if closing:
                    return
                if bookmarks and time.monotonic() >= next_bookmark and not bookmark_pending:
                    self.request_bookmark()
                    bookmark_pending = True
                next_bookmark = time.monotonic() + bookmark_interval
                continue
            chunks: list[bytes] = []
            stop = False
            while True:
                if isinstance(item, _Close):
                    stop = True
                elif isinstance(item, _Bookmark):
                    bookmark_pending = False
                    chunks.append(self.bookmark(item.rv))
                    stop = closing
                else:
                    chunks.append(self.translate(item))
                if stop or self.queue.empty():
                    break
                item = self.queue.get_nowait()
            if any(chunks):
                await response.write(b"".join(chunks))
            if stop:
                return
