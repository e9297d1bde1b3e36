"""A YAML stream in, the same stream with its old DRA documents converted out; everything else byte-for-byte.

The stream is cut into documents at the lines YAML itself reserves (``---`` and ``...`` at column 0 end
any scalar, so this cut is exact). A document that does not change is copied as it was. A document that
does is loaded with ruamel.yaml's round-trip loader, converted in place by `rules.upgrade_object` (comments
travel with the fields they belong to), checked against the 1.37 schema and dumped with the indentation
the document itself uses, so the diff shows the changed fields and little else.

Before ruamel.yaml sees a document, `dra.yamlshape` checks its nesting and aliases from libyaml's events
(the count of aliases runs across the stream): ruamel composes recursively, and its scanner reads up to
1,024 characters ahead of every ``[``, in time quadratic in the nesting. A document libyaml cannot parse
is refused with libyaml's words, never handed to ruamel: ruamel (YAML 1.2) takes a few texts libyaml
(YAML 1.1, the grammar kubectl reads) does not, and would compose what the check never saw.
"""

from __future__ import annotations

import difflib
import io
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import yaml as pyyaml
from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from ..yamlshape import YamlShapeError, check_yaml_shape
from .rules import (
    ANNOTATION_COMPILED_AT,
    ANNOTATION_COMPILED_SELECTOR,
    TARGET_API_VERSION,
    FieldProblem,
    Outcome,
    TaintInventory,
    upgrade_object,
)
from .schema import schema_problems

_MARKER = re.compile(r"^(---|\.\.\.)(?=[ \t\r\n]|$)")
_BARE_START = re.compile(r"^---[ \t]*(#.*)?\r?\n?$")


