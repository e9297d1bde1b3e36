"""API tokens: made and revoked by their user (the Tokens page), read from `Authorization: Token <key>`.

Keys look like `dd_<43 url-safe characters>`. Tokens made the old way (`manage.py drf_create_token`, DRF's
one token per user, stored in clear) keep working; new ones are made here, several per user, hashed.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from dradash.models import ApiToken
from dradash.realtime import broadcast
from dradash.sessionguard import user_group

KEY_PREFIX = "dd_"
MAX_TOKENS_PER_USER = 20
MAX_NAME = 100
#: last use is written at most this often per token (not on every request)
LAST_USED_RESOLUTION = timedelta(minutes=1)


class TokenError(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def api_token_list(*, user: Any) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user)


def api_token_create(*, user: Any, name: str) -> tuple[ApiToken, str]:
    """A new token for `user` and its key (returned once: only its digest is kept)."""
    name = name.strip()
    if not name:
        raise TokenError("name", "Required value: name the token (where it will be used)")
    if len(name) > MAX_NAME:
        raise TokenError("name", f"must be at most {MAX_NAME} characters, got {len(name)}")
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    try:
        with transaction.atomic():
            if api_token_list(user=user).select_for_update().count() >= MAX_TOKENS_PER_USER:
                raise TokenError("name", f"you already have {MAX_TOKENS_PER_USER} tokens: revoke one first")
            token = ApiToken.objects.create(user=user, name=name, prefix=key[:10], digest=_digest(key))
    except IntegrityError:
        raise TokenError("name", f"you already have a token named {name!r}") from None
    return token, key


def api_token_revoke(*, user: Any, token_id: int) -> str | None:
    """Delete one of the user's own tokens and return its name; None if it is not theirs (or gone already)."""
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().filter(user=user, pk=token_id).first()
        if token is None:
            return None
        token.delete()
    _streams_recheck(user)
    return str(token.name)


def legacy_token(*, user: Any) -> Token | None:
    """The user's DRF token (`manage.py drf_create_token`), if any: shown on the Tokens page to be revoked."""
    token: Token | None = Token.objects.filter(user=user).first()
    return token


def legacy_token_revoke(*, user: Any) -> bool:
    deleted, _ = Token.objects.filter(user=user).delete()
    if deleted:
        _streams_recheck(user)
    return deleted > 0


def _streams_recheck(user: Any) -> None:
    """Once the revoke commits, the user's token streams check their token and the revoked one closes
    (4401) at once, not at the next inventory change."""
    broadcast(user_group(user.pk), {"type": "user.changed"})


def user_for_key(key: str) -> AbstractBaseUser | None:
    """The active user a key belongs to (a named token, or a legacy DRF token), or None."""
    key = key.strip()
    if not key:
        return None
    token = ApiToken.objects.select_related("user").filter(digest=_digest(key)).first()
    if token is not None:
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        user: AbstractBaseUser = token.user
        return user if user.is_active else None
    legacy = Token.objects.select_related("user").filter(key=key).first()
    return legacy.user if legacy is not None and legacy.user.is_active else None


class TokenAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token <key>` for named tokens (hashed) and legacy DRF tokens alike."""

    def authenticate(self, request: Any) -> tuple[Any, None] | None:
        parts = authentication.get_authorization_header(request).split()
        well_formed = len(parts) == 2 and parts[0].lower() == b"token"
        # DRF passes any other header over silently and then says "credentials were not provided"; name
        # the scheme we accept instead. A signed-in browser keeps its session whatever a proxy in front
        # adds (say, its own Basic auth).
        if parts and not well_formed and not request._request.user.is_authenticated:
            scheme = parts[0].decode("latin-1")[:20]
            raise exceptions.AuthenticationFailed(
                f"the Authorization header ({scheme!r} …) is not one this API accepts: send"
                " 'Authorization: Token <key>' with a key from the Tokens page"
            )
        return super().authenticate(request)  # type: ignore[no-any-return]

    def authenticate_credentials(self, key: str) -> tuple[Any, None]:
        user = user_for_key(key)
        if user is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        return user, None
