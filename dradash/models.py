"""The project's own rows: named API tokens (a user may hold several, each revocable on its own)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """An API token. Only a SHA-256 digest of the key is stored: the key is shown once, when made.

    Keys are 256 random bits, so a fast digest is enough (no password-style stretching is needed to stop
    guessing); the prefix lets a user tell tokens apart in the list without the key."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "name"], name="api_token_name_per_user")]
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
