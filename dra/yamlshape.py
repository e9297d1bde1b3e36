"""The shape a YAML text may have at most, read from the parser's events before anything is built: nested
`MAX_DEPTH` collections deep, with aliases that stand for `MAX_ALIAS_NODES` nodes in all.

Composing, constructing and every step after (a deep copy, a walk to JSON, a schema check, a dump) recurse
once per level, so a few thousand ``[`` are a RecursionError; and an alias is written out as a copy of its
anchor (as kubectl does), so a few hundred bytes of aliases of aliases ("billion laughs") stand for
billions of nodes. The events come from libyaml's parser when PyYAML is built with it (the pure-Python
one otherwise): iterative, linear in the text, and the grammar kubectl's YAML library (a port of libyaml)
reads. `check_yaml_shape` counts as they come and stops with a `YamlShapeError`:

* at a collection nested more than `MAX_DEPTH` levels, an alias counted as the levels it stands for;
* at the alias that makes the aliases stand for more than `MAX_ALIAS_NODES` nodes in all (Kubernetes
  objects hardly ever use aliases; callers carry the count from one document of a stream to the next,
  so many documents cannot add up);
* at an alias inside the node it names (a recursive structure no JSON can hold).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass

import yaml

#: collection levels a text may nest: a Pod is about a dozen, and every recursive step after loading
#: (a few frames per level) stays far below Python's recursion limit
MAX_DEPTH = 100
#: nodes the aliases of a text (or a stream of them) may stand for in all, once written out
MAX_ALIAS_NODES = 10_000

_EventLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlShapeError(ValueError):
    """A text beyond `MAX_DEPTH` or `MAX_ALIAS_NODES`: `message` names the limit, `line` (0-based) where."""

    def __init__(self, message: str, *, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def check_yaml_shape(text: str, *, alias_nodes: int = 0) -> int:
    """The nodes the aliases of `text` stand for, plus `alias_nodes` (those of the stream so far); a
    `YamlShapeError` beyond the limits, a `yaml.MarkedYAMLError` where the text does not parse (within
    the limits up to there)."""
    try:
        return _check_events(yaml.parse(text, Loader=_EventLoader), alias_nodes)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        if mark is None:
            raise
        if "nesting depth" in str(error.problem):  # libyaml's own limit (1,000 flow levels)
            raise _too_deep(mark.line) from None
        # the parser reads ahead of its events (a `[` might open a key), so an error can stop it before
        # the events of what precedes it: read those up to the error, then report the error
        with contextlib.suppress(yaml.MarkedYAMLError):
            _check_events(yaml.parse(text[: mark.index], Loader=_EventLoader), alias_nodes)
        raise


@dataclass
class _Open:
    """A collection being read."""

    anchor: str | None
    nodes_before: int
    level: int
    deepest: int  # the most levels reached inside it, aliases expanded


def _check_events(events: Iterable[yaml.Event], alias_nodes: int) -> int:
    anchors: dict[str, tuple[int, int] | None] = {}  # finished → (nodes, levels) expanded; open → None
    stack: list[_Open] = []
    nodes = 0  # aliases counted as the nodes they stand for
    for event in events:
        if isinstance(event, yaml.DocumentStartEvent):
            anchors.clear()
        elif isinstance(event, yaml.CollectionStartEvent):
            level = len(stack) + 1
            if level > MAX_DEPTH:
                raise _too_deep(_line(event))
            if event.anchor is not None:
                anchors[event.anchor] = None
            stack.append(_Open(event.anchor, nodes, level, level))
            nodes += 1
        elif isinstance(event, yaml.CollectionEndEvent):
            done = stack.pop()
            if done.anchor is not None:
                anchors[done.anchor] = (nodes - done.nodes_before, done.deepest - done.level + 1)
            if stack:
                stack[-1].deepest = max(stack[-1].deepest, done.deepest)
        elif isinstance(event, yaml.ScalarEvent):
            nodes += 1
            if event.anchor is not None:
                anchors[event.anchor] = (1, 0)
        elif isinstance(event, yaml.AliasEvent):
            name = event.anchor or ""
            if name not in anchors:
                nodes += 1  # undefined: the loader says so
                continue
            expansion = anchors[name]
            if expansion is None:
                raise YamlShapeError(
                    f"alias *{name} is inside the node it names (a recursive structure)",
                    line=_line(event),
                )
            size, levels = expansion
            if len(stack) + levels > MAX_DEPTH:
                raise _too_deep(_line(event))
            alias_nodes += size
            if alias_nodes > MAX_ALIAS_NODES:
                raise YamlShapeError(
                    f"aliases expand to more than {MAX_ALIAS_NODES} nodes (Kubernetes manifests hardly "
                    "ever need aliases: write the values out)",
                    line=_line(event),
                )
            nodes += size
            if stack:
                stack[-1].deepest = max(stack[-1].deepest, len(stack) + levels)
    return alias_nodes


def _line(event: yaml.Event) -> int:
    return event.start_mark.line if event.start_mark is not None else 0


def _too_deep(line: int) -> YamlShapeError:
    return YamlShapeError(
        f"nests more than {MAX_DEPTH} levels deep (Kubernetes objects nest far less)", line=line
    )
