from django.apps import AppConfig
from django.db.models.signals import post_migrate


class InventoryConfig(AppConfig):
    name = "inventory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from inventory.signals import create_roles_after_migrate

        post_migrate.connect(create_roles_after_migrate, sender=self, dispatch_uid="inventory.create_roles")

        from django.conf import settings

        from dradash.health import register_check
        from dradash.metrics import register_collector
        from inventory.metrics import DeviceCollector, MirrorCollector, mirror_check

        # A web replica stays ready while the mirror is down by default: it serves the pages that say so
        # (the banner), which operators need exactly then. DRADASH_READY_REQUIRES_MIRROR makes it count.
        register_check("mirror", mirror_check, required=settings.DRADASH_READY_REQUIRES_MIRROR)
        register_collector(MirrorCollector())
        register_collector(DeviceCollector())

        from inventory.selectors.search import register_search_providers

        register_search_providers()
