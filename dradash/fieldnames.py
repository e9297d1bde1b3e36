"""How a page names the field an error is about: by the label the user sees on the form, then by the name
the server knows it by (the query parameter, the API's field path) in code: "Allocation (state): …".

The REST API's errors keep the path alone; a page passes its own labels (`{path: label}`) to `shown_errors`
and shows each error with `{% field_name e %}` (dradash_format), so every page words it the same way. A list
page that gets parameters it does not take names them with `unknown_parameters` (partials/query_errors.html):
the first few, escaped and capped, how many more, and the filters it does take, by label."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


class NamedError(Protocol):
    """An error naming its field (maintenance's FieldError, the what-if's WhatIfInputError, …)."""

    @property
    def field(self) -> str: ...

    @property
    def message(self) -> str: ...


@dataclass(frozen=True)
class ShownError:
    #: the parameter or field path the server names
    field: str
    message: str
    #: the form's label of the field; "" when the page has no field for it (a misspelt parameter)
    label: str = ""


#: how many parameters a page names when it gets some it does not take (the rest it counts), and how many
#: characters of each name it shows
PARAMETERS_NAMED = 5
PARAMETER_NAME_MAX = 60
NOT_A_FILTER = "not a filter of this page"


@dataclass(frozen=True)
class UnknownParameters:
    """Query parameters a page does not take, as it shows them (partials/query_errors.html)."""

    #: the first PARAMETERS_NAMED, each named as it was sent (capped), with NOT_A_FILTER
    named: list[ShownError]
    #: how many more were sent
    more: int
    #: the filters the page does take, each by its label then its parameter
    filters: list[ShownError]


def field_label(field: str, labels: Mapping[str, str]) -> str:
    """The form's label of a field path (`state`, `filters.state`, `input.taint.key`, `devices[2].pool`), or
    "": the most specific dotted prefix in `labels` wins; list indexes are ignored."""
    path = re.sub(r"\[\d+\]", "", field)
    while path:
        if path in labels:
            return labels[path]
        path = path.rpartition(".")[0]
    return ""


def shown_errors(
    errors: Mapping[str, Sequence[str]] | Iterable[NamedError], labels: Mapping[str, str]
) -> list[ShownError]:
    """Errors as a page shows them, each with its field's label: a list page's `{parameter: [messages]}`
    (one line per parameter) or errors that name their field."""
    if isinstance(errors, Mapping):
        pairs = [(str(name), " ".join(str(m) for m in messages)) for name, messages in errors.items()]
    else:
        pairs = [(e.field, e.message) for e in errors]
    return [ShownError(field, message, field_label(field, labels)) for field, message in pairs]


def _capped(name: str, limit: int) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def unknown_parameters(names: Sequence[str], labels: Mapping[str, str]) -> UnknownParameters | None:
    """Parameters a page was sent that are not its filters (`labels`: {parameter: label} of its filters), or
    None when there are none."""
    if not names:
        return None
    named = [ShownError(_capped(str(n), PARAMETER_NAME_MAX), NOT_A_FILTER) for n in names[:PARAMETERS_NAMED]]
    filters = [ShownError(name, "", label) for name, label in labels.items()]
    return UnknownParameters(named, len(names) - len(named), filters)
