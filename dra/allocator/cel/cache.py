"""The compiled-expression cache both engines share: an LRU keyed by (expression, selector or value)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

from .cost import MAX_EXPRESSION_BYTES
from .errors import CelError

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


class CachingCompiler(Generic[Compiled]):
    """What both engines do around compiling: the size check, the cache, selectors vs values.
    An engine sets ``_cache`` and ``compile_count`` and implements ``_compile_checked``."""

    _cache: CompileCache[Compiled]
    compile_count: int

    def compile(self, expression: str) -> Compiled:
        """A selector: must evaluate to bool (or dyn, checked at runtime). Cached per expression."""
        return self._cached(expression, True)

    def compile_value(self, expression: str) -> Compiled:
        """Any expression (derived attributes): use ``evaluate``. Same limits, separate cache entries."""
        return self._cached(expression, False)

    def cache_info(self) -> tuple[int, int]:
        """(entries, capacity) of the compiled-expression cache."""
        return len(self._cache), self._cache.size

    def _cached(self, expression: str, selector: bool) -> Compiled:
        key = (expression, selector)
        cached = self._cache.lookup(key)
        if cached is None:  # compiled outside the cache's lock: it takes milliseconds
            cached = self._cache.store(key, self._compile_uncached(expression, require_bool=selector))
        return cached

    def _compile_uncached(self, expression: str, *, require_bool: bool = True) -> Compiled:
        if not isinstance(expression, str):
            raise CelError(f"selector expression must be a string, not {type(expression).__name__}")
        size = len(expression.encode("utf-8"))
        if size > MAX_EXPRESSION_BYTES:
            raise CelError(f"selector expression too long: {size} bytes, the limit is {MAX_EXPRESSION_BYTES}")
        compiled = self._compile_checked(expression, require_bool=require_bool)
        self.compile_count += 1
        return compiled

    def _compile_checked(self, expression: str, *, require_bool: bool) -> Compiled:
        raise NotImplementedError
