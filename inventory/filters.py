"""FilterSets shared by the pages and the REST API (same query parameters in both)."""

from __future__ import annotations

from typing import Any

import django_filters
from django import forms
from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef, Q, QuerySet

from dra.availability import BLOCK_REASONS
from dra.pods import POD_PHASES
from inventory.kube import MIRRORED_KINDS
from inventory.models import (
    ALLOCATION_STATES,
    CLAIM_STATES,
    FREE,
    HEALTH_STATES,
    Claim,
    Device,
    DeviceAttribute,
    DeviceCount,
    KubeObject,
    Pod,
    Pool,
)
from inventory.selectors.common import device_text_contains

TAINT_CHOICES = [
    ("any", "any taint"),
    ("none", "untainted"),
    ("None", "None"),
    ("NoSchedule", "NoSchedule"),
    ("NoExecute", "NoExecute"),
]
#: the Health filter: a state of models.HEALTH_STATES, none reported as the value "unreported"
HEALTH_CHOICES = [(value or "unreported", label) for value, label in HEALTH_STATES]

# Device.allocation_state, as the pages name it: the value stays "free" (API, exports), the label says
# "unallocated", because on the pages "free" means allocatable now (Overview, Classes, headroom).
STATE_CHOICES = [(v, "unallocated" if v == FREE else label) for v, label in ALLOCATION_STATES]

# Whether a one-device claim of the device's class could be given it now (Device.blocked), and why not.
ALLOCATABLE_CHOICES = [("yes", "allocatable now"), ("no", "not allocatable"), *BLOCK_REASONS.items()]


#: The label of each filter on its page's form (the pages render these): an error about a filter names it by
#: what the user sees, then by its parameter (dradash.fieldnames). New maintenance uses the Devices labels.
DEVICE_FILTER_LABELS = {
    "q": "Search",
    "driver": "Driver",
    "pool": "Pool",
    "node": "Node",
    "device_class": "Class",
    "attribute": "Attribute",
    "taint": "Taint",
    "state": "Allocation",
    "allocatable": "Allocatable",
    "health": "Health",
    "claim": "Claim",
}
CLAIM_FILTER_LABELS = {
    "q": "Search",
    "namespace": "Namespace",
    "state": "State",
    "device_class": "Class",
    "extended_resource": "Extended resource",
}
POD_FILTER_LABELS = {
    "q": "Search",
    "namespace": "Namespace",
    "node": "Node",
    "phase": "Phase",
    "uses_claims": "Uses DRA claims",
    "waiting": "Waiting",
}
#: the Nodes page's one filter: part of a node's name
NODE_FILTER_LABELS = {"q": "Node"}


#: what a yes/no filter takes, in any case (the pages send true/false); anything else is refused, not read as
#: "any" (django-filter's NullBooleanField would ignore `?complete=maybe` and answer every row)
BOOLEAN_SPELLINGS = {"true": True, "false": False, "1": True, "0": False}


class StrictBooleanField(forms.Field):
    """true/false (or 1/0); empty is no filter; any other value is an error naming the accepted ones."""

    def to_python(self, value: Any) -> bool | None:
        if value in (None, ""):
            return None
        if isinstance(value, bool):
            return value
        found = BOOLEAN_SPELLINGS.get(str(value).lower())
        if found is None:
            raise ValidationError(
                "must be true or false (or 1 or 0), got %(value)s",
                code="invalid_choice",
                params={"value": repr(str(value)[:40])},
            )
        return found


class StrictBooleanFilter(django_filters.BooleanFilter):
    field_class = StrictBooleanField


class AttributeFilterError(ValueError):
    pass


def parse_attribute_filter(raw: str) -> tuple[str, str]:
    """`key=value` → (key, value); the key may be short (driver's domain) or fully qualified."""
    key, sep, value = raw.partition("=")
    key = key.strip()
    if not sep or not key:
        raise AttributeFilterError(f"attribute filter {raw!r} must look like key=value")
    return key, value.strip()


