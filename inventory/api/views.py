"""Read-only API viewsets: thin wrappers over inventory.selectors, filtered by the shared FilterSets."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from dradash.api import Pagination, paginated, unknown_params
from dradash.context import user_is_admin
from dradash.search import SearchResults, clean_query
from dradash.search import kinds as search_kinds
from inventory import tables
from inventory.api import serializers as s
from inventory.filters import (
    ClaimFilterSet,
    DeviceFilterSet,
    KubeObjectFilterSet,
    PodFilterSet,
    PoolFilterSet,
)
from inventory.models import Claim, Device, KubeObject, Pod, Pool, WatchState
from inventory.selectors.claims import claim_detail
from inventory.selectors.classes import class_overview
from inventory.selectors.nodes import node_list, node_summaries
from inventory.selectors.rules import taint_rule_detail, taint_rule_list


class NarrowFirstPagination(Pagination):
    """Page by ids first, then load the page's full rows.

    Device rows are wide (JSON columns); sorting or skipping thousands of them to return 100 spills
    to disk on PostgreSQL. Sorting just (id, driver, pool, name) and fetching 100 rows by id keeps the
    cost flat: three queries (count, ids, rows) whatever the number of devices.
    """

    def paginate_queryset(self, queryset: Any, request: Any, view: Any = None) -> list[Any] | None:
        self.request = request
        self.limit = self.get_limit(request)
        if self.limit is None:
            return None
        self.offset = self.get_offset(request)
        # A filter that can count from its own index says so (DeviceFilterSet's attribute filter).
        hint = getattr(queryset, "count_hint", None)
        self.count = hint() if hint is not None else self.get_count(queryset)
        if self.count == 0 or self.offset > self.count:
            return []
        ids = list(queryset.values_list("pk", flat=True)[self.offset : self.offset + self.limit])
        rows = queryset.model.objects.filter(pk__in=ids)
        names, deferring = queryset.query.deferred_loading
        if names:
            rows = rows.defer(*names) if deferring else rows.only(*names)
        by_id = {row.pk: row for row in rows}
        return [by_id[pk] for pk in ids if pk in by_id]


class DeviceIdentityQuery(serializers.Serializer[Any]):
    driver = serializers.CharField(max_length=253, help_text="the driver (a DNS subdomain)")
    pool = serializers.CharField(max_length=253, help_text="the pool name (may contain `/`)")
    device = serializers.CharField(max_length=253, help_text="the device name")


class DeviceViewSet(viewsets.ReadOnlyModelViewSet[Device]):
    """Every device of every ResourceSlice (highest pool generation), with effective taints and allocation."""

    serializer_class = s.DeviceSerializer
    filterset_class = DeviceFilterSet
    pagination_class = NarrowFirstPagination
    queryset = Device.objects.all().order_by("driver", "pool", "name")

    def get_queryset(self) -> QuerySet[Device]:
        # Only the fields the API serves are loaded (each JSON column costs a json.loads per row).
        served = [name for name in tables.api_fields() if name != "device_id"]
        return super().get_queryset().only(*served, "driver", "pool", "name")

    def get_serializer_context(self) -> dict[str, Any]:
        # The drivers' device status data (`statuses[].data`) keeps its credentials for admins only.
        return super().get_serializer_context() | {"reveal": user_is_admin(self.request.user)}

    def _by_identity(self, driver: str, pool: str, name: str) -> Response:
        device = self.get_queryset().filter(driver=driver, pool=pool, name=name).first()
        if device is None:
            raise Http404(f"no device {name!r} in pool {pool!r} of driver {driver!r} in the mirror")
        return Response(self.get_serializer(device).data)

    @extend_schema(
        parameters=[DeviceIdentityQuery],
        responses=s.DeviceSerializer,
        description="One device by its identity: `?driver=&pool=&device=` (a pool name may contain `/`).",
    )
    @action(detail=False, url_path="by-name", filter_backends=[], pagination_class=None)
    def by_name(self, request: Request) -> Response:
        query = DeviceIdentityQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        found = query.validated_data
        return self._by_identity(found["driver"], found["pool"], found["device"])

    @extend_schema(
        parameters=[
            OpenApiParameter("driver", OpenApiTypes.STR, OpenApiParameter.PATH),
            OpenApiParameter(
                "pool",
                OpenApiTypes.STR,
                OpenApiParameter.PATH,
                description="the pool name; one containing `/` may be sent as is (`a/b`) or percent-encoded",
            ),
            OpenApiParameter("name", OpenApiTypes.STR, OpenApiParameter.PATH, description="the device name"),
        ],
        operation_id="devices_by_path",
        responses=s.DeviceSerializer,
        description="One device by its identity in the path: `/api/devices/{driver}/{pool}/{name}/`.",
    )
    def by_path(self, request: Request, driver: str, pool: str, name: str) -> Response:
        return self._by_identity(driver, pool, name)


class PoolViewSet(viewsets.ReadOnlyModelViewSet[Pool]):
    serializer_class = s.PoolSerializer
    filterset_class = PoolFilterSet
    queryset = Pool.objects.all().order_by("driver", "name")


class ClaimViewSet(viewsets.ReadOnlyModelViewSet[Claim]):
    """ResourceClaims: pending, allocated or reserved; the detail adds results with per-device status."""

    serializer_class = s.ClaimSerializer
    filterset_class = ClaimFilterSet
    queryset = Claim.objects.all().order_by("namespace", "name")

    @extend_schema(responses=s.ClaimDetailSerializer)
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        claim = self.get_object()
        reveal = user_is_admin(request.user)
        detail = claim_detail(namespace=claim.namespace, name=claim.name, reveal=reveal)
        context = {"detail": detail, "request": request, "reveal": reveal}
        return Response(s.ClaimDetailSerializer(claim, context=context).data)


class PodViewSet(viewsets.ReadOnlyModelViewSet[Pod]):
    """Pods: kubectl's status, why they wait, the node, the ResourceClaims they use and the extended resources
    DRA serves them; filtered as on the Pods page (namespace, node, phase, uses_claims, waiting, q)."""

    serializer_class = s.PodSerializer
    filterset_class = PodFilterSet
    queryset = Pod.objects.all().order_by("namespace", "name")


class WatchStateViewSet(viewsets.ReadOnlyModelViewSet[WatchState]):
    """Health of each kind's watch: synced / relisting / error, last event, resourceVersion, lag."""

    serializer_class = s.WatchStateSerializer
    queryset = WatchState.objects.all().order_by("kind")
    lookup_field = "kind"
    lookup_value_regex = "[^/]+"
    filter_backends: list[Any] = []

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        unknown_params(request, [])
        return super().list(request, *args, **kwargs)


