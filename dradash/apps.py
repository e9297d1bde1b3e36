from django.apps import AppConfig


class DradashConfig(AppConfig):
    name = "dradash"

    def ready(self) -> None:
        from django.conf import settings

        from dra.allocator.cel import set_default_backend

        # dra reads no settings: the project chooses its CEL engine once, for every room and process.
        set_default_backend(settings.DRADASH_CEL_BACKEND)
