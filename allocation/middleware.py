"""Big pastes into the what-if form get a clear answer that keeps the paste.

Django refuses a form body over DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB) with a bare "Bad Request (400)"
the moment anything reads the form — the CSRF middleware, before the view — and the paste is lost.
For the what-if form only, a body up to FORM_MAX_BYTES is read here first, so the view can name the
field that is too long and show the form again with what was pasted; a bigger one is answered 413
with the form and the limits.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from allocation.views import whatif_form_too_large

FORM_MAX_BYTES = 8 * 1024 * 1024


class WhatIfFormBodyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path == reverse("allocation:whatif"):
            length = int(request.META.get("CONTENT_LENGTH") or 0)
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            if limit is not None and length > limit and request.user.is_authenticated:
                if length > FORM_MAX_BYTES:
                    return whatif_form_too_large(request, length=length, limit=FORM_MAX_BYTES)
                # Django checks the size only when it reads the body itself; this body is read here
                # on purpose, within FORM_MAX_BYTES, and every later reader (CSRF, request.POST) uses it.
                request._body = request.read(FORM_MAX_BYTES + 1)  # type: ignore[attr-defined]
        return self.get_response(request)
