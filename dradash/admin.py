from django.contrib import admin

from dradash.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Admins see and revoke anyone's tokens; keys cannot be read back (only digests are stored)."""

    list_display = ("name", "user", "prefix", "created_at", "last_used_at")
    list_filter = ("user",)
    readonly_fields = ("user", "name", "prefix", "digest", "created_at", "last_used_at")

    def has_add_permission(self, request: object) -> bool:
        return False  # keys are made by their user on the Tokens page, where the key is shown once
