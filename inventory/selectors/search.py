"""What the search box finds in the mirror: devices, pods, claims, nodes and DeviceTaintRules.

Each kind is one `dradash.search.SearchProvider` (registered in InventoryConfig.ready). Queries are the
ORM's (parameters, `%` and `_` escaped); exact names sort first; every lookup is bounded by LIMIT so a
query that matches 100,000 devices reads only the page it shows (the count is one `COUNT(*)`).

A query `namespace/name` looks for that name in that namespace (pods, claims); for devices,
`driver/pool/name` is the identity shown everywhere and `node/name` finds a device on one node.
"""

from __future__ import annotations

from django.db import connection
from django.db.models import Case, Count, IntegerField, Q, QuerySet, Value, When
from django.urls import reverse
from django.utils.http import urlencode

from dradash.search import SearchHit, SearchProvider, register_provider
from inventory.links import claim_url, device_url, node_url, pod_url, rule_url
from inventory.models import Claim, Device, KubeObject, Pool
from inventory.selectors.common import DEVICE_TEXT_COLUMNS, NODES, PODS, RULES, device_text_contains


def _ranked(qs: QuerySet[KubeObject], exact: Q, prefix: Q) -> QuerySet[KubeObject]:
    rank = Case(
        When(exact, then=Value(0)), When(prefix, then=Value(1)), default=Value(2), output_field=IntegerField()
    )
    return qs.annotate(_rank=rank)


# ---- pods (mirrored as KubeObjects; spec.nodeName is their index_key) ----


def _namespaced(q: str, *, name: str = "name", namespace: str = "namespace") -> tuple[Q, Q, Q]:
    """(matches, exact, prefix) for a pod or claim query: `ns/name` or a part of the name."""
    ns, slash, rest = q.partition("/")
    if slash:
        match = Q(**{namespace: ns, f"{name}__icontains": rest}) if rest else Q(**{namespace: ns})
        return match, Q(**{namespace: ns, name: rest}), Q(**{namespace: ns, f"{name}__istartswith": rest})
    return (
        Q(**{f"{name}__icontains": q}) | Q(**{namespace: q}),
        Q(**{name: q}),
        Q(**{f"{name}__istartswith": q}),
    )


def _pods(q: str) -> QuerySet[KubeObject]:
    match, exact, prefix = _namespaced(q)
    qs = KubeObject.objects.filter(kind=PODS).filter(match)
    return _ranked(qs, exact, prefix).order_by("_rank", "namespace", "name")


def _pod_hits(q: str, start: int, stop: int) -> list[SearchHit]:
    rows = _pods(q).only("namespace", "name", "index_key", "raw")[start:stop]
    hits = []
    for pod in rows:
        phase = str((pod.raw.get("status") or {}).get("phase") or "")
        where = f"on {pod.index_key}" if pod.index_key else "not scheduled"
        hits.append(
            SearchHit(
                kind="pods",
                name=pod.name,
                namespace=pod.namespace,
                url=pod_url(pod.namespace, pod.name),
                detail=" · ".join(p for p in (phase, where) if p),
                exact=getattr(pod, "_rank", 2) == 0,
            )
        )
    return hits


# ---- claims ----


def _claims(q: str) -> QuerySet[Claim]:
    match, exact, prefix = _namespaced(q)
    if "/" not in q:
        match |= Q(owner_pod__icontains=q)  # the claims made for a pod (templates, extended resources)
    rank = Case(
        When(exact, then=Value(0)), When(prefix, then=Value(1)), default=Value(2), output_field=IntegerField()
    )
    return Claim.objects.filter(match).annotate(_rank=rank).order_by("_rank", "namespace", "name")


