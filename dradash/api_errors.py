"""DRF's exception handler, and Django's 404/500 views for /api/, answering in the one error envelope;
the 503 a request gets when the database does not answer."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.views.defaults import page_not_found, server_error
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from dradash.api import error_body, error_response, field_errors

log = logging.getLogger(__name__)

#: what a request that met a database that does not answer gets in `Retry-After` (seconds)
DATABASE_RETRY_AFTER_SECONDS = 10


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return error_response(
            "body",
            f"the request body is larger than {limit} bytes (DRADASH_MAX_BODY_BYTES)",
            status_code=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        errors = field_errors(exc.detail)
    else:
        detail = exc.detail if isinstance(exc, exceptions.APIException) else str(exc)
        errors = field_errors(detail)
    errors = [e if e["message"] else {**e, "message": response.status_text} for e in errors]
    response.data = error_body(errors or [{"field": "", "message": response.status_text}])
    return response


def api_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Django's 404 for a path no route matches: the API's envelope under /api/, the HTML page elsewhere."""
    if request.path.startswith("/api/"):
        body = error_body([{"field": "", "message": f"no API endpoint at {request.path[:200]}"}])
        return JsonResponse(body, status=status.HTTP_404_NOT_FOUND)
    return page_not_found(request, exception or Http404())


def api_server_error(request: HttpRequest) -> HttpResponse:
    """Django's 500: the API's envelope under /api/ (a client parses JSON), the HTML page elsewhere."""
    if request.path.startswith("/api/"):
        body = error_body([{"field": "", "message": "internal error; the server log has the details"}])
        return JsonResponse(body, status=status.HTTP_500_INTERNAL_SERVER_ERROR)
    return server_error(request)


def database_unavailable(request: HttpRequest, exc: BaseException) -> HttpResponse | None:
    """A 503 saying the database is unavailable, for an error of the connection (refused, cut, restarted,
    a failover, a lock or a statement the server gave up on: Django's OperationalError and
    InterfaceError), or None for any other exception. The request's transaction, if any, did not commit;
    a read changed nothing, a write is not promised to have changed nothing. The page is rendered without
    the request's context, as the 500 page is: the context (the user, the data banner) is read from the
    very database that is gone."""
    if not isinstance(exc, OperationalError | InterfaceError):
        return None
    log.warning("the database is unavailable (%s %s): %s", request.method, request.path[:200], exc)
    # a read changed nothing; a write may have reached the cluster before the database went (a rule created,
    # its record not written), so it is not said to have changed nothing
    read_only = request.method in ("GET", "HEAD", "OPTIONS")
    outcome = (
        "nothing was changed" if read_only else "this request may not have finished: look before repeating it"
    )
    if request.path.startswith("/api/"):
        message = f"the database is unavailable; {outcome} — try again in a moment"
        body = error_body([{"field": "", "message": message}])
        response: HttpResponse = JsonResponse(body, status=status.HTTP_503_SERVICE_UNAVAILABLE)
    else:
        html = loader.get_template("503.html").render({"request_path": request.path, "outcome": outcome})
        response = HttpResponse(html, status=status.HTTP_503_SERVICE_UNAVAILABLE)
    response["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
    return response
