"""Per DeviceClass: devices, allocated, tainted by effect, free and headroom; the extended resources it serves.

`free` and `headroom` are the allocator's (`dra.availability`, kept per pool in `ClassAvailability` by
the mirror): devices a one-device claim of the class could be given now, each on its own, and how many
such claims fit together — the headroom what-if's answer for the class. The rest is counted from the
device counters the database keeps (`DeviceCount`): two GROUP BY queries over a few dozen rows whatever
the number of devices, as the Overview re-renders on every live change.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Count, Q, Sum

from dra.availability import COUNTERS
from dra.extended import extended_resources
from inventory.models import ALLOCATED, FREE, SHARED, ClassAvailability, DeviceCount, KubeObject
from inventory.selectors.common import CLASSES


@dataclass
class ClassSummary:
    name: str
    obj: KubeObject
    extended_resource_names: list[str]
    total: int = 0
    allocated: int = 0
    shared: int = 0
    #: devices a one-device claim of the class (no tolerations) could be given now, each on its own
    free: int = 0
    #: how many such claims fit together (equals `free` for whole devices; less for partitions)
    headroom: int = 0
    tainted_none: int = 0
    tainted_no_schedule: int = 0
    tainted_no_execute: int = 0
    #: unallocated devices that still cannot be given, per reason (dra.availability.BLOCK_REASONS)
    blocked: dict[str, int] = field(default_factory=dict)
    #: some pool's headroom stopped at the per-node cap (devices that can be shared)
    capped: bool = False
    #: what the allocator refused for this class, per pool
    errors: list[str] = field(default_factory=list)

    @property
    def blocked_by_counters(self) -> int:
        """Unallocated devices whose shared counters partitions have used up."""
        return self.blocked.get(COUNTERS, 0)

    @property
    def unavailable(self) -> int:
        """Devices neither allocated nor free: tainted, counters used, pool incomplete …"""
        return max(0, self.total - self.allocated - self.shared - self.free)


@dataclass
class ClassOverview:
    classes: list[ClassSummary]
    warnings: list[str]


def class_overview() -> ClassOverview:
    objs = list(KubeObject.objects.filter(kind=CLASSES).order_by("name"))
    mapping = extended_resources(o.raw for o in objs)
    served, warnings = mapping.served, mapping.conflicts
    if not objs:
        return ClassOverview(classes=[], warnings=warnings)
    summaries = {
        o.name: ClassSummary(name=o.name, obj=o, extended_resource_names=served.get(o.name, [])) for o in objs
    }
    # Devices with the same classes, state, taint flags and block are counted together: a few dozen groups.
    groups = (
        DeviceCount.objects.values_list(
            "class_index",
            "allocation_state",
            "taint_none",
            "taint_no_schedule",
            "taint_no_execute",
            "blocked",
        )
        .annotate(total=Sum("n"))
        .order_by()
    )
    for class_index, state, t_none, t_ns, t_ne, blocked, n in groups:
        for name in class_index.split():
            summary = summaries.get(name)
            if summary is None:
                continue
            summary.total += n
            summary.allocated += n if state == ALLOCATED else 0
            summary.shared += n if state == SHARED else 0
            summary.tainted_none += n if t_none else 0
            summary.tainted_no_schedule += n if t_ns else 0
            summary.tainted_no_execute += n if t_ne else 0
            if state == FREE and blocked:
                summary.blocked[blocked] = summary.blocked.get(blocked, 0) + n
    with_errors = []
    for name, numbers in class_availability().items():
        summary = summaries.get(name)
        if summary is None:
            continue
        summary.free, summary.headroom, summary.capped = numbers.free, numbers.headroom, numbers.capped
        if numbers.errors:
            with_errors.append(summary.name)
    if with_errors:
        errors: dict[str, list[str]] = defaultdict(list)
        for name, driver, pool, error in (
            ClassAvailability.objects.filter(device_class__in=with_errors)
            .exclude(error="")
            .values_list("device_class", "driver", "pool", "error")[:100]
        ):
            errors[name].append(f"{driver}/{pool}: {error}")
        for name, messages in errors.items():
            summaries[name].errors = messages
    return ClassOverview(classes=list(summaries.values()), warnings=warnings)


@dataclass(frozen=True)
class ClassNumbers:
    free: int
    headroom: int
    capped: bool
    errors: int  # pools where the allocator refused something


def class_availability(*, names: list[str] | None = None) -> dict[str, ClassNumbers]:
    """Free and headroom per class (of `names`, default all): one aggregate over the per-pool rows."""
    rows = ClassAvailability.objects.all()
    if names is not None:
        rows = rows.filter(device_class__in=names)
    numbers = rows.values("device_class").annotate(
        free=Sum("free"),
        headroom=Sum("headroom"),
        capped=Count("id", filter=Q(capped=True)),
        errors=Count("id", filter=~Q(error="")),
    )
    return {
        r["device_class"]: ClassNumbers(r["free"], r["headroom"], bool(r["capped"]), r["errors"])
        for r in numbers
    }


def class_detail(*, name: str) -> tuple[KubeObject, ClassSummary | None]:
    obj = KubeObject.objects.get(kind=CLASSES, name=name)
    return obj, next((s for s in class_overview().classes if s.name == name), None)
