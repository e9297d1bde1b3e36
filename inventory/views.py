"""Inventory pages. Thin: queries live in inventory.selectors.

Every page renders `live_version`; a live region re-fetches itself with `?fragment=<name>` when the
websocket (or the polling fallback) says one of its kinds changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_safe

from dra.availability import BLOCK_REASONS
from dradash.context import user_is_admin
from dradash.csvexport import csv_lines
from dradash.fieldnames import shown_errors, unknown_parameters
from dradash.search import clean_query, search_groups
from dradash.search import kinds as search_kinds
from inventory import tables
from inventory.filters import (
    CLAIM_FILTER_LABELS,
    DEVICE_FILTER_LABELS,
    NODE_FILTER_LABELS,
    POD_FILTER_LABELS,
    ClaimFilterSet,
    DeviceFilterSet,
    PodFilterSet,
)
from inventory.models import Claim, Device, KubeObject, Pod
from inventory.redaction import redact_device_status
from inventory.selectors import claims as claim_queries
from inventory.selectors import devices as device_queries
from inventory.selectors import nodes as node_queries
from inventory.selectors import objects as object_queries
from inventory.selectors import pods as pod_queries
from inventory.selectors import rules as rule_queries
from inventory.selectors.claims import claim_state_counts
from inventory.selectors.classes import class_overview
from inventory.selectors.devices import device_filter_choices, device_get
from inventory.selectors.features import (
    claim_features,
    compatibility_by_class,
    device_features,
    node_allocatable,
    pod_device_metadata,
)
from inventory.selectors.nodes import node_names, node_rows, node_sort_valid
from inventory.selectors.objects import kube_object_by_uid, live_version, watch_health
from inventory.selectors.overview import cluster_summary, overview_totals
from inventory.selectors.rules import taint_rule_list

DEVICE_KINDS = "resourceslices devicetaintrules resourceclaims pods deviceclasses"
PAGE_SIZE_MAX = 500
YAML_KINDS = {
    "resourceslices",
    "deviceclasses",
    "resourceclaims",
    "resourceclaimtemplates",
    "devicetaintrules",
    "pods",
    "nodes",
    "poddisruptionbudgets",
    "resourcepoolstatusrequests",
}


def _page(
    request: HttpRequest, template: str, context: dict[str, Any], fragments: dict[str, str]
) -> HttpResponse:
    """Render the page, or only one of its live fragments when asked with ?fragment=<name>; a page whose
    query it refuses (context `errors`) shows them with a 400."""
    fragment = request.GET.get("fragment")
    status = 400 if context.get("errors") else 200
    context.setdefault("live_version", live_version())
    if fragment:
        if fragment not in fragments:
            return HttpResponse(
                f"unknown fragment {fragment[:64]!r}; known: {', '.join(sorted(fragments))}",
                status=400,
                content_type="text/plain; charset=utf-8",  # never echo a query parameter as HTML
            )
        return render(request, fragments[fragment], context, status=status)
    return render(request, template, context, status=status)


def _fragment_url(request: HttpRequest, name: str) -> str:
    params = request.GET.copy()
    params["fragment"] = name
    params.pop("live", None)
    return f"{request.path}?{params.urlencode()}"


@login_required
@require_safe
def live_state(request: HttpRequest) -> JsonResponse:
    """What the polling fallback asks every few seconds: has anything changed since the page was drawn?"""
    return JsonResponse({"version": live_version()})


@require_safe
@login_required
def status_banner(request: HttpRequest) -> HttpResponse:
    """The banner alone (the context processor fills it), for its live refresh."""
    return render(request, "partials/status_banner.html")


# ---- overview ----


@login_required
@require_safe
def overview(request: HttpRequest) -> HttpResponse:
    classes = class_overview().classes
    chart = {
        "labels": [c.name for c in classes],
        "allocated": [c.allocated + c.shared for c in classes],
        "free": [c.free for c in classes],
        "blocked": [c.unavailable for c in classes],
    }
    context = {
        "classes": classes,
        "totals": overview_totals(),
        "watches": list(watch_health()),
        "chart": chart,
        "summary_url": _fragment_url(request, "summary"),
        "block_labels": BLOCK_REASONS,
        "cluster": cluster_summary(),
    }
    return _page(
        request, "inventory/overview.html", context, {"summary": "inventory/partials/overview_summary.html"}
    )


# ---- devices ----


def _device_filters(request: HttpRequest) -> DeviceFilterSet:
    return DeviceFilterSet(request.GET, queryset=Device.objects.all())


#: query parameters the list pages take besides their filters (paging, sorting, the live fragments)
PAGE_PARAMS = ("page", "size", "sort", "dir", "fragment", "live")


def _unknown_parameters(request: HttpRequest, filters: Any) -> list[str]:
    """Parameters that are neither a filter of this page nor paging: a misspelt filter must not quietly
    show everything (the API answers 400 for the same), so the page names it and lists nothing."""
    return [name for name in request.GET if name not in filters and name not in PAGE_PARAMS]


def _refused_values(filterset: Any) -> dict[str, list[str]]:
    """The values a list page's FilterSet rejects, by parameter."""
    rejected = {} if filterset.is_valid() else filterset.errors.get_json_data()
    return {name: [str(e["message"]) for e in errs] for name, errs in rejected.items()}


