from django.apps import AppConfig


class MigrationConfig(AppConfig):
    """Moving to v1.37 DRA: upgrading old manifests (and, later, from device plugins to DRA)."""

    name = "migration"
    default_auto_field = "django.db.models.BigAutoField"
