from typing import Any

from django.apps import AppConfig


def record_rules_seen_by_the_mirror(sender: Any, changes: list[dict[str, Any]], **kwargs: Any) -> None:
    """Rules created, changed or deleted outside dradash enter the audit log as the mirror sees them."""
    if any(change.get("kind") == "devicetaintrules" for change in changes):
        from maintenance.selectors import audit_observe_cluster

        audit_observe_cluster()


class MaintenanceConfig(AppConfig):
    name = "maintenance"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from inventory.signals import mirror_batch_committed

        mirror_batch_committed.connect(record_rules_seen_by_the_mirror, dispatch_uid="maintenance-audit")
