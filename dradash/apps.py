from django.apps import AppConfig


class DradashConfig(AppConfig):
    name = "dradash"
    verbose_name = "dradash"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_out

        from dradash.sessionguard import end_session_sockets

        user_logged_out.connect(end_session_sockets, dispatch_uid="dradash-end-session-sockets")
