"""What the converter takes at most: YAML nested `MAX_DEPTH` levels deep, aliases that stand for
`MAX_ALIAS_NODES` nodes in all.

ruamel.yaml composes nodes recursively, and so does every step after it (the deep copy, `stream.to_plain`,
the schema check, the dumper), so a document of thousands of ``[`` would exhaust Python's recursion with a
RecursionError; and `to_plain` (like kubectl) writes an alias out as a copy of its anchor, so a few hundred
bytes of nested aliases ("billion laughs") would expand to gigabytes. The composer used for every load
(`LimitedComposer`) counts as it goes — its scanner and parser are iterative, so nothing recursed before
the count — and stops with a `StreamLimitError`:

* at a collection nested more than `MAX_DEPTH` levels, aliases counted as the levels they stand for;
* at the alias that makes the stream's aliases stand for more than `MAX_ALIAS_NODES` nodes in all
  (Kubernetes manifests hardly ever use aliases; the cap is per stream, so many documents cannot add up);
* at an alias inside the node it names (a recursive structure no JSON can hold).

The scanner (`LimitedScanner`) stops at a flow collection (``[``, ``{``) nested more than `MAX_DEPTH` deep
already: it reads up to 1,024 characters ahead of each one, in time quadratic in the nesting (a second
to reach the composer's count through a line of ``[``).
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.composer import Composer
from ruamel.yaml.events import AliasEvent, MappingStartEvent, SequenceStartEvent
from ruamel.yaml.scanner import RoundTripScanner

#: collection levels a document may nest: a Pod is about a dozen, and every recursive step after
#: loading (a few frames per level) stays far below Python's recursion limit
MAX_DEPTH = 100
#: nodes the aliases of one stream may stand for in all, once written out
MAX_ALIAS_NODES = 10_000


class StreamLimitError(ValueError):
    """A stream beyond what the converter takes; `message` names the limit (and where, once located)."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line  # 0-based, in the text that was loaded

    def located(self, document: int, first_line: int) -> StreamLimitError:
        """The same error naming the document (1-based) and the stream's line, for a text at `first_line`."""
        where = f"document {document}" + (
            f", line {self.line + 1 + first_line}" if self.line is not None else ""
        )
        return StreamLimitError(f"{where}: {self.message}")


class AliasBudget:
    """The nodes the aliases of one stream have stood for so far (shared by the loads of its documents)."""

    def __init__(self, limit: int = MAX_ALIAS_NODES) -> None:
        self.limit = limit
        self.used = 0


def _too_deep(line: int) -> StreamLimitError:
    return StreamLimitError(
        f"nests more than {MAX_DEPTH} levels deep (Kubernetes objects nest far less)", line=line
    )


class LimitedComposer(Composer):
    """ruamel.yaml's composer within `MAX_DEPTH` and the stream's `AliasBudget` (see the module docstring)."""

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        self.budget = AliasBudget()  # the stream's, set by whoever makes the YAML
        self.levels = 0  # collections around the node being composed
        self.nodes = 0  # nodes composed so far, an alias counted as the nodes it stands for
        self.deepest = 0  # the most levels reached, for the levels an anchored node spans
        self.expansion: dict[Any, tuple[int, int]] = {}  # a finished anchor → (its nodes, its levels)

    def compose_document(self: Any) -> Any:
        self.expansion = {}
        return super().compose_document()

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.parser.peek_event()
        if isinstance(event, AliasEvent):
            self._count_alias(event)
            return super().compose_node(parent, index)
        outer = self.levels
        nested = isinstance(event, MappingStartEvent | SequenceStartEvent)
        if outer + nested > MAX_DEPTH:
            raise _too_deep(event.start_mark.line)
        if event.anchor is not None:
            self.expansion.pop(event.anchor, None)  # until it is finished, an alias to it is recursive
        first, deepest = self.nodes, self.deepest
        self.nodes += 1
        self.levels = self.deepest = outer + nested
        node = super().compose_node(parent, index)
        if event.anchor is not None:
            self.expansion[event.anchor] = (self.nodes - first, self.deepest - outer)
        self.levels, self.deepest = outer, max(deepest, self.deepest)
        return node

    def _count_alias(self, event: Any) -> None:
        expansion = self.expansion.get(event.anchor)
        if expansion is None:
            if event.anchor in self.anchors:
                raise StreamLimitError(
                    f"alias *{event.anchor} is inside the node it names (a recursive structure)",
                    line=event.start_mark.line,
                )
            return  # undefined: ruamel.yaml's ComposerError says so
        nodes, levels = expansion
        if self.levels + levels > MAX_DEPTH:
            raise _too_deep(event.start_mark.line)
        self.budget.used += nodes
        if self.budget.used > self.budget.limit:
            raise StreamLimitError(
                f"aliases expand to more than {self.budget.limit} nodes (Kubernetes manifests hardly "
                "ever need aliases: write the values out)",
                line=event.start_mark.line,
            )
        self.nodes += nodes
        self.deepest = max(self.deepest, self.levels + levels)


class LimitedScanner(RoundTripScanner):
    """ruamel.yaml's round-trip scanner, refusing flow collections nested more than `MAX_DEPTH` deep
    (each is a level: the composer would refuse them too, after the scanner's quadratic look-ahead)."""

    def fetch_flow_collection_start(self, TokenClass: Any, to_push: str) -> None:  # noqa: N803 (ruamel's name)
        if self.flow_level >= MAX_DEPTH:
            raise _too_deep(self.reader.line)
        super().fetch_flow_collection_start(TokenClass, to_push)