class ClassPagination(Pagination):
    """The envelope, plus `warnings`: conflicts between classes (two claiming one extended resource name)."""

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        envelope = super().get_paginated_response_schema(schema)
        envelope["properties"]["warnings"] = {"type": "array", "items": {"type": "string"}}
        envelope["required"].append("warnings")
        return envelope


@extend_schema_view(list=extend_schema(responses=s.DeviceClassSerializer(many=True)))
class DeviceClassViewSet(viewsets.ViewSet):
    """DeviceClasses with device counts and the extended resource names they serve (conflicts as warnings)."""

    lookup_value_regex = "[^/]+"
    pagination_class = ClassPagination

    def list(self, request: Request) -> Response:
        overview = class_overview()
        return paginated(
            request,
            overview.classes,
            view=self,
            serialize=lambda page: s.DeviceClassSerializer(page, many=True).data,
            pagination_class=ClassPagination,
            warnings=overview.warnings,
        )

    @extend_schema(responses=s.DeviceClassSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        summary = next((c for c in class_overview().classes if c.name == pk), None)
        if summary is None:
            raise Http404(f"DeviceClass {pk!r} is not in the mirror")
        return Response(s.DeviceClassSerializer(summary).data)


@extend_schema_view(list=extend_schema(responses=s.TaintRuleSerializer(many=True)))
class TaintRuleViewSet(viewsets.ViewSet):
    """DeviceTaintRules with the number of devices they select and their EvictionInProgress condition."""

    lookup_value_regex = "[^/]+"
    pagination_class = Pagination

    def list(self, request: Request) -> Response:
        return paginated(
            request,
            taint_rule_list(),
            view=self,
            serialize=lambda page: s.TaintRuleSerializer(page, many=True).data,
        )

    @extend_schema(responses=s.TaintRuleSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        try:
            summary, _devices = taint_rule_detail(name=pk)
        except KubeObject.DoesNotExist:
            raise Http404(f"DeviceTaintRule {pk!r} is not in the mirror") from None
        return Response(s.TaintRuleSerializer(summary).data)


@extend_schema_view(list=extend_schema(responses=s.NodeSerializer(many=True)))
class NodeViewSet(viewsets.ViewSet):
    """Nodes with their device counts (the page groups devices by NUMA node)."""

    lookup_value_regex = "[^/]+"
    pagination_class = Pagination

    def list(self, request: Request) -> Response:
        return paginated(
            request, node_list(), view=self, serialize=lambda page: s.NodeSerializer(page, many=True).data
        )

    @extend_schema(responses=s.NodeSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        node = next(iter(node_summaries(names=[pk])), None)
        if node is None or (node.obj is None and not node.device_count):
            raise Http404(f"node {pk!r} is not in the mirror")
        return Response(s.NodeSerializer(node).data)


class KubeObjectViewSet(viewsets.ReadOnlyModelViewSet[KubeObject]):
    """Any mirrored object as the cluster has it: /api/objects/?kind=resourceslices&name=…"""

    serializer_class = s.KubeObjectSerializer
    filterset_class = KubeObjectFilterSet
    lookup_field = "uid"
    lookup_value_regex = "[^/]+"

    def get_serializer_context(self) -> dict[str, Any]:
        # Values that can hold credentials (env values, …) are shown to admins only (inventory.redaction).
        return super().get_serializer_context() | {"reveal": user_is_admin(self.request.user)}

    queryset = KubeObject.objects.all().order_by("kind", "namespace", "name")


class SearchQuery(serializers.Serializer[Any]):
    q = serializers.CharField(max_length=320, help_text="a name, part of one, or namespace/name")
    kind = serializers.ChoiceField(choices=[], required=False, help_text="only this kind")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Rooms register their kinds in AppConfig.ready: read them now, not at import.
        self.fields["kind"].choices = search_kinds()  # type: ignore[attr-defined]

    def validate_q(self, value: str) -> str:
        cleaned = clean_query(value)
        if not cleaned:
            raise serializers.ValidationError("must contain a printable character")
        return cleaned


class SearchPagination(Pagination):
    """The envelope, plus `totals`: how many matches each kind has (the page lists kind after kind)."""

    default_limit = 50

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        envelope = super().get_paginated_response_schema(schema)
        envelope["properties"]["totals"] = {"type": "object", "additionalProperties": {"type": "integer"}}
        envelope["required"].append("totals")
        return envelope


class SearchView(viewsets.ViewSet):
    """One search over everything the search box finds: devices, pods, claims, nodes, DeviceTaintRules and
    maintenances, kind after kind, exact names first within each kind."""

    pagination_class = SearchPagination

    @extend_schema(parameters=[SearchQuery], responses=s.SearchHitSerializer(many=True))
    def list(self, request: Request) -> Response:
        query = SearchQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        kind = query.validated_data.get("kind")
        results = SearchResults(query=query.validated_data["q"], kinds=[kind] if kind else None)
        return paginated(
            request,
            results,
            view=self,
            serialize=lambda page: s.SearchHitSerializer(page, many=True).data,
            pagination_class=SearchPagination,
            params=list(SearchQuery().fields),
            totals=results.totals,
        )
