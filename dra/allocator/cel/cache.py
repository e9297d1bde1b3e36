"""The compiled-expression cache both engines share: an LRU keyed by (expression, selector or value)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

DEFAULT_CACHE_SIZE = 4096

Compiled = TypeVar("Compiled")


class CompileCache(Generic[Compiled]):
    """Compiles each key once; two threads missing at once may both compile, and one result is kept."""

    def __init__(self, size: int = DEFAULT_CACHE_SIZE) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[str, bool], Compiled] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, bool], compile_: Callable[[], Compiled]) -> Compiled:
        with self._lock:
            cached = self._entries.get(key)
            if cached is not None:
                self._entries.move_to_end(key)
                return cached
        compiled = compile_()  # outside the lock: compiling takes milliseconds
        with self._lock:
            self._entries[key] = compiled
            if len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return compiled

    def __len__(self) -> int:
        return len(self._entries)
