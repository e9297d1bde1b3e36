"""What the converter takes at most: YAML nested this deep, and no deeper.

ruamel.yaml composes nodes recursively, and so does every step after it (the deep copy, `stream.to_plain`,
the schema check, the dumper), so a document of thousands of ``[`` would exhaust Python's recursion with a
RecursionError. The composer used for every load (`LimitedComposer`) counts collection levels as it
goes and stops at `MAX_DEPTH` with a `StreamLimitError` instead — its scanner and parser are iterative,
so nothing recursed before the count.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.composer import Composer
from ruamel.yaml.events import MappingStartEvent, SequenceStartEvent

#: collection levels a document may nest: a Pod is about a dozen, and every recursive step after
#: loading (a few frames per level) stays far below Python's recursion limit
MAX_DEPTH = 100


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


class LimitedComposer(Composer):
    """ruamel.yaml's composer, refusing documents that nest more than `MAX_DEPTH` collections."""

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        self.levels = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.parser.peek_event()
        if not isinstance(event, MappingStartEvent | SequenceStartEvent):
            return super().compose_node(parent, index)
        self.levels += 1
        if self.levels > MAX_DEPTH:
            raise StreamLimitError(
                f"nests more than {MAX_DEPTH} levels deep (Kubernetes objects nest far less)",
                line=event.start_mark.line,
            )
        node = super().compose_node(parent, index)
        self.levels -= 1
        return node
