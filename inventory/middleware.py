"""Every API answer says how old the mirrored data behind it is."""

from __future__ import annotations

from collections.abc import Callable

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse

from inventory.selectors.status import mirror_status

DATA_AGE_HEADER = "X-Dradash-Data-Age"
DATA_SYNCED_HEADER = "X-Dradash-Data-Synced"


class DataAgeMiddleware:
    """`X-Dradash-Data-Age`: whole seconds since the oldest mirrored kind was last confirmed in sync (a list,
    an event or bookmark, a check), or "unknown" before the first sync; `X-Dradash-Data-Synced`: "true"
    when every kind is synced now, else "false" (a watch is re-listing, failing, forbidden, unreachable).
    With the database unavailable neither can be known: "unknown" and "false", never a 500 instead of the
    answer the view gave."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.path.startswith("/api/"):
            try:
                status = mirror_status()
            except DatabaseError:
                response[DATA_AGE_HEADER], response[DATA_SYNCED_HEADER] = "unknown", "false"
                return response
            response[DATA_AGE_HEADER] = status.age_header
            response[DATA_SYNCED_HEADER] = "true" if status.synced else "false"
        return response