class StreamLimitError(ValueError):
    """A stream beyond what the converter takes (`dra.yamlshape`, or too many documents); `message` names
    the limit, and the document and line where it was passed."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass
class DocumentResult:
    index: int  # 1-based position in the stream
    action: str  # "kept" | "converted" | "refused"
    original: str
    text: str
    kind: str = ""
    name: str = ""
    from_version: str = ""
    to_version: str = ""
    notes: list[str] = field(default_factory=list)
    problems: list[FieldProblem] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.action == "converted" and self.text != self.original

    @property
    def errors(self) -> list[str]:
        return [str(p) for p in self.problems]


@dataclass
class StreamResult:
    source: str
    original: str
    text: str
    documents: list[DocumentResult]

    @property
    def changed(self) -> bool:
        return self.text != self.original

    @property
    def failed(self) -> bool:
        return any(d.problems for d in self.documents)

    def messages(self) -> list[str]:
        """`file:document N (Kind name): field: why` for every problem."""
        out = []
        for doc in self.documents:
            what = " ".join(x for x in (doc.kind, doc.name) if x)
            for problem in doc.problems:
                out.append(f"{self.source}: document {doc.index}{f' ({what})' if what else ''}: {problem}")
        return out

    def diff(self) -> str:
        return unified_diff(self.original, self.text, self.source)


def unified_diff(old: str, new: str, source: str) -> str:
    lines = difflib.unified_diff(_lines(old), _lines(new), fromfile=f"a/{source}", tofile=f"b/{source}", n=3)
    return "".join(lines)


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


# ----------------------------------------------------------------------------------- splitting


@dataclass
class _Chunk:
    header: str  # the `---` line, if the document has a bare one
    body: str
    footer: str  # the `...` line, if any
    first_line: int  # 0-based line of the body in the stream

    @property
    def text(self) -> str:
        return self.header + self.body + self.footer


def split_documents(text: str) -> list[str]:
    """The documents of a stream as text; joined they are the stream again."""
    return [c.text for c in _split(text)]


def _split(text: str) -> list[_Chunk]:
    chunks: list[_Chunk] = []
    header, first = "", 0
    body: list[str] = []

    def close(footer: str = "") -> None:
        chunks.append(_Chunk(header, "".join(body), footer, first))

    for line_no, line in enumerate(text.splitlines(keepends=True)):
        match = _MARKER.match(line)
        if match and match.group(1) == "---":
            if header or body:
                close()
            header, body, first = "", [], line_no
            if _BARE_START.match(line):
                header, first = line, line_no + 1
            else:
                body = [line]
        elif match:
            close(line)
            header, body, first = "", [], line_no + 1
        else:
            body.append(line)
    if header or body or not chunks:
        close()
    return chunks


# ----------------------------------------------------------------------------------- the YAML round trip


def guess_indent(text: str) -> tuple[int, int]:
    """(mapping indent, dash offset of block sequences) the document uses; (2, 0) when it cannot tell."""
    mapping: Counter[int] = Counter()
    dashes: Counter[int] = Counter()
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    for current, following in zip(lines, lines[1:], strict=False):
        stripped = current.lstrip(" ")
        column = len(current) - len(stripped)
        while stripped.startswith("- "):
            column += 2 + len(stripped[2:]) - len(stripped[2:].lstrip(" "))
            stripped = stripped[2:].lstrip(" ")
        if not re.match(r"^[^#'\"{\[][^#]*:\s*(#.*)?$", stripped):
            continue
        nested = following.lstrip(" ")
        delta = len(following) - len(nested) - column
        if nested.startswith("- ") or nested == "-":
            if delta >= 0:
                dashes[delta] += 1
        elif delta > 0:
            mapping[delta] += 1
    indent = mapping.most_common(1)[0][0] if mapping else 2
    offset = dashes.most_common(1)[0][0] if dashes else 0
    return indent, offset


def _yaml(indent: int = 2, offset: int = 0) -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-fold long lines
    yaml.indent(mapping=indent, sequence=offset + 2, offset=offset)
    return yaml


def _dump(yaml: YAML, data: Any) -> str:
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def to_plain(node: Any) -> Any:
    """Round-trip nodes as plain JSON values (the way kubectl turns the YAML into JSON)."""
    if isinstance(node, Mapping):
        return {str(k): to_plain(v) for k, v in node.items()}
    if isinstance(node, list | tuple):
        return [to_plain(v) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, datetime):
        text = node.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    if isinstance(node, date):
        return node.isoformat()
    return str(node)


def load_documents(text: str) -> list[Any]:
    """Every document of a stream as plain JSON (None for empty ones); a YAMLError (PyYAML's or ruamel's)
    if it does not parse, StreamLimitError if it is beyond `dra.yamlshape`."""
    documents, alias_nodes = [], 0
    for index, chunk in enumerate(_split(text), 1):
        alias_nodes = _check_shape(chunk, index, alias_nodes)
        documents.append(to_plain(_yaml().load(chunk.body)))
    return documents


def _check_shape(chunk: _Chunk, index: int, alias_nodes: int) -> int:
    """`check_yaml_shape` of a document (the `index`th), its error located in the stream."""
    try:
        return check_yaml_shape(chunk.body, alias_nodes=alias_nodes)
    except YamlShapeError as error:
        line = error.line + 1 + chunk.first_line
        raise StreamLimitError(f"document {index}, line {line}: {error.message}") from None


# ----------------------------------------------------------------------------------- the whole stream


def upgrade_text(
    text: str,
    *,
    source: str = "<stdin>",
    inventory: TaintInventory | None = None,
    max_documents: int | None = None,
) -> StreamResult:
    """Convert every old DRA document of a YAML stream; see the module docstring. StreamLimitError when a
    document is beyond the converter's limits (`dra.yamlshape`), or the stream has more than `max_documents`
    (counted before any is parsed): nothing is converted then."""
    chunks = _split(text)
    if max_documents is not None and len(chunks) > max_documents:
        raise StreamLimitError(f"too many documents: {len(chunks)}; the limit is {max_documents} documents")
    documents, alias_nodes = [], 0
    for index, chunk in enumerate(chunks, 1):
        try:
            alias_nodes = _check_shape(chunk, index, alias_nodes)
        except pyyaml.MarkedYAMLError as error:  # never handed to ruamel: see the module docstring
            refused = DocumentResult(index, "refused", chunk.text, chunk.text)
            refused.problems.append(FieldProblem("", f"invalid YAML: {_describe(error, chunk.first_line)}"))
            documents.append(refused)
        else:
            documents.append(_upgrade_chunk(chunk, index, inventory))
    return StreamResult(source, text, "".join(d.text for d in documents), documents)


def _upgrade_chunk(chunk: _Chunk, index: int, inventory: TaintInventory | None) -> DocumentResult:
    result = DocumentResult(index, "kept", chunk.text, chunk.text)
    indent, offset = guess_indent(chunk.body)
    yaml = _yaml(indent, offset)
    try:
        data = yaml.load(chunk.body)
    except MarkedYAMLError as error:
        result.action = "refused"
        result.problems.append(FieldProblem("", f"invalid YAML: {_describe(error, chunk.first_line)}"))
        return result
    except YAMLError as error:
        result.action = "refused"
        result.problems.append(FieldProblem("", f"invalid YAML: {error}"))
        return result
    outcome = upgrade_object(data, inventory=inventory, indent=indent)
    result.kind, result.name = outcome.kind, outcome.name
    result.from_version, result.to_version = outcome.from_version, outcome.to_version
    result.notes = outcome.notes
    result.problems = list(outcome.problems)
    result.action = outcome.action
    if outcome.action != "converted":
        return result
    for prefix, obj in _checked_objects(outcome):
        result.problems.extend(map(outcome.at_source, schema_problems(obj, prefix=prefix)))
    if result.problems:  # refused as every refused document is: its version stays, nothing was written
        result.action, result.to_version = "refused", ""
        return result
    result.text = _render(chunk, yaml, outcome)
    return result


def _checked_objects(outcome: Outcome) -> list[tuple[str, Any]]:
    """The converted objects to check against the 1.37 schema, with the path prefix that names them. A list
    (`kubectl get -o yaml` of several objects is a v1 List) has no schema of its own: its resource.k8s.io/v1
    items are checked, each under `items[N]`; its other items were not converted."""
    checked = []
    for number, obj in enumerate(outcome.objects):
        plain = to_plain(obj)
        prefix = f"[{number}]" if outcome.generated and len(outcome.objects) > 1 else ""
        items = (
            plain.get("items")
            if isinstance(plain, Mapping) and str(plain.get("kind")).endswith("List")
            else None
        )
        if not isinstance(items, list):
            checked.append((prefix, plain))
            continue
        checked += [
            (f"{prefix}items[{index}]", item)
            for index, item in enumerate(items)
            if isinstance(item, Mapping) and item.get("apiVersion") == TARGET_API_VERSION
        ]
    return checked


def _render(chunk: _Chunk, yaml: YAML, outcome: Outcome) -> str:
    if not outcome.generated:
        return chunk.header + _dump(yaml, outcome.objects[0]) + chunk.footer
    parts = []
    for number, obj in enumerate(outcome.objects):
        header = chunk.header if number == 0 else "---\n"
        if number == 0 and not header and chunk.first_line > 0:
            header = "---\n"
        metadata = obj.get("metadata") or {}
        annotations = metadata.get("annotations") or {}
        note = (
            f"# Compiled by dradash from DeviceTaintRule {outcome.name} "
            f"({annotations.get(ANNOTATION_COMPILED_SELECTOR, '')}) against the mirrored inventory at "
            f"{annotations.get(ANNOTATION_COMPILED_AT, '')}; regenerate if devices change.\n"
        )
        parts.append(header + note + _dump(yaml, obj))
    names = [str((obj.get("metadata") or {}).get("name", "")) for obj in outcome.objects]
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    outcome.notes.append(f"generated rules: {shown}")
    return "".join(parts) + chunk.footer


def _describe(error: MarkedYAMLError | pyyaml.MarkedYAMLError, line_offset: int) -> str:
    mark = error.problem_mark or error.context_mark
    where = f" (line {mark.line + 1 + line_offset}, column {mark.column + 1})" if mark is not None else ""
    what = " ".join(str(x) for x in (error.context, error.problem) if x)
    return f"{what or 'cannot parse'}{where}"
