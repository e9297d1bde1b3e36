from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework import serializers

from allocation.models import RunKind, WhatIfRun


class WhatIfRunCreateSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=RunKind.choices)
    input = serializers.JSONField(
        help_text=(
            "feasibility: {source: yaml, yaml} | {source: pick, kind: ResourceClaim|ResourceClaimTemplate|Pod, "
            "namespace, name}, optional node. headroom: the same (claim or template) or {source: class, "
            "deviceClassName, count}, optional max_per_node. taint_impact: {selector: {driver, pool, device}, "
            "taint: {key, value, effect}}."
        )
    )


class WhatIfRunSerializer(serializers.ModelSerializer[WhatIfRun]):
    created_by = serializers.SerializerMethodField()
    page_url = serializers.SerializerMethodField()
    ws_url = serializers.SerializerMethodField()
    finished = serializers.BooleanField(source="is_finished", read_only=True)

    class Meta:
        model = WhatIfRun
        fields = [
            "id",
            "kind",
            "state",
            "finished",
            "phase",
            "percent",
            "input",
            "result",
            "error",
            "snapshot_versions",
            "cancel_requested",
            "time_limit_seconds",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
            "heartbeat_at",
            "page_url",
            "ws_url",
        ]
        read_only_fields = fields

    def get_created_by(self, run: WhatIfRun) -> str | None:
        return run.created_by.get_username() if run.created_by else None

    def get_page_url(self, run: WhatIfRun) -> str:
        return reverse("allocation:whatif-run", args=[run.id])

    def get_ws_url(self, run: WhatIfRun) -> str:
        return f"/ws/whatif/{run.id}/"


class WhatIfRunListSerializer(WhatIfRunSerializer):
    class Meta(WhatIfRunSerializer.Meta):
        fields = [f for f in WhatIfRunSerializer.Meta.fields if f not in ("result", "input")]
        read_only_fields = fields
