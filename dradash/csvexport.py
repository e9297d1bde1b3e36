"""The one CSV writer of every export: streamed lines, with cells a spreadsheet would run neutralised.

A cell starting with `=`, `+`, `-` or `@` (or a tab or carriage return, which some spreadsheets skip
before looking) is read as a formula by Excel, LibreOffice and Google Sheets (OWASP "CSV injection").
Such a cell gets a leading `'`, which spreadsheets show as text and which keeps the value readable.
A user name like `-2+3` or a device attribute like `=cmd()` therefore arrives as the text it is.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: Any) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_lines(header: Iterable[Any], rows: Iterable[Iterable[Any]]) -> Iterator[str]:
    """The header and each row as one CSV line, every cell through `csv_safe`."""
    writer = csv.writer(_Echo())
    yield writer.writerow([csv_safe(cell) for cell in header])
    for row in rows:
        yield writer.writerow([csv_safe(cell) for cell in row])
