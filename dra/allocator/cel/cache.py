"""The compiled-expression cache both engines share: an LRU keyed by (expression, selector or value)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

DEFAULT_CACHE_SIZE = 4096

Compiled = TypeVar("Compiled")


class CompileCache(Generic[Compiled]):
    """``lookup`` then, on a miss, compile outside the lock and ``store``; two threads missing at once may
    both compile, and the later result is kept."""

    def __init__(self, size: int = DEFAULT_CACHE_SIZE) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[str, bool], Compiled] = OrderedDict()
        self._lock = threading.Lock()

    def lookup(self, key: tuple[str, bool]) -> Compiled | None:
        with self._lock:
            cached = self._entries.get(key)
            if cached is not None:
                self._entries.move_to_end(key)
            return cached

    def store(self, key: tuple[str, bool], compiled: Compiled) -> Compiled:
        with self._lock:
            self._entries[key] = compiled
            if len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return compiled

    def __len__(self) -> int:
        return len(self._entries)
