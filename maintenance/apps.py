from typing import Any

from django.apps import AppConfig


def record_what_the_mirror_saw(sender: Any, changes: list[dict[str, Any]], **kwargs: Any) -> None:
    """Rule changes made outside dradash, evictions, broken budgets, replacements and driver taints
    enter the audit log as the mirror sees them (after its batch committed)."""
    from maintenance.audit import observe_batch

    observe_batch(changes, baseline=bool(kwargs.get("baseline")))


class MaintenanceConfig(AppConfig):
    name = "maintenance"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from inventory.signals import mirror_batch_committed

        mirror_batch_committed.connect(record_what_the_mirror_saw, dispatch_uid="maintenance-audit")

        from dradash.metrics import register_collector
        from maintenance.metrics import EvictionCollector

        register_collector(EvictionCollector())

        from maintenance.search import register_search_provider

        register_search_provider()
