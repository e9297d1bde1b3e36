"""Request guards that apply before any view runs."""

from __future__ import annotations

from collections.abc import Callable

from csp.middleware import CSPMiddleware, PolicyParts
from django.conf import settings
from django.core.exceptions import TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.http.multipartparser import MultiPartParserError
from django.http.response import HttpResponseBase
from django.shortcuts import render

from dradash.api import error_body, text_problem
from dradash.api_errors import database_unavailable


class ApiBodyLimitMiddleware:
    """A body larger than DRADASH_MAX_BODY_BYTES on an API route gets a JSON 413, not an HTML page.

    Django itself refuses such bodies when a view reads them (RequestDataTooBig → a 400 HTML page); on
    the API the client deserves the API's error shape and the right status, before anything is read."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/"):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            if limit is not None and length > limit:
                body = error_body(
                    [
                        {
                            "field": "body",
                            "message": f"the request body has {length} bytes, more than the limit of {limit}"
                            " bytes (DRADASH_MAX_BODY_BYTES)",
                        }
                    ]
                )
                return JsonResponse(body, status=413)
        return self.get_response(request)


class RequestInputMiddleware:
    """Query strings and form bodies no view can use get a 400 naming the field, before any view runs.

    A NUL character has no place in any Kubernetes string or form here, and PostgreSQL cannot store one
    (a 500 deep in a view otherwise). More fields than DATA_UPLOAD_MAX_NUMBER_FIELDS make Django raise
    wherever the query is first read; here the API gets its JSON error shape and a page the error page."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = _problem_in(request, "query") or (
            _problem_in(request, "body") if _is_form(request) else None
        )
        if problem is None:
            return self.get_response(request)
        field, message = problem
        if request.path.startswith("/api/"):
            return JsonResponse(error_body([{"field": field, "message": message}]), status=400)
        return render(request, "400.html", {"field": field, "message": message}, status=400)


def _is_form(request: HttpRequest) -> bool:
    return request.method == "POST" and request.content_type in {
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    }


def _problem_in(request: HttpRequest, where: str) -> tuple[str, str] | None:
    try:
        params: QueryDict = request.GET if where == "query" else request.POST  # type: ignore[assignment]
    except TooManyFieldsSent:
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return where, f"more than {limit} parameters; send fewer (DATA_UPLOAD_MAX_NUMBER_FIELDS)"
    except TooManyFilesSent:
        return where, f"more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files; send fewer"
    except MultiPartParserError as error:  # no boundary, a truncated part: nothing a view could read
        return where, f"is not a readable multipart form ({str(error)[:200]})"
    for key, values in params.lists():
        if problem := text_problem(key):
            return where, f"a parameter name {problem}"
        for value in values:
            if problem := text_problem(value):
                return key[:100], problem
    return None


class DatabaseUnavailableMiddleware:
    """A view (or its template) that meets a database that does not answer gets a 503 saying so — the
    API's JSON envelope, or a page — instead of the generic 500 "something went wrong"
    (`dradash.api_errors.database_unavailable`)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        return database_unavailable(request, exception)


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's header with the page's own websocket origin in connect-src.

    CSP level 3 lets 'self' match ws:/wss: of the same host, but older browsers do not, and the live
    pages need their socket; the host is the one Django already validated against ALLOWED_HOSTS."""

    def get_policy_parts(
        self, request: HttpRequest, response: HttpResponseBase, report_only: bool = False
    ) -> PolicyParts:
        parts = super().get_policy_parts(request=request, response=response, report_only=report_only)
        try:
            host = request.get_host()
        except Exception:  # DisallowedHost: the response is an error page, 'self' is enough
            return parts
        update = dict(parts.update or {})
        sockets = [f"ws://{host}", f"wss://{host}"]
        update["connect-src"] = [*_as_list(update.get("connect-src")), *sockets]
        parts.update = update
        return parts


def _as_list(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]  # type: ignore[attr-defined]
