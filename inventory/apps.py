from django.apps import AppConfig
from django.db.models.signals import post_migrate


class InventoryConfig(AppConfig):
    name = "inventory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from inventory.signals import create_roles_after_migrate

        post_migrate.connect(create_roles_after_migrate, sender=self, dispatch_uid="inventory.create_roles")
