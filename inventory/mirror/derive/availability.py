"""What one-device claims of each DeviceClass could get from each pool (`dra.availability`), as rows.

Per pool: one `ClassAvailability` row per class that selects a device of the pool, and `Device.blocked`
/ `blocked_reason` on its devices. The allocator runs here, in the mirror, for the pools a batch
touched (their slices, the claims allocating from them, the rules selecting them, any class change,
the nodes that reach them), never on a page read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from types import SimpleNamespace

from django.db.models import Q

from dra.availability import node_local_names, pool_availability
from dra.selection import device_selector
from inventory.mirror import sql
from inventory.mirror.derive.claims import HOLDING_FIELDS
from inventory.mirror.derive.common import JSON, chunks, pools_q, selector_filters
from inventory.mirror.derive.context import Context
from inventory.models import Allocation, ClassAvailability, Device, KubeObject, Pool

BLOCKED_FIELDS = ["blocked", "blocked_reason"]
CLASS_AVAILABILITY_FIELDS = ["driver", "pool", "device_class", "free", "headroom", "capped", "error"]


def recompute_availability(pool_keys: Iterable[str], ctx: Context) -> None:
    """Rewrite the availability of these pools ("driver/pool" keys) from the rows and objects as they are."""
    for batch in chunks(sorted(set(pool_keys)), 100):
        _recompute(batch, ctx)


def _recompute(pool_keys: list[str], ctx: Context) -> None:
    slices: dict[str, list[JSON]] = defaultdict(list)
    for key, raw in KubeObject.objects.filter(kind="resourceslices", index_key__in=pool_keys).values_list(
        "index_key", "raw"
    ):
        slices[key].append(raw)
    devices: dict[str, list[tuple[int, str, list[str], str, str]]] = defaultdict(list)
    for pk, driver, pool, name, classes, blocked, reason in Device.objects.filter(
        pools_q(pool_keys)
    ).values_list("pk", "driver", "pool", "name", "classes", "blocked", "blocked_reason"):
        devices[f"{driver}/{pool}"].append((pk, name, classes or [], blocked, reason))
    wanted = {key: {c for _pk, _n, classes, _b, _r in rows for c in classes} for key, rows in devices.items()}
    blocked_by_pool = write_pool_numbers(pool_keys, slices, wanted, ctx)
    changed: list[SimpleNamespace] = []
    for key in pool_keys:
        blocked_now = blocked_by_pool.get(key, {})
        for pk, name, _classes, blocked, reason in devices.get(key, []):
            new = blocked_now.get(name, ("", ""))
            if new != (blocked, reason):
                changed.append(SimpleNamespace(pk=pk, blocked=new[0], blocked_reason=new[1]))
    sql.update(Device, changed, fields=BLOCKED_FIELDS)


def write_pool_numbers(
    pool_keys: list[str],
    slices: Mapping[str, list[JSON]],
    wanted: Mapping[str, Iterable[str]],
    ctx: Context,
) -> dict[str, dict[str, tuple[str, str]]]:
    """The allocator per pool: replaces the pools' ClassAvailability rows, and returns per pool its
    blocked devices (name → (blocked, blocked_reason)) for the caller's Device rows. `slices`: every
    slice of each pool; `wanted`: the classes that select one of the pool's devices. The allocated
    claims are read from the Allocation rows."""
    claims = _claims_by_pool(pool_keys)
    rules = _rules_by_pool(ctx)
    ctx.slice_nodes([s for key in pool_keys for s in slices.get(key, ())])
    bound = {key: node_local_names(slices.get(key, [])) for key in pool_keys}
    if all(names is not None for names in bound.values()):
        ctx.nodes(frozenset().union(*(names for names in bound.values() if names)))  # one query for all
    else:
        ctx.nodes(None)
    rows: list[SimpleNamespace] = []
    blocked: dict[str, dict[str, tuple[str, str]]] = {}
    for key in pool_keys:
        driver, _, pool = key.partition("/")
        result = pool_availability(
            driver=driver,
            pool=pool,
            slices=slices.get(key, []),
            allocated_claims=claims.get(key, []),
            taint_rules=rules.of(driver, pool),
            classes=[
                ctx.class_objects[c] for c in sorted(set(wanted.get(key, ()))) if c in ctx.class_objects
            ],
            # The nodes the what-if would try for this pool: those it is bound to by name, else all.
            nodes=ctx.nodes(bound[key]),
            selector_memo=ctx.selector_memo,
            pool_memo=ctx.pool_memo,
        )
        for name, numbers in result.classes.items():
            rows.append(
                SimpleNamespace(
                    driver=driver,
                    pool=pool,
                    device_class=name,
                    free=numbers.free,
                    headroom=numbers.headroom,
                    capped=numbers.capped,
                    error=numbers.error[:2000],
                )
            )
        blocked[key] = {
            name: (block.reason, block.message[:2000])
            for name, block in result.devices.items()
            if block is not None
        }
    ClassAvailability.objects.filter(pools_q(pool_keys)).delete()
    sql.insert(ClassAvailability, rows, fields=CLASS_AVAILABILITY_FIELDS)
    return blocked


def _claims_by_pool(pool_keys: list[str]) -> dict[str, list[JSON]]:
    """The allocated claims holding devices of these pools, rebuilt from Allocation rows: the allocator
    needs only which device each result holds (and its share and consumed capacity)."""
    results: dict[str, dict[str, list[JSON]]] = defaultdict(lambda: defaultdict(list))
    refs: dict[str, tuple[str, str]] = {}
    rows = Allocation.objects.filter(pools_q(pool_keys)).values_list(*HOLDING_FIELDS)
    for uid, namespace, name, request, driver, pool, device, admin, share_id, consumed in rows:
        refs[uid] = (namespace, name)
        entry: JSON = {"request": request, "driver": driver, "pool": pool, "device": device}
        if admin:
            entry["adminAccess"] = True
        if share_id:
            entry["shareID"] = share_id
        if consumed:
            entry["consumedCapacity"] = consumed
        results[f"{driver}/{pool}"][uid].append(entry)
    return {
        key: [
            {
                "metadata": {"namespace": refs[uid][0], "name": refs[uid][1], "uid": uid},
                "status": {"allocation": {"devices": {"results": entries}}},
            }
            for uid, entries in by_claim.items()
        ]
        for key, by_claim in results.items()
    }


def _rules_by_pool(ctx: Context) -> _RulesByPool:
    """Indexed once per set of rules (kept with the writer's rule cache, cleared when rules change),
    not once per chunk: an initial sync recomputes its pools in many chunks."""
    cache = ctx.rule_cache
    if cache.by_pool is None:
        cache.by_pool = _RulesByPool(ctx.rules)
    assert isinstance(cache.by_pool, _RulesByPool)
    return cache.by_pool


class _RulesByPool:
    """The DeviceTaintRules that may select a device of a pool (the allocator parses only these),
    indexed once per chunk: maintenance writes one rule per device, thousands of them."""

    def __init__(self, rules: list[JSON]) -> None:
        self.by_pool: dict[tuple[str | None, str], list[JSON]] = defaultdict(list)
        self.by_driver: dict[str | None, list[JSON]] = defaultdict(list)
        for rule in rules:
            selector = device_selector((rule.get("spec") or {}).get("deviceSelector"))
            if not selector.present:
                continue  # a missing selector selects nothing
            if selector.pool is not None:
                self.by_pool[(selector.driver, selector.pool)].append(rule)
            else:
                self.by_driver[selector.driver].append(rule)

    def of(self, driver: str, pool: str) -> list[JSON]:
        return [
            *self.by_pool.get((driver, pool), ()),
            *self.by_pool.get((None, pool), ()),
            *self.by_driver.get(driver, ()),
            *self.by_driver.get(None, ()),
        ]


def pools_selected_by(selectors: list[JSON | None]) -> set[str]:
    """Pools with a device that any of these DeviceTaintRule selectors (old or new) select."""
    found: set[str] = set()
    for q in selector_filters(selectors):
        rows = Device.objects.filter(q).order_by().values_list("driver", "pool").distinct()
        found.update(f"{d}/{p}" for d, p in rows)
    return found


def pools_reached_by(node_names: set[str], *, all_pools: bool) -> set[str]:
    """Pools whose availability depends on these nodes (created, deleted or relabelled): those bound to
    one of them by name and every pool not bound by name (node selectors, allNodes, per device).
    `all_pools`: every pool, when whether any Node object exists changed (the what-if then picks nodes
    differently)."""
    if all_pools:
        return {f"{d}/{p}" for d, p in Pool.objects.values_list("driver", "name")}
    q = Q(node_selection="node", node_name__in=sorted(node_names)) | ~Q(node_selection="node")
    return {
        f"{d}/{p}" for d, p in Device.objects.filter(q).order_by().values_list("driver", "pool").distinct()
    }
