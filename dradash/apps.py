from django.apps import AppConfig


class DradashConfig(AppConfig):
    name = "dradash"
    verbose_name = "dradash"

    def ready(self) -> None:
        from django.conf import settings
        from django.contrib.auth.signals import user_logged_out

        from dra.allocator.cel import set_default_backend
        from dradash.sessionguard import end_session_sockets

        # dra reads no settings: the project chooses its CEL engine once, for every room and process.
        set_default_backend(settings.DRADASH_CEL_BACKEND)
        user_logged_out.connect(end_session_sockets, dispatch_uid="dradash-end-session-sockets")
