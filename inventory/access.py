"""Acting on the cluster as the logged-in user (DRADASH_IMPERSONATION_ENABLED): who the user is to
Kubernetes, and what Kubernetes lets them do (a SelfSubjectAccessReview as them, cached briefly).

With impersonation off, `kube_identity` is None (requests go out as dradash's own credentials) and
`user_may` answers True: the Django role alone decides, as before.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from django.conf import settings
from django.core.cache import cache

from inventory.kube import Identity, KubeClient, KubeError, connect
from inventory.models import ExternalGroups

log = logging.getLogger(__name__)

_clients: dict[tuple[str, str], KubeClient] = {}


def cluster_client() -> KubeClient:
    """One client per (kubeconfig, context), created on first use (the settings may change in tests)."""
    key = (settings.DRADASH_KUBECONFIG, settings.DRADASH_KUBE_CONTEXT)
    if key not in _clients:
        _clients[key] = connect(kubeconfig=key[0] or None, context=key[1] or None)
    return _clients[key]


def kube_identity(user: Any) -> Identity | None:
    """The user as the API server should see them: DRADASH_IMPERSONATION_USER_PREFIX + the user name, and
    their groups — the provider's groups claim after an OIDC login, else their Django groups — with the prefix, only
    those in DRADASH_IMPERSONATION_ALLOWED_GROUPS when that is set. None: impersonation is off."""
    if (
        not settings.DRADASH_IMPERSONATION_ENABLED
        or user is None
        or not getattr(user, "is_authenticated", False)
    ):
        return None
    prefix = settings.DRADASH_IMPERSONATION_GROUP_PREFIX
    external = ExternalGroups.objects.filter(user=user).values_list("groups", flat=True).first()
    if external is not None:  # logged in through OIDC: the provider's groups, as the API server knows them
        names = list(external)
    else:
        names = list(user.groups.order_by("name").values_list("name", flat=True))
    groups = [prefix + name for name in names]
    allowed = settings.DRADASH_IMPERSONATION_ALLOWED_GROUPS
    if allowed:
        groups = [g for g in groups if g in allowed]
    return Identity(settings.DRADASH_IMPERSONATION_USER_PREFIX + user.get_username(), tuple(groups))


def user_may(user: Any, *, verb: str, resource: str, group: str = "", namespace: str = "") -> bool:
    """May the user do this in the cluster? Asked as the user (SelfSubjectAccessReview under impersonation)
    and cached for DRADASH_ACCESS_REVIEW_CACHE_SECONDS per user, groups, verb and resource. True with
    impersonation off. An unanswered question (cluster unreachable) is False and not cached."""
    identity = kube_identity(user)
    if identity is None:
        return True
    who = hashlib.sha256("\n".join((identity.user, *identity.groups)).encode()).hexdigest()[:32]
    key = f"dradash:ssar:{who}:{verb}:{group}/{resource}:{namespace}"
    cached = cache.get(key)
    if cached is not None:
        return bool(cached)
    try:
        allowed = cluster_client().can_i(
            verb=verb, resource=resource, group=group, namespace=namespace, as_user=identity
        )
    except (KubeError, OSError) as exc:
        log.warning("could not ask whether %s may %s %s: %s", identity.user, verb, resource, exc)
        return False
    cache.set(key, allowed, settings.DRADASH_ACCESS_REVIEW_CACHE_SECONDS)
    return allowed


def user_may_author_rules(user: Any) -> bool:
    """What the maintenance controls need: create (and so patch and delete) DeviceTaintRules."""
    return user_may(user, verb="create", resource="devicetaintrules", group="resource.k8s.io")
