from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework import serializers

from allocation.models import WhatIfRun
from allocation.services import whatif_run_input_shown
from allocation.whatif.base import kinds


class WhatIfRunCreateSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=[])
    input = serializers.JSONField()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The registered kinds, read when the serializer is made: a kind added later is served too.
        registered = kinds()
        kind_field = self.fields["kind"]
        assert isinstance(kind_field, serializers.ChoiceField)
        kind_field.choices = [(k.name, k.label) for k in registered]
        names = ", ".join(k.name for k in registered)
        kind_field.error_messages["invalid_choice"] = f"must be one of {names}, got {{input!r}}"
        self.fields["input"].help_text = " ".join(
            f"{k.name}: {k.input_help}." for k in registered if k.input_help
        )


class WhatIfRunSerializer(serializers.ModelSerializer[WhatIfRun]):
    created_by = serializers.SerializerMethodField()
    input = serializers.SerializerMethodField(help_text="the question (a pasted object redacted for others)")
    page_url = serializers.SerializerMethodField()
    ws_url = serializers.SerializerMethodField()
    finished = serializers.BooleanField(source="is_finished", read_only=True)
    kind_label = serializers.CharField(read_only=True)

    class Meta:
        model = WhatIfRun
        fields = [
            "id",
            "kind",
            "kind_label",
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
            "max_search_steps",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
            "heartbeat_at",
            "page_url",
            "ws_url",
        ]
        read_only_fields = fields

    def get_input(self, run: WhatIfRun) -> Any:
        request = self.context.get("request")
        return whatif_run_input_shown(user=request.user, run=run) if request is not None else run.input

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
