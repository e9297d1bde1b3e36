"""Read-only admin views of the mirror (the cluster is the source of truth; edits would be overwritten)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from inventory.models import Allocation, Claim, Device, KubeObject, Pool, WatchState


class ReadOnlyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(KubeObject)
class KubeObjectAdmin(ReadOnlyAdmin):
    list_display = ["kind", "namespace", "name", "resource_version", "mirrored_at"]
    list_filter = ["kind"]
    search_fields = ["name", "namespace", "uid"]


@admin.register(Device)
class DeviceAdmin(ReadOnlyAdmin):
    list_display = ["driver", "pool", "name", "node_name", "allocation_state", "max_taint_effect", "health"]
    list_filter = ["driver", "allocation_state", "max_taint_effect", "health"]
    search_fields = ["name", "pool", "node_name", "claim_name"]


@admin.register(Pool)
class PoolAdmin(ReadOnlyAdmin):
    list_display = ["driver", "name", "generation", "slice_count", "expected_slice_count", "complete"]
    list_filter = ["driver", "complete"]


@admin.register(Claim)
class ClaimAdmin(ReadOnlyAdmin):
    list_display = ["namespace", "name", "state", "device_count", "extended_resource"]
    list_filter = ["state", "extended_resource"]
    search_fields = ["name", "namespace"]


@admin.register(Allocation)
class AllocationAdmin(ReadOnlyAdmin):
    list_display = ["claim_namespace", "claim_name", "request", "driver", "pool", "device"]


@admin.register(WatchState)
class WatchStateAdmin(ReadOnlyAdmin):
    list_display = [
        "kind",
        "state",
        "resource_version",
        "object_count",
        "last_event_at",
        "lag_seconds",
        "error",
    ]
