from django.apps import AppConfig


class AllocationConfig(AppConfig):
    name = "allocation"
    default_auto_field = "django.db.models.BigAutoField"
