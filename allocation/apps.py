import importlib
import pkgutil

from django.apps import AppConfig

from allocation.whatif import kinds


class AllocationConfig(AppConfig):
    name = "allocation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # A what-if kind is a module of allocation.whatif.kinds that registers itself: import them all,
        # so adding a kind needs no list to update anywhere.
        for module in pkgutil.iter_modules(kinds.__path__):
            importlib.import_module(f"{kinds.__name__}.{module.name}")

        from allocation.metrics import WhatIfCollector
        from dradash.metrics import register_collector

        register_collector(WhatIfCollector())
