"""The one search box: rooms register what they can find, the search page and `/api/search/` ask them all.

A room registers a `SearchProvider` in its AppConfig.ready (`register_provider`), so a lower room never
imports a higher one: the inventory finds devices, pods, claims, nodes and DeviceTaintRules, the
maintenance room finds maintenances. A provider answers two questions about a query — how many objects
match (`count`) and the matches from `start` to `stop` (`hits`), exact names first — and must stay cheap:
indexed equality for exact names, and bounded `icontains` (LIMIT) for the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

#: the longest query looked up (longer ones are cut: no name in Kubernetes is longer than 253 + 1 + 63)
MAX_QUERY = 320


@dataclass(frozen=True)
class SearchHit:
    kind: str
    name: str
    url: str
    namespace: str = ""
    #: a short line under the name ("worker-03 · gpu.example.com", "Running on node-1")
    detail: str = ""
    #: the name (or namespace/name) is the query itself
    exact: bool = False


@dataclass(frozen=True)
class SearchProvider:
    kind: str  # the API's name for it: "devices", "pods", …
    label: str  # the page's: "Devices", "Pods", …
    order: int  # groups are shown in this order (exact matches first)
    count: Callable[[str], int]
    hits: Callable[[str, int, int], list[SearchHit]]  # (query, start, stop)
    #: the room's own list filtered by the query, for "N more" ("" when it has none)
    more_url: Callable[[str], str] = field(default=lambda q: "")


_providers: dict[str, SearchProvider] = {}


def register_provider(provider: SearchProvider) -> None:
    _providers[provider.kind] = provider


def providers() -> list[SearchProvider]:
    return sorted(_providers.values(), key=lambda p: (p.order, p.kind))


def kinds() -> list[str]:
    return [p.kind for p in providers()]


def clean_query(raw: str) -> str:
    """The query as looked up: trimmed, without control characters, capped."""
    return "".join(ch for ch in raw if ch.isprintable()).strip()[:MAX_QUERY]


@dataclass
class SearchGroup:
    kind: str
    label: str
    hits: list[SearchHit]
    total: int
    more_url: str

    @property
    def more(self) -> int:
        return max(0, self.total - len(self.hits))

    @property
    def has_exact(self) -> bool:
        return any(h.exact for h in self.hits)


def search_groups(*, query: str, per_kind: int, kinds: Sequence[str] | None = None) -> list[SearchGroup]:
    """Each kind's first `per_kind` matches and how many there are; kinds with an exact match first,
    kinds without matches left out."""
    q = clean_query(query)
    if not q:
        return []
    groups = []
    for provider in providers():
        if kinds is not None and provider.kind not in kinds:
            continue
        # One more than shown: when they all fit, their number is the count and no COUNT(*) is run.
        hits = provider.hits(q, 0, per_kind + 1)
        if not hits:
            continue
        total = len(hits) if len(hits) <= per_kind else provider.count(q)
        groups.append(
            SearchGroup(provider.kind, provider.label, hits[:per_kind], total, provider.more_url(q))
        )
    return sorted(groups, key=lambda g: not g.has_exact)


class SearchResults(Sequence[SearchHit]):
    """Every match of every kind as one list (kind after kind), fetched only for the slice asked for:
    what `dradash.api.paginated` pages through."""

    def __init__(self, *, query: str, kinds: Sequence[str] | None = None) -> None:
        self.query = clean_query(query)
        chosen = [p for p in providers() if kinds is None or p.kind in kinds]
        self._parts = [(p, p.count(self.query) if self.query else 0) for p in chosen]
        self.totals = {p.kind: n for p, n in self._parts}

    def __len__(self) -> int:
        return sum(n for _, n in self._parts)

    @overload
    def __getitem__(self, index: int) -> SearchHit: ...
    @overload
    def __getitem__(self, index: slice) -> list[SearchHit]: ...
    def __getitem__(self, index: int | slice) -> SearchHit | list[SearchHit]:
        if isinstance(index, int):
            found = self._slice(index, index + 1)
            if not found:
                raise IndexError(index)
            return found[0]
        start, stop, step = index.indices(len(self))
        if step != 1:
            raise ValueError("search results are sliced with step 1")
        return self._slice(start, stop)

    def _slice(self, start: int, stop: int) -> list[SearchHit]:
        out: list[SearchHit] = []
        position = 0
        for provider, total in self._parts:
            low, high = max(start - position, 0), min(stop - position, total)
            if low < high:
                out.extend(provider.hits(self.query, low, high))
            position += total
            if position >= stop:
                break
        return out

    def __iter__(self) -> Iterator[SearchHit]:
        return iter(self._slice(0, len(self)))
