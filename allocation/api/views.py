"""REST API of what-if runs: create, read (with the result), list, cancel. Thin over allocation.services.

Bad input answers 400, too many runs of one user 429, a body too big to read 413 — each in the API's
error envelope `{"errors": [{"field", "message"}], "detail": "<the same in one line>"}` (docs/API.md).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from allocation.api.serializers import WhatIfRunCreateSerializer, WhatIfRunListSerializer, WhatIfRunSerializer
from allocation.models import WhatIfRun
from allocation.services import whatif_may_cancel, whatif_run_cancel, whatif_run_create, whatif_run_settle
from allocation.whatif.base import WhatIfInputError, WhatIfLimitError


def errors(status_code: int, *pairs: tuple[str, str]) -> Response:
    listed = [{"field": f, "message": m} for f, m in pairs]
    detail = "; ".join(f"{f}: {m}" if f else m for f, m in pairs)
    return Response({"errors": listed, "detail": detail}, status=status_code)


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

    @extend_schema(request=WhatIfRunCreateSerializer, responses={202: WhatIfRunSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # DRF's JSON parser reads the stream itself, past Django's body limit: refuse before reading.
        length = int(request.META.get("CONTENT_LENGTH") or 0)
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and length > limit:
            return errors(
                status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
                ("body", f"the request body has {length} bytes, more than the limit of {limit} bytes"),
            )
        incoming = WhatIfRunCreateSerializer(data=request.data)
        if not incoming.is_valid():
            return errors(
                status.HTTP_400_BAD_REQUEST,
                *((f, " ".join(str(m) for m in ms)) for f, ms in incoming.errors.items()),
            )
        try:
            run = whatif_run_create(
                kind=incoming.validated_data["kind"],
                input=incoming.validated_data["input"],
                user=request.user,
            )
        except WhatIfLimitError as exc:
            return errors(status.HTTP_429_TOO_MANY_REQUESTS, (exc.field, exc.message))
        except WhatIfInputError as exc:
            return errors(status.HTTP_400_BAD_REQUEST, (exc.field, exc.message))
        data = WhatIfRunSerializer(run, context={"request": request}).data
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