def attribute_lines(key: str, value: str) -> QuerySet[DeviceAttribute]:
    """The indexed lines (DeviceAttribute) of the devices whose attribute `key` has the text `value`
    (exact and case-sensitive, as in `attribute_index`). A qualified key (`domain/name`) is its own line,
    whoever's device holds it; a short key means the device driver's own domain: the qualified line of
    each driver present, marked `own` (a device of another driver with that domain's attribute does not
    count, as `flat_attributes` gives it no short name)."""
    if "/" in key:
        return DeviceAttribute.objects.filter(line=f"{key}={value}")
    drivers = DeviceCount.objects.order_by().values_list("driver", flat=True).distinct()
    return DeviceAttribute.objects.filter(own=True, line__in=[f"{d}/{key}={value}" for d in drivers])


def validate_attribute_filter(value: str) -> None:
    try:
        parse_attribute_filter(value)
    except AttributeFilterError as exc:
        # The message is a format string to Django (and django-filter formats it): the user's text goes
        # in as a parameter, so a "%" in it is text, not a directive.
        raise ValidationError("%(problem)s", params={"problem": str(exc)}) from None


class DeviceFilterSet(django_filters.FilterSet):
    driver = django_filters.CharFilter(field_name="driver")
    pool = django_filters.CharFilter(field_name="pool")
    node = django_filters.CharFilter(field_name="node_name")
    device_class = django_filters.CharFilter(method="filter_class", label="DeviceClass")
    attribute = django_filters.CharFilter(
        method="filter_attribute", label="Attribute key=value", validators=[validate_attribute_filter]
    )
    taint = django_filters.ChoiceFilter(choices=TAINT_CHOICES, method="filter_taint", label="Taint effect")
    state = django_filters.ChoiceFilter(
        choices=STATE_CHOICES, field_name="allocation_state", label="Allocation"
    )
    health = django_filters.ChoiceFilter(choices=HEALTH_CHOICES, method="filter_health")
    allocatable = django_filters.ChoiceFilter(
        choices=ALLOCATABLE_CHOICES, method="filter_allocatable", label="Allocatable"
    )
    claim = django_filters.CharFilter(method="filter_claim", label="Claim namespace/name")
    q = django_filters.CharFilter(method="filter_search", label="Search")

    class Meta:
        model = Device
        fields: list[str] = []

    def filter_class(self, queryset: QuerySet[Device], name: str, value: str) -> QuerySet[Device]:
        return queryset.filter(class_index__contains=f" {value.strip()} ")

    def filter_attribute(self, queryset: QuerySet[Device], name: str, value: str) -> QuerySet[Device]:
        try:
            key, wanted = parse_attribute_filter(value)
        except AttributeFilterError:
            return queryset.none()
        # One indexed line per qualified attribute (DeviceAttribute, kept by the mirror). EXISTS, not IN:
        # a page walks the devices in their order and probes the (line, own, device) index, stopping
        # after its rows, instead of fetching and sorting every matching device.
        return queryset.filter(Exists(attribute_lines(key, wanted).filter(device=OuterRef("pk"))))

    @property
    def qs(self) -> QuerySet[Device]:
        """The filtered devices; with the attribute filter alone, `count_hint` counts its index entries
        (each device has a line once, and loses its lines with its row) instead of joining the devices."""
        qs = super().qs
        if self.is_bound and self.is_valid():
            active = {name for name, value in self.form.cleaned_data.items() if value not in (None, "")}
            if active == {"attribute"}:
                key, wanted = parse_attribute_filter(self.form.cleaned_data["attribute"])
                qs.count_hint = attribute_lines(key, wanted).count  # type: ignore[attr-defined]
        return qs

    def filter_taint(self, queryset: QuerySet[Device], name: str, value: str) -> QuerySet[Device]:
        if value == "any":
            return queryset.filter(tainted=True)
        if value == "none":
            return queryset.filter(tainted=False)
        field = {"None": "taint_none", "NoSchedule": "taint_no_schedule", "NoExecute": "taint_no_execute"}[
            value
        ]
        return queryset.filter(**{field: True})

    def filter_health(self, queryset: QuerySet[Device], name: str, value: str) -> QuerySet[Device]:
        return queryset.filter(health="" if value == "unreported" else value)

    def filter_allocatable(self, queryset: QuerySet[Device], name: str, value: str) -> QuerySet[Device]:
        if value == "yes":
            return queryset.filter(blocked="")
        if value == "no":
            return queryset.exclude(blocked="")
        return queryset.filter(blocked=value)

    def filter_claim(self, queryset: QuerySet[Device], name: str, value: str) -> QuerySet[Device]:
        namespace, _, claim = value.strip().rpartition("/")
        if namespace:
            return queryset.filter(claim_namespace=namespace, claim_name=claim)
        return queryset.filter(claim_name=claim)

    def filter_search(self, queryset: QuerySet[Device], name: str, value: str) -> QuerySet[Device]:
        return queryset.filter(device_text_contains(value.strip().lower()))


