"""REST API of what-if runs: create, read (with the result), list, cancel. Thin over allocation.services."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from allocation.api.serializers import WhatIfRunCreateSerializer, WhatIfRunListSerializer, WhatIfRunSerializer
from allocation.models import WhatIfRun
from allocation.services import whatif_reap_stale, whatif_run_cancel, whatif_run_create
from allocation.whatif_common import WhatIfInputError
from dradash.context import user_can_author


def may_cancel(user: Any, run: WhatIfRun) -> bool:
    return bool(run.created_by_id == user.pk or user.is_staff or user_can_author(user))


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

    def get_queryset(self) -> QuerySet[WhatIfRun]:
        whatif_reap_stale()  # a read is when a dead worker's run becomes visible as failed
        return super().get_queryset()

    @extend_schema(request=WhatIfRunCreateSerializer, responses={202: WhatIfRunSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        incoming = WhatIfRunCreateSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        try:
            run = whatif_run_create(
                kind=incoming.validated_data["kind"],
                input=incoming.validated_data["input"],
                user=request.user,
            )
        except WhatIfInputError as exc:
            raise ValidationError({exc.field: [exc.message]}) from None
        data = WhatIfRunSerializer(run, context={"request": request}).data
        return Response(data, status=status.HTTP_202_ACCEPTED, headers={"Location": data["page_url"]})

    @extend_schema(request=None, responses={202: WhatIfRunSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        run = self.get_object()
        if not may_cancel(request.user, run):
            raise PermissionDenied("only the user who started a run, an operator or an admin may cancel it")
        run = whatif_run_cancel(run=run)
        return Response(
            WhatIfRunSerializer(run, context={"request": request}).data, status=status.HTTP_202_ACCEPTED
        )
