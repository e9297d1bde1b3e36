"""REST API of what-if runs: create, read (with the result), list, cancel. Thin over allocation.services.

Bad input answers 400, too many runs of one user 429, a body too big to read 413 — each in the API's
error envelope `{"errors": [{"field", "message"}], "detail": "<the same in one line>"}` (docs/API.md).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from allocation.api.serializers import WhatIfRunCreateSerializer, WhatIfRunListSerializer, WhatIfRunSerializer
from allocation.models import RunState, WhatIfRun
from allocation.services import whatif_may_cancel, whatif_run_cancel, whatif_run_create, whatif_run_settle
from allocation.whatif.base import WhatIfInputError, WhatIfLimitError
from dradash.api import error_body, error_response, field_errors


class WhatIfRunViewSet(
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.ListModelMixin,
    viewsets.GenericViewSet[WhatIfRun],
):
    """What-if runs. Any logged-in user (viewers too) may ask; a run executes in a worker, never in the
    request: create returns 202 with the pending run; poll it, or follow `ws_url` for live progress."""

    queryset = WhatIfRun.objects.select_related("created_by").order_by("-created_at")
    filterset_fields = ["kind", "state"]

    def get_serializer_class(self) -> Any:
        if self.action == "create":
            return WhatIfRunCreateSerializer
        return WhatIfRunListSerializer if self.action == "list" else WhatIfRunSerializer

    def get_object(self) -> WhatIfRun:
        # Reading one run is when its dead worker becomes visible: decide about this run only.
        return whatif_run_settle(run=super().get_object())

    @extend_schema(
        request=WhatIfRunCreateSerializer,
        responses={
            202: WhatIfRunSerializer,
            503: OpenApiResponse(description="the task broker did not answer"),
        },
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # A body over the limit never gets here: dradash.middleware answers it with a JSON 413.
        incoming = WhatIfRunCreateSerializer(data=request.data)
        if not incoming.is_valid():
            return Response(error_body(field_errors(incoming.errors)), status=status.HTTP_400_BAD_REQUEST)
        try:
            run = whatif_run_create(
                kind=incoming.validated_data["kind"],
                input=incoming.validated_data["input"],
                user=request.user,
            )
        except WhatIfLimitError as exc:
            return error_response(exc.field, exc.message, status_code=status.HTTP_429_TOO_MANY_REQUESTS)
        except WhatIfInputError as exc:
            return error_response(exc.field, exc.message)
        data = WhatIfRunSerializer(run, context={"request": request}).data
        if run.state == RunState.FAILED:  # never queued: the broker did not answer
            body = error_body([{"field": "", "message": run.error}], run=data)
            return Response(body, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        return Response(data, status=status.HTTP_202_ACCEPTED, headers={"Location": data["page_url"]})

    @extend_schema(request=None, responses={202: WhatIfRunSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        run = self.get_object()
        if not whatif_may_cancel(user=request.user, run=run):
            raise PermissionDenied("only the user who started a run, an operator or an admin may cancel it")
        run = whatif_run_cancel(run=run)
        return Response(
            WhatIfRunSerializer(run, context={"request": request}).data, status=status.HTTP_202_ACCEPTED
        )
