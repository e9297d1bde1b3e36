from django.apps import AppConfig


class DradashConfig(AppConfig):
    name = "dradash"
    verbose_name = "dradash"

    def ready(self) -> None:
        from django.conf import settings
        from django.contrib.auth import get_user_model
        from django.contrib.auth.signals import user_logged_out
        from django.db.models.signals import post_delete, post_save

        from dra.allocator.cel import set_default_backend
        from dradash.sessionguard import end_session_sockets, user_changed

        # dra reads no settings: the project chooses its CEL engine once, for every room and process.
        set_default_backend(settings.DRADASH_CEL_BACKEND)
        user_logged_out.connect(end_session_sockets, dispatch_uid="dradash-end-session-sockets")
        # A deactivated, deleted or re-passworded user's open sockets check at once whether they may stay.
        user_model = get_user_model()
        post_save.connect(user_changed, sender=user_model, dispatch_uid="dradash-user-changed-saved")
        post_delete.connect(user_changed, sender=user_model, dispatch_uid="dradash-user-changed-deleted")