def _claim_hits(q: str, start: int, stop: int) -> list[SearchHit]:
    rows = _claims(q).only("namespace", "name", "state", "device_count")[start:stop]
    return [
        SearchHit(
            kind="claims",
            name=c.name,
            namespace=c.namespace,
            url=claim_url(c.namespace, c.name),
            detail=f"{c.state} · {c.device_count} device{'s' if c.device_count != 1 else ''}",
            exact=getattr(c, "_rank", 2) == 0,
        )
        for c in rows
    ]


# ---- nodes: Node objects and the nodes pools name (a node may publish devices before it is mirrored) ----


def _node_names(q: str) -> list[str]:
    objects = KubeObject.objects.filter(kind=NODES, name__icontains=q).values_list("name", flat=True)
    # Pools, not devices: one row per driver and node instead of one per device (100× fewer to scan).
    with_devices = (
        Pool.objects.filter(node_name__icontains=q).order_by().values_list("node_name", flat=True).distinct()
    )
    names = set(objects) | set(with_devices)
    return sorted(names, key=lambda n: (n != q, not n.lower().startswith(q.lower()), n))


def _node_hits(q: str, start: int, stop: int) -> list[SearchHit]:
    return [
        SearchHit(kind="nodes", name=n, url=node_url(n), exact=n == q) for n in _node_names(q)[start:stop]
    ]


# ---- devices ----


def _prefix(field: str, text: str) -> Q:
    """`field` starts with `text`, answered from the field's index: PostgreSQL has a LIKE index for it;
    SQLite's LIKE ignores case and cannot use one, so a range on the (binary-collated) index narrows it."""
    starts = Q(**{f"{field}__startswith": text})
    if connection.vendor == "sqlite":
        return Q(**{f"{field}__gte": text, f"{field}__lt": text + "\U0010ffff"}) & starts
    return starts


def _device_tiers(q: str) -> tuple[Q, Q | None]:
    """Which devices a plain query finds, cheapest first, the first tier that finds any:

    1. a device or node name starting with the query (both columns indexed), which is what people type;
    2. else a name, pool, node or driver containing it anywhere;
    3. else an attribute value starting with it (a UUID, a PCI bus id, a model): a LIKE on the
       "\nkey=value\n" text the Devices filter already uses, no JSON lookup per row.

    Returns (tier 1, None) when tier 1 finds devices (one index probe), else (tier 2, tier 3): those two
    are asked in the same query, tier 2 ranked first (`_tier`), so a query that matches nothing reads the
    devices once, not once per tier.

    Names, pools, nodes and drivers are lowercase in Kubernetes (DNS names), so tiers 1 and 2 compare
    with the lowercased query (`device_text_contains`); attribute values keep their case.
    """
    name = q.lower()
    starts = _prefix("name", name) | _prefix("node_name", name)
    if Device.objects.filter(starts).exists():
        return starts, None
    anywhere = device_text_contains(name, (*DEVICE_TEXT_COLUMNS, "driver"))
    return anywhere, Q(attribute_index__contains=f"={q}")


def _devices(q: str) -> QuerySet[Device]:
    parts = q.split("/")
    tier = Value(0)
    if len(parts) >= 3:  # driver/pool/name (a pool may hold "/")
        driver, name, pool = parts[0], parts[-1], "/".join(parts[1:-1])
        exact = Q(driver=driver, pool=pool, name=name)
        match = Q(driver=driver, pool=pool, name__icontains=name)
        prefix = Q(name__istartswith=name)
    elif len(parts) == 2:  # node/name
        exact = Q(node_name=parts[0], name=parts[1])
        match = Q(node_name=parts[0], name__icontains=parts[1])
        prefix = Q(name__istartswith=parts[1])
    else:
        exact = Q(name=q.lower())
        prefix = Q(name__startswith=q.lower())
        match, attributes = _device_tiers(q)
        if attributes is not None:
            tier = Case(When(match, then=Value(0)), default=Value(1), output_field=IntegerField())
            match = match | attributes
    rank = Case(
        When(exact, then=Value(0)), When(prefix, then=Value(1)), default=Value(2), output_field=IntegerField()
    )
    return (
        Device.objects.filter(match)
        .annotate(_tier=tier, _rank=rank)
        .order_by("_tier", "_rank", "node_name", "driver", "pool", "name")
    )


