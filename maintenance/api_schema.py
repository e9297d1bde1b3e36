"""What the maintenance API's bodies look like, for the OpenAPI schema only.

The views read bodies with maintenance.validation (strict: unknown fields and wrong types refused, each
named); these serializers describe the same fields to clients and never parse anything.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from maintenance.models import AuditEntry
from maintenance.taints import EFFECTS
from maintenance.validation import DEVICE_FILTERS, EVERY_DEVICE_PHRASE


class DeviceRef(serializers.Serializer[Any]):
    driver = serializers.CharField()
    pool = serializers.CharField()
    device = serializers.CharField()


class CreateRequest(serializers.Serializer[Any]):
    title = serializers.CharField(max_length=200)
    reason = serializers.CharField(max_length=500)
    ticket = serializers.CharField(required=False, max_length=100)
    key = serializers.CharField(help_text="the taint key, e.g. example.com/maintenance")
    value = serializers.CharField(required=False)
    effect = serializers.ChoiceField(choices=EFFECTS)
    devices = DeviceRef(many=True, required=False, help_text="the devices (one way of selecting)")
    filters = serializers.DictField(
        child=serializers.CharField(),
        required=False,
        help_text="every device matching these Devices filters: " + ", ".join(DEVICE_FILTERS),
    )
    every_device = serializers.ChoiceField(
        choices=[EVERY_DEVICE_PHRASE], required=False, help_text="select every device of the cluster"
    )
    expected_count = serializers.IntegerField(
        min_value=0, required=False, help_text="the number of devices reviewed; refused if it differs"
    )


class PreviewRequest(serializers.Serializer[Any]):
    version = serializers.IntegerField(min_value=0, required=False)


class PreviewStarted(serializers.Serializer[Any]):
    run = serializers.CharField(help_text="the taint-impact what-if run")
    url = serializers.CharField(help_text="where to follow it")
    version = serializers.IntegerField()


class ApplyRequest(serializers.Serializer[Any]):
    effect = serializers.ChoiceField(
        choices=EFFECTS, required=False, help_text="required unless mode is drain"
    )
    mode = serializers.ChoiceField(
        choices=["taint", "drain"],
        required=False,
        help_text='"drain": apply NoSchedule, then evict the affected pods through the Eviction API, respecting '
        "their PodDisruptionBudgets (default: taint, the effect as given)",
    )
    concurrency = serializers.IntegerField(
        min_value=1, max_value=50, required=False, help_text="drain: pods evicted at once (default 1)"
    )
    replacement_timeout = serializers.IntegerField(
        min_value=1,
        max_value=3600,
        required=False,
        help_text="drain: seconds to wait for an evicted pod's replacement to run before the next (default 300)",
    )
    confirm = serializers.BooleanField(required=False, help_text="must be true for an evicting effect")
    typed = serializers.CharField(required=False, help_text="the phrase the blast radius asks for")
    preview = serializers.CharField(required=False, help_text="the succeeded preview's run id")
    version = serializers.IntegerField(min_value=0, required=False)


class DrainActionRequest(serializers.Serializer[Any]):
    version = serializers.IntegerField(min_value=0, required=False, help_text="the version the caller saw")


class RemoveLeftoversRequest(serializers.Serializer[Any]):
    confirm = serializers.BooleanField(help_text="must be true: the removal changes the cluster")
    version = serializers.IntegerField(min_value=0, required=False, help_text="the version the caller saw")


class UndoRequest(serializers.Serializer[Any]):
    mode = serializers.ChoiceField(choices=["delete", "none"], required=False)
    version = serializers.IntegerField(min_value=0, required=False)


AUDIT_PARAMETERS = [
    OpenApiParameter("maintenance", OpenApiTypes.STR),
    OpenApiParameter("actor", OpenApiTypes.STR),
    OpenApiParameter("action", OpenApiTypes.STR, enum=AuditEntry.ACTION_NAMES),
    OpenApiParameter("rule", OpenApiTypes.STR, description="part of a rule name"),
    OpenApiParameter("subject", OpenApiTypes.STR, description="part of a pod, budget or device name"),
    OpenApiParameter("source", OpenApiTypes.STR, enum=["dradash", "cluster"]),
    OpenApiParameter("since", OpenApiTypes.STR, description="a date (2026-11-29) or a date-time"),
    OpenApiParameter("until", OpenApiTypes.STR, description="a date (2026-11-29) or a date-time"),
]


class RuleDrift(serializers.Serializer[Any]):
    rule = serializers.CharField()
    expected_effect = serializers.CharField(help_text="the effect dradash applied")
    cluster_effect = serializers.CharField(
        allow_null=True, help_text="the effect in the cluster; null: deleted"
    )
    what = serializers.CharField(help_text='"effect changed outside dradash to None, not NoSchedule (…)"')


class DrainForecastEntry(serializers.Serializer[Any]):
    namespace = serializers.CharField()
    name = serializers.CharField()
    node = serializers.CharField()
    created = serializers.CharField(help_text="the pod's creationTimestamp (the order is oldest first)")
    owner = serializers.CharField(help_text='its controller, "ReplicaSet/trainer"; "" without one')
    budget = serializers.CharField(help_text='the PDB that covers it, "ml/trainer"; "" without one')
    seconds = serializers.IntegerField(help_text="terminationGracePeriodSeconds + 10 s")
    movable = serializers.BooleanField(
        required=False,
        help_text="false: no room elsewhere per the allocator (its replacement would stay pending)",
    )
    wave = serializers.IntegerField(required=False, help_text="the wave it is evicted in (1 first)")
    why = serializers.CharField(required=False, help_text="unmovable and blocked: why")


class DrainForecastBudget(serializers.Serializer[Any]):
    namespace = serializers.CharField()
    name = serializers.CharField()
    rule = serializers.CharField(help_text='"minAvailable 10"')
    disruptions_allowed = serializers.IntegerField(allow_null=True, help_text="the mirrored PDB status")
    current_healthy = serializers.IntegerField(allow_null=True)
    desired_healthy = serializers.IntegerField(allow_null=True)
    expected_pods = serializers.IntegerField(allow_null=True)
    pods = serializers.IntegerField(help_text="of its pods, how many the drain moves")


class DrainForecastBody(serializers.Serializer[Any]):
    concurrency = serializers.IntegerField()
    pods = serializers.IntegerField(help_text="pods the drain evicts (not those without an owner)")
    order = DrainForecastEntry(many=True, help_text="the first 200, oldest first")
    waves = serializers.IntegerField()
    budget_waves = serializers.BooleanField(
        help_text="the budgets force more waves than the concurrency would"
    )
    blocked = DrainForecastEntry(many=True, help_text="pods under a budget that allows no disruption now")
    unmovable = DrainForecastEntry(
        many=True,
        help_text="pods that cannot move: no owner (left in place), or no room elsewhere per the allocator",
    )
    budgets = DrainForecastBudget(many=True)
    seconds = serializers.IntegerField()
    duration = serializers.CharField(help_text='"about 2 min 00 s"')
    assumes = serializers.CharField(help_text="what the estimate assumes (grace period, replacement start)")
    tolerating = serializers.IntegerField(help_text="pods that tolerate the taint: left alone")


class DrainConfirmation(serializers.Serializer[Any]):
    pods = serializers.IntegerField()
    devices = serializers.IntegerField()
    phrase = serializers.CharField(help_text='what `typed` must say to start the drain ("" = no typing)')
    why = serializers.CharField()


class PreviewState(serializers.Serializer[Any]):
    run = serializers.CharField()
    state = serializers.CharField()
    stale = serializers.BooleanField(
        help_text="true: the drain would be refused until the preview is run again"
    )
    ready = serializers.BooleanField()
    changes = serializers.ListField(child=serializers.CharField())


class DrainForecast(serializers.Serializer[Any]):
    preview = PreviewState()
    confirmation = DrainConfirmation()
    forecast = DrainForecastBody()
