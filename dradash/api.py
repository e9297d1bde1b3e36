"""Conventions every REST endpoint shares: one pagination envelope, one error envelope, strict JSON.

* Lists: ``{"count", "next", "previous", "results"}`` (`Pagination`); ``limit`` and ``offset`` must be
  integers in range, otherwise 400 naming the parameter — never a database overflow.
* Errors: ``{"errors": [{"field": "...", "message": "..."}], "detail": "<the same in one line>"}`` with a
  4xx status (`dradash.api_errors.exception_handler`); ``field`` is ``""`` when the error is not about one field.
* Lists filtered by a FilterSet (`StrictFilterBackend`): a query parameter that is neither one of its
  filters nor ``limit``/``offset``/``format`` is a 400 naming it and the supported ones (not silently
  ignored: ``?page_size=2`` or a misspelt filter would otherwise answer every row).
* `?format=` names a renderer the endpoint has, otherwise 400 naming `format` (DRF would answer 404).
* JSON bodies: objects, nested at most `MAX_JSON_DEPTH` levels (`JSONParser`): deeper documents are
  refused with 400 instead of exhausting the parser's recursion; a list or scalar body is a 400 naming `body`.
  A field the endpoint does not take is a 400 naming it (`unknown_fields`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django_filters.rest_framework import DjangoFilterBackend
from rest_framework import exceptions, parsers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response

from dra.jsontypes import a_type

MAX_JSON_DEPTH = 64
#: offsets beyond this are refused (no list here has a billion rows; the database would overflow first)
MAX_OFFSET = 10**9


def field_errors(detail: Any, prefix: str = "") -> list[dict[str, str]]:
    """Flatten DRF's nested error detail into [{field, message}] with dotted field paths."""
    out: list[dict[str, str]] = []
    if isinstance(detail, Mapping):
        for key, value in detail.items():
            name = "" if key in ("non_field_errors", "detail") else str(key)
            path = f"{prefix}.{name}" if prefix and name else (prefix or name)
            out.extend(field_errors(value, path))
    elif isinstance(detail, list):
        if all(isinstance(item, str) for item in detail):
            out.extend({"field": prefix, "message": str(item)} for item in detail)
        else:
            for i, item in enumerate(detail):
                out.extend(field_errors(item, f"{prefix}[{i}]"))
    else:
        out.append({"field": prefix, "message": str(detail)})
    return out


def error_body(errors: Sequence[Mapping[str, Any]], **extra: Any) -> dict[str, Any]:
    """The one error envelope. `extra` keys (a room's context, e.g. maintenance's `current` state) sit
    beside `errors` and `detail`, never instead of them."""
    listed = [dict(e) for e in errors]
    detail = "; ".join(f"{e['field']}: {e['message']}" if e["field"] else str(e["message"]) for e in listed)
    return {"errors": listed, "detail": detail, **extra}


def error_response(field: str, message: str, *, status_code: int = 400, **extra: Any) -> Response:
    return Response(error_body([{"field": field, "message": message}], **extra), status=status_code)


