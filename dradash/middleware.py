"""Request guards that apply before any view runs."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

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
