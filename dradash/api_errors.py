"""DRF's exception handler, answering in the one error envelope of `dradash.api`."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from dradash.api import error_body, error_response, field_errors


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
    response.data = error_body(errors or [{"field": "", "message": response.status_text}])
    return response
