"""The user's own API tokens: make one (its key shown once), see them, revoke one."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from dradash.fieldnames import shown_errors
from dradash.tokens import (
    MAX_NAME,
    MAX_TOKENS_PER_USER,
    TokenError,
    api_token_create,
    api_token_list,
    api_token_revoke,
    legacy_token,
    legacy_token_revoke,
)

#: The token form's labels, by field (the page renders them; a refused field is named by its label, then its
#: field: "Name (name): …").
TOKEN_LABELS = {"name": "Name"}


def _page(request: HttpRequest, *, status: int = 200, **extra: object) -> HttpResponse:
    context = {
        "tokens": api_token_list(user=request.user),
        "legacy": legacy_token(user=request.user),
        "max_tokens": MAX_TOKENS_PER_USER,
        "max_name": MAX_NAME,
        "live_version": None,
        "labels": TOKEN_LABELS,
        **extra,
    }
    return render(request, "dradash/tokens.html", context, status=status)


@never_cache  # the answer to a POST holds a key: no cache may keep it
@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _page(request)
    name = request.POST.get("name", "")
    try:
        token, key = api_token_create(user=request.user, name=name)
    except TokenError as error:
        return _page(request, status=400, errors=shown_errors([error], TOKEN_LABELS), name=name)
    return _page(request, status=201, created=token, key=key)


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    name = api_token_revoke(user=request.user, token_id=token_id)
    if name is None:
        return _page(request, status=404, revoke_error="no such token of yours (revoked already?)")
    messages.success(request, f"Token “{name}” revoked: requests that send it are refused from now on.")
    return redirect("tokens")


@login_required
@require_POST
def legacy_token_revoke_view(request: HttpRequest) -> HttpResponse:
    if not legacy_token_revoke(user=request.user):
        return _page(request, status=404, revoke_error="you have no legacy token (revoked already?)")
    messages.success(request, "Legacy token revoked: requests that send it are refused from now on.")
    return redirect("tokens")


class LogoutView(auth_views.LogoutView):
    """Logs out and says so on the login page it lands on: a bare login form reads like an expired session."""

    def post(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        response = super().post(request, *args, **kwargs)
        messages.info(request, "You are logged out.")
        return response