def _filter_errors(request: HttpRequest, filterset: Any) -> dict[str, list[str]]:
    """What the Devices data and export endpoints refuse in their query, by parameter (400, named as the API
    names them): values the FilterSet rejects and parameters that are not its filters."""
    filters = filterset.filters
    message = f"not a filter of this page; its filters are {', '.join(filters)}"
    unknown = {name[:100]: [message] for name in _unknown_parameters(request, filters)[:5]}
    return {**_refused_values(filterset), **unknown}


def _query_errors(
    request: HttpRequest, refused: dict[str, list[str]], labels: dict[str, str]
) -> dict[str, Any]:
    """What a list page refuses in its query, for partials/query_errors.html: the values it rejects (named
    by their labels) and the parameters that are not its filters (`labels`: its filters). `errors` says
    whether it refuses anything: it then shows them, lists nothing and answers 400."""
    unknown = _unknown_parameters(request, labels)
    return {
        "errors": bool(refused or unknown),
        "field_errors": shown_errors(refused, labels),
        "unknown_parameters": unknown_parameters(unknown, labels),
        "filter_labels": labels,
    }


def _refused(errors: dict[str, list[str]]) -> JsonResponse:
    """A data or export request the page would refuse: 400, each parameter with its messages."""
    body = {"errors": {name: [{"message": m} for m in messages] for name, messages in errors.items()}}
    return JsonResponse(body, status=400)


@login_required
@require_safe
def devices(request: HttpRequest) -> HttpResponse:
    filterset = _device_filters(request)
    query = request.GET.copy()
    for key in ("page", "size", "fragment", "live"):
        query.pop(key, None)
    qs = query.urlencode()
    context = {
        "filter": filterset,
        **_query_errors(request, _refused_values(filterset), DEVICE_FILTER_LABELS),
        "choices": device_filter_choices(),
        "query": qs,
        "data_url": reverse("inventory:devices-data") + (f"?{qs}" if qs else ""),
        "csv_url": reverse("inventory:devices-export-csv") + (f"?{qs}" if qs else ""),
        "json_url": reverse("inventory:devices-export-json") + (f"?{qs}" if qs else ""),
        "live_kinds": DEVICE_KINDS,
        "values": {k: request.GET.get(k, "") for k in filterset.filters},
        # The filters alone (no paging, sorting or live parameters): what a new maintenance starts from.
        "maintenance_query": urlencode({k: v for k in filterset.filters if (v := request.GET.get(k, ""))}),
        "filtered": any(request.GET.get(k, "") for k in filterset.filters),
        "table": tables.table_spec(),
    }
    status = 400 if context["errors"] else 200
    return render(
        request, "inventory/devices.html", context | {"live_version": live_version()}, status=status
    )


def _int_param(request: HttpRequest, name: str, default: int, *, minimum: int, maximum: int) -> int:
    raw = request.GET.get(name, "")
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {raw[:40]!r}") from None
    if not minimum <= value <= maximum:
        raise ValueError(f"{name} must be between {minimum} and {maximum}, got {value}")
    return value


