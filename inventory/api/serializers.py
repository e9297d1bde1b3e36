"""Serializers of the read API: the mirror's rows as JSON (camelCase payloads from the cluster kept as-is)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from inventory import tables
from inventory.models import Claim, Device, KubeObject, Pod, Pool, WatchState
from inventory.redaction import redact_device_status, reveal_or_redact


class DeviceSerializer(serializers.ModelSerializer[Device]):
    """A device's fields: the Devices table's (`inventory.tables`, declared once) and its detail fields."""

    device_id = serializers.CharField(read_only=True)

    def get_field_names(self, declared_fields: Any, info: Any) -> list[str]:
        return tables.api_fields()

    def to_representation(self, instance: Device) -> dict[str, Any]:
        # Every field is a plain column (JSON columns are already Python values): skip DRF's per-field
        # machinery, which costs about as much as the query for a page of 100 devices.
        data = {name: getattr(instance, name) for name in tables.api_fields()}
        if "statuses" in data and not self.context.get("reveal", False):
            data["statuses"] = [redact_device_status(entry) for entry in data["statuses"] or []]
        return data

    class Meta:
        model = Device
        fields = tables.api_fields()


class PoolSerializer(serializers.ModelSerializer[Pool]):
    class Meta:
        model = Pool
        fields = [
            "id",
            "driver",
            "name",
            "generation",
            "slice_count",
            "expected_slice_count",
            "complete",
            "node_name",
            "device_count",
            "shared_counters",
            "problems",
        ]


class ClaimSerializer(serializers.ModelSerializer[Claim]):
    class Meta:
        model = Claim
        fields = [
            "id",
            "uid",
            "namespace",
            "name",
            "state",
            "request_count",
            "device_count",
            "reserved_for",
            "extended_resource",
            "owner_pod",
            "device_classes",
            "created",
        ]


class ClaimDetailSerializer(ClaimSerializer):
    results = serializers.SerializerMethodField()
    requests = serializers.SerializerMethodField()
    object = serializers.SerializerMethodField()

    class Meta(ClaimSerializer.Meta):
        fields = [*ClaimSerializer.Meta.fields, "results", "requests", "object"]

    def get_results(self, claim: Claim) -> list[dict[str, Any]]:
        return list(self.context["detail"].results)

    def get_requests(self, claim: Claim) -> list[dict[str, Any]]:
        return list(self.context["detail"].requests)

    def get_object(self, claim: Claim) -> dict[str, Any]:
        return reveal_or_redact(self.context["detail"].obj.raw, reveal=self.context.get("reveal", False))


class PodClaimSerializer(serializers.Serializer[Any]):
    podClaim = serializers.CharField(
        help_text='the pod\'s name for it (spec.resourceClaims[].name); "" for the extended-resource claim'
    )
    name = serializers.CharField(
        help_text="the ResourceClaim in the pod's namespace; \"\" while a template's claim is not made yet"
    )
    source = serializers.ChoiceField(choices=["claim", "template", "extended"])
    template = serializers.CharField(help_text="the ResourceClaimTemplate it is made from, if any")


class PodExtendedResourceSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(help_text="the extended resource name, e.g. example.com/gpu")
    count = serializers.IntegerField(help_text="how many the pod asks for")


class PodSerializer(serializers.ModelSerializer[Pod]):
    """A pod as the Pods list shows it: kubectl's READY, STATUS and RESTARTS, why it waits, its node, the
    ResourceClaims it uses and the extended resources DRA serves it. The whole object:
    /api/objects/?kind=pods&name=…"""

    status = serializers.CharField(
        help_text="kubectl get pods' STATUS (CrashLoopBackOff, Init:0/1, Terminating, …)"
    )
    ready = serializers.CharField(help_text='kubectl get pods\' READY: "ready/total" containers')
    claims = PodClaimSerializer(many=True, help_text="the ResourceClaims the pod uses")
    extended_resources = PodExtendedResourceSerializer(
        many=True, help_text="extended resources DRA serves the pod (the scheduler's extended-resource claim)"
    )
    waiting_reason = serializers.CharField(
        help_text="why the pod waits, as kubectl describe pod shows it: the scheduler's PodScheduled=False "
        "reason (Unschedulable, SchedulingGated), WaitingForResourceClaim (a template's claim is not created "
        'yet), or a waiting container\'s reason when it has a message; "" when nothing holds it'
    )
    waiting_message = serializers.CharField(
        help_text='what the cluster says about it (at most 1,000 characters): "0/3 nodes are available: 3 '
        'cannot allocate all claims. …", the scheduling gates, the claims not created yet; "" for none'
    )

    class Meta:
        model = Pod
        fields = [
            "id",
            "uid",
            "namespace",
            "name",
            "node_name",
            "phase",
            "status",
            "ready",
            "restarts",
            "claims",
            "claim_count",
            "extended_resources",
            "created",
            "waiting_reason",
            "waiting_message",
        ]


class WatchStateSerializer(serializers.ModelSerializer[WatchState]):
    class Meta:
        model = WatchState
        fields = [
            "kind",
            "state",
            "resource_version",
            "object_count",
            "last_event_at",
            "last_sync_at",
            "lag_seconds",
            "relist_count",
            "error",
            "since",
            "confirmed_at",
            "events_applied",
            "last_relist_reason",
            "divergences",
            "last_divergence",
        ]


class KubeObjectSerializer(serializers.ModelSerializer[KubeObject]):
    """`raw` is the object as the cluster has it, with credential-bearing values redacted for users who are
    not admins (`inventory.redaction`; the view sets `reveal` in the context)."""

    def to_representation(self, instance: KubeObject) -> dict[str, Any]:
        data = dict(super().to_representation(instance))
        data["raw"] = reveal_or_redact(instance.raw, reveal=self.context.get("reveal", False))
        return data

    class Meta:
        model = KubeObject
        fields = [
            "kind",
            "uid",
            "name",
            "namespace",
            "resource_version",
            "generation",
            "creation_timestamp",
            "raw",
        ]


class DeviceClassSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    extended_resource_names = serializers.ListField(child=serializers.CharField())
    total = serializers.IntegerField()
    allocated = serializers.IntegerField()
    shared = serializers.IntegerField()
    free = serializers.IntegerField(
        help_text="devices a claim for one device of this class (no tolerations) could be given now, each on its own"
    )
    headroom = serializers.IntegerField(
        help_text="how many such one-device claims fit together: the headroom what-if's total for the class"
    )
    tainted_none = serializers.IntegerField()
    tainted_no_schedule = serializers.IntegerField()
    tainted_no_execute = serializers.IntegerField()
    blocked_by_counters = serializers.IntegerField(
        help_text="unallocated devices whose shared counters partitions have used up"
    )
    blocked = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="unallocated devices that cannot be given now, per reason (counters, taint, pool-incomplete, …)",
    )
    headroom_capped = serializers.BooleanField(
        source="capped", help_text="some pool stopped at the per-node cap of copies (shareable devices)"
    )
    errors = serializers.ListField(child=serializers.CharField(), help_text="what the allocator refused")
    selectors = serializers.SerializerMethodField()

    def get_selectors(self, summary: Any) -> list[Any]:
        return list((summary.obj.raw.get("spec") or {}).get("selectors") or [])


class TaintRuleSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    selector = serializers.JSONField(allow_null=True)
    taint = serializers.JSONField()
    matched_devices = serializers.IntegerField()
    eviction_condition = serializers.JSONField(allow_null=True)
    resource_version = serializers.CharField(source="obj.resource_version")


class NodeSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    device_count = serializers.IntegerField()
    allocated = serializers.IntegerField()
    tainted = serializers.IntegerField()
    labels = serializers.SerializerMethodField()

    def get_labels(self, node: Any) -> dict[str, str]:
        return dict(((node.obj.raw if node.obj else {}).get("metadata") or {}).get("labels") or {})


class SearchHitSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField(help_text="devices, pods, claims, nodes, taint-rules, maintenances")
    name = serializers.CharField()
    namespace = serializers.CharField(help_text='"" for cluster-scoped objects')
    url = serializers.CharField(help_text="the object's page")
    detail = serializers.CharField(help_text="a short line about it (node, state, …)")
    exact = serializers.BooleanField(help_text="the name (or namespace/name) is the query itself")
