"""Old and new text of one document side by side, for the page: rows of (old line, new line)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

#: unchanged lines kept around each change; longer unchanged runs fold into one "… N lines" row
CONTEXT = 3


@dataclass(frozen=True)
class Row:
    kind: str  # "same" | "changed" | "removed" | "added" | "fold"
    old_no: int | None = None
    old: str = ""
    new_no: int | None = None
    new: str = ""
    folded: int = 0


def side_by_side(old: str, new: str, *, context: int = CONTEXT) -> list[Row]:
    """Rows aligning `old` and `new` line by line; a replaced block pairs its lines in order."""
    a, b = old.splitlines(), new.splitlines()
    rows: list[Row] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows.extend(
                Row("same", i + 1, a[i], j + 1, b[j])
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            )
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            has_old, has_new = i < i2, j < j2
            kind = "changed" if has_old and has_new else "removed" if has_old else "added"
            rows.append(
                Row(
                    kind,
                    i + 1 if has_old else None,
                    a[i] if has_old else "",
                    j + 1 if has_new else None,
                    b[j] if has_new else "",
                )
            )
    return _fold(rows, context)


def _fold(rows: list[Row], context: int) -> list[Row]:
    near = {n for n, row in enumerate(rows) if row.kind != "same"}
    keep = {m for n in near for m in range(n - context, n + context + 1)}
    out: list[Row] = []
    run = 0
    for n, row in enumerate(rows):
        if row.kind != "same" or n in keep:
            if run:
                out.append(Row("fold", folded=run))
                run = 0
            out.append(row)
        else:
            run += 1
    if run:
        out.append(Row("fold", folded=run))
    return out


@dataclass(frozen=True)
class Line:
    kind: str  # "same" | "removed" | "added" | "fold"
    text: str


def unified(rows: list[Row]) -> list[Line]:
    """The same rows as one column for narrow screens: each changed block's old lines, then its new lines."""
    out: list[Line] = []
    old: list[str] = []
    new: list[str] = []

    def flush() -> None:
        out.extend(Line("removed", text) for text in old)
        out.extend(Line("added", text) for text in new)
        old.clear()
        new.clear()

    for row in rows:
        if row.kind in ("same", "fold"):
            flush()
            out.append(
                Line("same", row.new) if row.kind == "same" else Line("fold", f"… {row.folded} unchanged")
            )
            continue
        if row.old_no is not None:
            old.append(row.old)
        if row.new_no is not None:
            new.append(row.new)
    flush()
    return out