@login_required
@require_safe
def devices_data(request: HttpRequest) -> JsonResponse:
    """One page of the Devices table for the Tabulator island (remote pagination: page, size)."""
    filterset = _device_filters(request)
    if errors := _filter_errors(request, filterset):
        return _refused(errors)
    try:
        page = _int_param(request, "page", 1, minimum=1, maximum=10**6)
        size = _int_param(request, "size", 100, minimum=1, maximum=PAGE_SIZE_MAX)
    except ValueError as exc:
        return JsonResponse({"errors": {"__all__": [{"message": str(exc)}]}}, status=400)
    try:
        qs = _sorted_devices(request, filterset)
    except ValueError as exc:
        return JsonResponse({"errors": {"sort": [{"message": str(exc)}]}}, status=400)
    total = qs.count()
    last_page = max(1, -(-total // size))
    rows = list(tables.device_rows(qs[(page - 1) * size : page * size]))
    base = reverse("inventory:devices")
    for row in rows:
        row["url"] = tables.device_url(row, base)
    return JsonResponse({"last_page": last_page, "last_row": total, "data": rows, "version": live_version()})


def _sorted_devices(request: HttpRequest, filterset: DeviceFilterSet) -> QuerySet[Device]:
    """The filtered devices in the table's order (?sort=COLUMN&dir=asc|desc, as the table sends them)."""
    sort, direction = request.GET.get("sort", ""), request.GET.get("dir", "asc")
    if sort and sort not in tables.sorts() or direction not in ("asc", "desc"):
        raise ValueError(f"sort must be one of {', '.join(sorted(tables.sorts()))} and dir asc or desc")
    return tables.sort_queryset(filterset.qs, sort, direction == "desc")


def _export_rows(qs: QuerySet[Device]) -> Iterator[dict[str, Any]]:
    yield from tables.device_rows(qs)


@login_required
@require_safe
def devices_export_csv(request: HttpRequest) -> HttpResponse:
    filterset = _device_filters(request)
    if errors := _filter_errors(request, filterset):
        return _refused(errors)
    try:
        qs = _sorted_devices(request, filterset)
    except ValueError as exc:
        return JsonResponse({"errors": {"sort": [{"message": str(exc)}]}}, status=400)
    lines = csv_lines(tables.csv_header(), (tables.csv_row(row) for row in _export_rows(qs)))
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="devices.csv"'
    return response


@login_required
@require_safe
def devices_export_json(request: HttpRequest) -> HttpResponse:
    filterset = _device_filters(request)
    if errors := _filter_errors(request, filterset):
        return _refused(errors)
    try:
        qs = _sorted_devices(request, filterset)
    except ValueError as exc:
        return JsonResponse({"errors": {"sort": [{"message": str(exc)}]}}, status=400)

    def chunks() -> Iterator[str]:
        yield "["
        for i, row in enumerate(_export_rows(qs)):
            yield ("," if i else "") + json.dumps(row)
        yield "]"

    response = StreamingHttpResponse(chunks(), content_type="application/json")
    response["Content-Disposition"] = 'attachment; filename="devices.json"'
    return response


@login_required
@require_safe
def device_detail(request: HttpRequest, driver: str, pool: str, name: str) -> HttpResponse:
    try:
        device = device_get(driver=driver, pool=pool, name=name)
    except Device.DoesNotExist:
        raise Http404("no such device (it may have been removed from its ResourceSlice)") from None
    detail = device_queries.device_detail(device=device)
    if not user_is_admin(request.user):  # the drivers' device status data: credentials for admins only
        device.statuses = [redact_device_status(entry) for entry in device.statuses or []]
    context = {
        "device": device,
        "detail": detail,
        "attributes": sorted((device.attributes or {}).items()),
        "capacity": sorted((device.capacity or {}).items()),
        "features": device_features(device=device),
        "fragment_url": _fragment_url(request, "body"),
        "live_kinds": DEVICE_KINDS,
    }
    return _page(
        request, "inventory/device_detail.html", context, {"body": "inventory/partials/device_body.html"}
    )


# ---- claims ----


@login_required
@require_safe
def claims(request: HttpRequest) -> HttpResponse:
    filterset = ClaimFilterSet(request.GET, queryset=Claim.objects.all())
    sort = request.GET.get("sort", "")
    ordering = claim_queries.claim_ordering(sort=sort)
    refused = _query_errors(request, _refused_values(filterset), CLAIM_FILTER_LABELS)
    qs = Claim.objects.none() if refused["errors"] else filterset.qs.order_by(*ordering)
    paginator = Paginator(qs, 100)
    page = paginator.get_page(request.GET.get("page"))
    query = request.GET.copy()
    for key in ("page", "fragment", "live"):
        query.pop(key, None)
    context = {
        "filter": filterset,
        "page": page,
        "query": query.urlencode(),
        "values": {k: request.GET.get(k, "") for k in filterset.filters},
        "filtered": any(request.GET.get(k, "") for k in filterset.filters),
        "fragment_url": _fragment_url(request, "table"),
        "counts": claim_state_counts(),
        "sort": sort if sort.lstrip("-") in claim_queries.CLAIM_SORTS else "",
        **refused,
    }
    return _page(request, "inventory/claims.html", context, {"table": "inventory/partials/claims_table.html"})


@login_required
@require_safe
def claim_detail(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    try:
        detail = claim_queries.claim_detail(
            namespace=namespace, name=name, reveal=user_is_admin(request.user)
        )
    except (KubeObject.DoesNotExist, Claim.DoesNotExist):
        raise Http404("no such ResourceClaim") from None
    raw = detail.obj.raw
    status = raw.get("status") or {}
    pods = {p.uid: p for p in detail.pods}
    reserved = [r | {"pod": pods.get(r.get("uid", ""))} for r in status.get("reservedFor") or []]
    devices = {(d.driver, d.pool, d.name): d for d in detail.devices}
    results = [r | {"row": devices.get((r["driver"], r["pool"], r["device"]))} for r in detail.results]
    # The scheduler's extended-resource claim: which container asked for which resource name (pod status).
    mappings = [
        m | {"pod": p.name}
        for p in detail.pods
        if ((p.raw.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        == detail.obj.name
        for m in p.raw["status"]["extendedResourceClaimStatus"].get("requestMappings") or []
    ]
    spec = (raw.get("spec") or {}).get("devices") or {}
    allocation = status.get("allocation") or {}
    context = {
        "claim": detail.claim,
        "obj": detail.obj,
        "spec": spec,
        "node_selector": claim_queries.node_selector_view(allocation.get("nodeSelector")),
        "constraints": claim_queries.constraints_view(spec.get("constraints")),
        "reserved": reserved,
        "results": results,
        "extended_mappings": mappings,
        "features": claim_features(claim=detail.obj, pods=detail.pods, reveal=user_is_admin(request.user)),
        "fragment_url": _fragment_url(request, "body"),
    }
    return _page(
        request, "inventory/claim_detail.html", context, {"body": "inventory/partials/claim_body.html"}
    )


# ---- device classes, taint rules, nodes ----


@login_required
@require_safe
def classes(request: HttpRequest) -> HttpResponse:
    overview = class_overview()
    context = {
        "rows": overview.classes,
        "warnings": overview.warnings,
        "compatibility": compatibility_by_class(),
        "fragment_url": _fragment_url(request, "body"),
    }
    return _page(request, "inventory/classes.html", context, {"body": "inventory/partials/classes_body.html"})


@login_required
@require_safe
def taint_rules(request: HttpRequest) -> HttpResponse:
    context = {"rows": taint_rule_list(), "fragment_url": _fragment_url(request, "body")}
    return _page(
        request, "inventory/taint_rules.html", context, {"body": "inventory/partials/taint_rules_body.html"}
    )


MATCHED_DEVICES_SHOWN = 500


@login_required
@require_safe
def taint_rule_detail(request: HttpRequest, name: str) -> HttpResponse:
    try:
        rule, devices = rule_queries.taint_rule_detail(name=name)
    except KubeObject.DoesNotExist:
        raise Http404("no such DeviceTaintRule") from None
    context = {
        "rule": rule,
        "obj": rule.obj,
        "selector": rule.selector,
        "taint": rule.taint,
        "conditions": (rule.obj.raw.get("status") or {}).get("conditions") or [],
        "matched": list(devices[:MATCHED_DEVICES_SHOWN]),
        "matched_total": rule.matched_devices,
        "fragment_url": _fragment_url(request, "body"),
    }
    return _page(
        request,
        "inventory/taint_rule_detail.html",
        context,
        {"body": "inventory/partials/taint_rule_body.html"},
    )


NODES_PER_PAGE = 50


@login_required
@require_safe
def nodes(request: HttpRequest) -> HttpResponse:
    q = request.GET.get("q", "")[:253]
    sort = request.GET.get("sort", "")[:300]
    sort = sort if node_sort_valid(sort) else ""
    refused = _query_errors(request, {}, NODE_FILTER_LABELS)
    paginator = Paginator([] if refused["errors"] else node_names(q=q, sort=sort), NODES_PER_PAGE)
    page = paginator.get_page(request.GET.get("page"))
    drivers, rows = node_rows(names=list(page.object_list))
    context = {
        "page": page,
        "q": q,
        "sort": sort,
        "drivers": drivers,
        "rows": rows,
        "query": urlencode({k: v for k, v in (("q", q), ("sort", sort)) if v}),
        "fragment_url": _fragment_url(request, "body"),
        **refused,
    }
    return _page(request, "inventory/nodes.html", context, {"body": "inventory/partials/nodes_body.html"})


@login_required
@require_safe
def node_detail(request: HttpRequest, name: str) -> HttpResponse:
    try:
        detail = node_queries.node_detail(name=name)
    except KubeObject.DoesNotExist:
        raise Http404("no such node (neither a Node object nor a device names it)") from None
    context = {
        "node": detail,
        "labels": sorted(detail.labels.items()),
        "allocatable": sorted(detail.allocatable.items()),
        "node_allocatable": node_allocatable(node=name),
        "fragment_url": _fragment_url(request, "body"),
        "live_kinds": "nodes pods " + DEVICE_KINDS,
    }
    return _page(
        request, "inventory/node_detail.html", context, {"body": "inventory/partials/node_body.html"}
    )


# ---- pods ----

PODS_PER_PAGE = 100


@login_required
@require_safe
def pods(request: HttpRequest) -> HttpResponse:
    filterset = PodFilterSet(request.GET, queryset=Pod.objects.all())
    sort = request.GET.get("sort", "")
    values = _refused_values(filterset)
    try:
        ordering = tables.list_ordering(tables.POD_COLUMNS, sort)
    except ValueError as exc:
        values["sort"] = [str(exc)]
    refused = _query_errors(request, values, POD_FILTER_LABELS)
    qs = Pod.objects.none() if refused["errors"] else filterset.qs.order_by(*ordering)
    page = Paginator(qs, PODS_PER_PAGE).get_page(request.GET.get("page"))
    pod_queries.mark_claims_in_mirror(page.object_list)
    query = request.GET.copy()
    for key in ("page", "fragment", "live"):
        query.pop(key, None)
    shown = {k: request.GET.get(k, "") for k in filterset.filters}
    context = {
        "filter": filterset,
        "page": page,
        "query": query.urlencode(),
        "values": shown,
        "filtered": any(shown.values()),
        "columns": tables.POD_COLUMNS,
        "namespaces": pod_queries.pod_namespaces(),
        "counts": pod_queries.pod_counts(),
        "fragment_url": _fragment_url(request, "table"),
        "sort": "" if "sort" in values else sort,
        **refused,
    }
    return _page(request, "inventory/pods.html", context, {"table": "inventory/partials/pods_table.html"})


@login_required
@require_safe
def pod_detail(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    try:
        detail = pod_queries.pod_detail(namespace=namespace, name=name)
    except KubeObject.DoesNotExist:
        raise Http404("no such pod in the mirror (it may have been deleted)") from None
    context = {
        "pod": detail,
        "obj": detail.obj,
        "pod_devices": pod_device_metadata(
            namespace=namespace, name=name, reveal=user_is_admin(request.user)
        ),
        "fragment_url": _fragment_url(request, "body"),
        "live_kinds": DEVICE_KINDS,
    }
    return _page(request, "inventory/pod_detail.html", context, {"body": "inventory/partials/pod_body.html"})


# ---- search ----

SEARCH_PER_KIND = 10
#: one kind asked for ("N more"): a longer list, still bounded
SEARCH_PER_KIND_ALONE = 200


@login_required
@require_safe
def search(request: HttpRequest) -> HttpResponse:
    q = clean_query(request.GET.get("q", ""))
    kind = request.GET.get("kind", "")
    known = search_kinds()
    if kind and kind not in known:
        context = {"q": q, "groups": [], "error": f"kind must be one of {', '.join(known)}", "kinds": known}
        return render(request, "inventory/search.html", context | {"live_version": None}, status=400)
    groups = search_groups(
        query=q,
        per_kind=SEARCH_PER_KIND_ALONE if kind else SEARCH_PER_KIND,
        kinds=[kind] if kind else None,
    )
    for group in groups:
        if not group.more_url:
            group.more_url = reverse("inventory:search") + "?" + urlencode({"q": q, "kind": group.kind})
    context = {"q": q, "kind": kind, "groups": groups, "kinds": known, "error": ""}
    return render(request, "inventory/search.html", context | {"live_version": None})


# ---- YAML of any mirrored object ----


@login_required
@require_safe
def object_yaml(request: HttpRequest, kind: str, uid: str) -> HttpResponse:
    if kind not in YAML_KINDS:
        raise Http404(f"unknown kind {kind[:64]!r}")
    obj = kube_object_by_uid(kind=kind, uid=uid)
    if obj is None:
        raise Http404(f"no {kind} with uid {uid[:64]!r}")
    reveal = user_is_admin(request.user)
    if request.GET.get("format") == "json":
        return JsonResponse(object_queries.object_raw(obj=obj, reveal=reveal))
    context = {"obj": obj, "yaml": object_queries.object_yaml(obj=obj, reveal=reveal)}
    return render(request, "inventory/yaml.html", context | {"live_version": None})