def _bounded_int(request: Request, name: str, default: int, *, minimum: int, maximum: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise exceptions.ValidationError({name: [f"must be a whole number, got {raw[:40]!r}"]}) from None
    if value < minimum:
        rule = f"must be at least {minimum}" if minimum else "must not be negative"
        raise exceptions.ValidationError({name: [f"{rule}, got {value}"]})
    if value > maximum:
        raise exceptions.ValidationError({name: [f"must be at most {maximum}"]})
    return value


#: query parameters every list endpoint accepts besides its filters
PAGING_PARAMS = ("limit", "offset", "format")


def unknown_params(request: Request, known: Sequence[str], *, paged: bool = True) -> None:
    """400 naming the first query parameter not in `known` (nor a paging one, for a `paged` list), listing
    the supported ones: a misspelt filter must not quietly return everything."""
    general = PAGING_PARAMS if paged else ("format",)
    supported = [*known, *(p for p in general if p not in known)]
    for name in request.query_params:
        if name not in supported:
            message = f"unknown parameter; supported are {', '.join(supported)}"
            raise exceptions.ValidationError({name[:100]: [message]})


def unknown_fields(data: Mapping[str, Any], known: Sequence[str]) -> None:
    """400 naming the first field of a request body (in sorted order) not in `known`, listing the known
    ones: a misspelt field must not be quietly ignored."""
    unknown = sorted(str(name) for name in set(data) - set(known))
    if unknown:
        message = f"is not a field (known: {', '.join(sorted(known))})"
        raise exceptions.ValidationError({unknown[0][:100]: [message]})


class StrictFilterBackend(DjangoFilterBackend):
    """django-filter's backend, refusing (400) a list request's parameters its FilterSet does not know."""

    def filter_queryset(self, request: Request, queryset: Any, view: Any) -> Any:
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is not None and getattr(view, "action", "list") == "list":
            unknown_params(request, list(filterset_class.base_filters))
        return super().filter_queryset(request, queryset, view)


class Pagination(LimitOffsetPagination):
    """`?limit=&offset=` with the envelope {count, next, previous, results}; limit capped, checked."""

    default_limit = 100
    max_limit = 1000

    def get_limit(self, request: Request) -> int:
        return _bounded_int(
            request, self.limit_query_param, self.default_limit, minimum=1, maximum=self.max_limit
        )

    def get_offset(self, request: Request) -> int:
        return _bounded_int(request, self.offset_query_param, 0, minimum=0, maximum=MAX_OFFSET)

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        envelope = super().get_paginated_response_schema(schema)
        envelope["required"] = ["count", "next", "previous", "results"]
        return envelope

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        # The schema states the ranges the view enforces, so clients (and schemathesis) know them.
        parameters = super().get_schema_operation_parameters(view)
        ranges = {
            self.limit_query_param: {"minimum": 1, "maximum": self.max_limit, "default": self.default_limit},
            self.offset_query_param: {"minimum": 0, "maximum": MAX_OFFSET, "default": 0},
        }
        for parameter in parameters:
            parameter["schema"].update(ranges.get(parameter["name"], {}))
        return parameters


def paginated(
    request: Request,
    items: Sequence[Any],
    *,
    view: Any,
    serialize: Callable[[Sequence[Any]], Any],
    pagination_class: type[Pagination] = Pagination,
    params: Sequence[str] = (),
    **extra: Any,
) -> Response:
    """A list that is not a queryset (a selector's summaries) in the same envelope, paged the same way;
    a query parameter other than the paging ones and `params` is refused (400). `extra` keys (e.g. the
    classes' `warnings`) sit beside the envelope's four."""
    unknown_params(request, params)
    paginator = pagination_class()
    page = paginator.paginate_queryset(items, request, view=view) or []
    response = paginator.get_paginated_response(serialize(page))
    response.data.update(extra)
    return response


def json_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether `value` nests containers more than `limit` deep (iterative: no recursion to exhaust)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in item)
    return False


NUL_MESSAGE = "must not contain the NUL character (\\u0000)"
SURROGATE_MESSAGE = "must be UTF-8 text: a lone surrogate (\\ud800-\\udfff) is not a character"
_SURROGATE = re.compile("[\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    """Why `text` cannot be stored or encoded, or None. No Kubernetes string holds a NUL character, and
    PostgreSQL stores none in text or jsonb; a lone surrogate (JSON's "\\ud800") is no character at all,
    and UTF-8 cannot encode it."""
    if "\x00" in text:
        return NUL_MESSAGE
    if _SURROGATE.search(text):
        return SURROGATE_MESSAGE
    return None


def unstorable_text(value: Any, where: str = "") -> list[tuple[str, str]]:
    """Every key and string in `value` that `text_problem` refuses, as (path like `a.b[0].c`, why), in
    document order (iterative: no recursion to exhaust)."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if problem := text_problem(item):
                found.append((path or "body", problem))
        elif isinstance(item, Mapping):
            children = []
            for key, child in item.items():
                shown = json.dumps(str(key))[1:-1]  # a bad key is named, escaped
                child_path = f"{path}.{shown}" if path else shown
                if problem := text_problem(str(key)):
                    found.append((child_path, problem))
                children.append((child, child_path))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend(reversed([(child, f"{path}[{i}]") for i, child in enumerate(item)]))
    return found


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, refusing documents nested deeper than MAX_JSON_DEPTH with a 400, and bodies that
    are not JSON objects (every endpoint here takes an object) with a 400 naming `body`."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep") from None
        except json.JSONDecodeError as exc:  # pragma: no cover - DRF already wraps these
            raise exceptions.ParseError(f"JSON parse error: {exc}") from None
        if json_depth_exceeds(data, MAX_JSON_DEPTH):
            raise exceptions.ParseError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
        if not isinstance(data, dict):
            raise exceptions.ValidationError({"body": [f"must be a JSON object, got {a_type(data)}"]})
        if problems := unstorable_text(data):
            raise exceptions.ValidationError({path[:200]: [why] for path, why in problems[:20]})
        return data


class ContentNegotiation(DefaultContentNegotiation):
    """DRF's negotiation, but an unknown `?format=` is bad input (400 naming it), not a missing page."""

    def filter_renderers(self, renderers: list[Any], format: str) -> list[Any]:
        matching = [r for r in renderers if r.format == format]
        if not matching:
            known = ", ".join(sorted({r.format for r in renderers}))
            raise exceptions.ValidationError({"format": [f"must be one of {known}, got {format[:40]!r}"]})
        return matching