def _device_count(q: str) -> int:
    """Tier 2's devices when there are any, else tier 3's: both counted in one pass."""
    counts = (
        _devices(q)
        .order_by()
        .aggregate(first=Count("id", filter=Q(_tier=0)), later=Count("id", filter=Q(_tier=1)))
    )
    return int(counts["first"] or counts["later"] or 0)


def _device_hits(q: str, start: int, stop: int) -> list[SearchHit]:
    rows = _devices(q).only(
        "driver", "pool", "name", "node_name", "allocation_state", "claim_namespace", "claim_name"
    )
    page = list(rows[start:stop])
    if page and page[0]._tier == 0:  # type: ignore[attr-defined]
        # Tier 2 found devices: tier 3's (ranked after them) are not matches.
        page = [d for d in page if d._tier == 0]  # type: ignore[attr-defined]
    elif page and start > 0 and _device_count(q) <= start:
        page = []
    hits = []
    for d in page:
        # "free" means allocatable now on the pages; a device no claim holds is "unallocated".
        state = "unallocated" if d.allocation_state == "free" else d.allocation_state
        used = f"claim {d.claim_namespace}/{d.claim_name}" if d.claim_name else state
        hits.append(
            SearchHit(
                kind="devices",
                name=d.name,
                url=device_url(d.driver, d.pool, d.name),
                detail=" · ".join(p for p in (d.node_name or "no node", f"{d.driver}/{d.pool}", used) if p),
                exact=getattr(d, "_rank", 2) == 0,
            )
        )
    return hits


def _device_more(q: str) -> str:
    return reverse("inventory:devices") + "?" + urlencode({"q": q}) if "/" not in q else ""


# ---- DeviceTaintRules ----


def _rules(q: str) -> QuerySet[KubeObject]:
    qs = KubeObject.objects.filter(kind=RULES, name__icontains=q)
    return _ranked(qs, Q(name=q), Q(name__istartswith=q)).order_by("_rank", "name")


def _rule_hits(q: str, start: int, stop: int) -> list[SearchHit]:
    hits = []
    for rule in _rules(q).only("name", "raw")[start:stop]:
        taint = (rule.raw.get("spec") or {}).get("taint") or {}
        detail = f"{taint.get('key', '')}={taint.get('value', '')}:{taint.get('effect', '')}" if taint else ""
        hits.append(
            SearchHit(
                kind="taint-rules",
                name=rule.name,
                url=rule_url(rule.name),
                detail=detail,
                exact=getattr(rule, "_rank", 2) == 0,
            )
        )
    return hits


PROVIDERS = [
    SearchProvider("pods", "Pods", 10, count=lambda q: _pods(q).count(), hits=_pod_hits),
    SearchProvider(
        "claims",
        "ResourceClaims",
        20,
        count=lambda q: _claims(q).count(),
        hits=_claim_hits,
        more_url=lambda q: reverse("inventory:claims") + "?" + urlencode({"q": q}) if "/" not in q else "",
    ),
    SearchProvider(
        "nodes",
        "Nodes",
        30,
        count=lambda q: len(_node_names(q)),
        hits=_node_hits,
        more_url=lambda q: reverse("inventory:nodes") + "?" + urlencode({"q": q}),
    ),
    SearchProvider(
        "devices",
        "Devices",
        40,
        count=_device_count,
        hits=_device_hits,
        more_url=_device_more,
    ),
    SearchProvider("taint-rules", "DeviceTaintRules", 50, count=lambda q: _rules(q).count(), hits=_rule_hits),
]


def register_search_providers() -> None:
    for provider in PROVIDERS:
        register_provider(provider)
