"""Request guards that apply before any view runs."""

from __future__ import annotations

from collections.abc import Callable

from csp.middleware import CSPMiddleware, PolicyParts
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase

from dradash.api import error_body


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