class ClaimFilterSet(django_filters.FilterSet):
    namespace = django_filters.CharFilter(field_name="namespace")
    state = django_filters.ChoiceFilter(choices=CLAIM_STATES, field_name="state")
    extended_resource = StrictBooleanFilter(field_name="extended_resource")
    device_class = django_filters.CharFilter(method="filter_class", label="DeviceClass")
    q = django_filters.CharFilter(method="filter_search", label="Search")

    class Meta:
        model = Claim
        fields: list[str] = []

    def filter_class(self, queryset: QuerySet[Claim], name: str, value: str) -> QuerySet[Claim]:
        # device_classes is a short list; match through the rendered JSON text (portable across backends).
        return queryset.filter(device_classes__icontains=f'"{value.strip()}"')

    def filter_search(self, queryset: QuerySet[Claim], name: str, value: str) -> QuerySet[Claim]:
        value = value.strip()
        return queryset.filter(Q(name__icontains=value) | Q(owner_pod__icontains=value))


class PodFilterSet(django_filters.FilterSet):
    namespace = django_filters.CharFilter(field_name="namespace")
    node = django_filters.CharFilter(field_name="node_name", label="Node")
    phase = django_filters.ChoiceFilter(choices=[(p, p) for p in POD_PHASES], field_name="phase")
    uses_claims = StrictBooleanFilter(method="filter_uses_claims", label="Uses DRA claims")
    waiting = StrictBooleanFilter(method="filter_waiting", label="Waiting")
    q = django_filters.CharFilter(method="filter_search", label="Search")

    class Meta:
        model = Pod
        fields: list[str] = []

    def filter_waiting(self, queryset: QuerySet[Pod], name: str, value: bool | None) -> QuerySet[Pod]:
        """Pods that say why they wait (unschedulable, gated, a claim not created, a container's message),
        or, with false, those that do not."""
        if value is None:
            return queryset
        return queryset.exclude(waiting_reason="") if value else queryset.filter(waiting_reason="")

    def filter_uses_claims(self, queryset: QuerySet[Pod], name: str, value: bool | None) -> QuerySet[Pod]:
        """Pods that use a ResourceClaim (their own, from a template, or the scheduler's extended-resource
        claim), or, with false, those that use none."""
        if value is None:
            return queryset
        return queryset.filter(claim_count__gt=0) if value else queryset.filter(claim_count=0)

    def filter_search(self, queryset: QuerySet[Pod], name: str, value: str) -> QuerySet[Pod]:
        """Part of a pod's name, or namespace/part of the name."""
        value = value.strip()
        namespace, slash, rest = value.partition("/")
        if slash:
            return queryset.filter(namespace=namespace, name__icontains=rest)
        return queryset.filter(name__icontains=value)


class PoolFilterSet(django_filters.FilterSet):
    driver = django_filters.CharFilter(field_name="driver")
    node = django_filters.CharFilter(field_name="node_name")
    complete = StrictBooleanFilter(field_name="complete")

    class Meta:
        model = Pool
        fields: list[str] = []


class KubeObjectFilterSet(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(field_name="kind", choices=[(k, k) for k in MIRRORED_KINDS])
    namespace = django_filters.CharFilter(field_name="namespace")
    name = django_filters.CharFilter(field_name="name")

    class Meta:
        model = KubeObject
        fields: list[str] = []
