"""Impersonation headers (`Impersonate-User`, `-Group`, `-Uid`, `-Extra-*`), constrained and classic.

Constrained impersonation (KEP-5284, gate ConstrainedImpersonation, beta and on by default since v1.36)
is tried first. The mode follows from the user asked for: `serviceaccount` for `system:serviceaccount:NS:N`,
`associated-node`/`arbitrary-node` for `system:node:N`, `user-info` for anyone else. The requester needs
the identity verb `impersonate:<mode>` in group `authentication.k8s.io` on the identity (users, groups,
uids, `userextras/<key>`, serviceaccounts in their namespace, nodes; resourceNames honoured) and the action
verb `impersonate-on:<mode>:<verb>` on what the request does. Failing that, the classic `impersonate` verb
(core group users, groups, serviceaccounts; `authentication.k8s.io` uids and userextras) is checked; when
that fails too the 403 names the first classic check that failed, e.g.
`users "bob" is forbidden: User "dradash" cannot impersonate resource "users" in API group "" at the cluster scope`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

from multidict import MultiMapping

from simcluster.auth import (
    AUTHENTICATED,
    UNAUTHENTICATED,
    UserInfo,
    parse_service_account,
    service_account_groups,
)
from simcluster.errors import ApiError
from simcluster.rbac import Attributes, forbidden

__all__ = ["Impersonation", "impersonate", "requested"]

AUTH_GROUP = "authentication.k8s.io"
NODE_PREFIX = "system:node:"
NODE_NAME_EXTRA = "authentication.kubernetes.io/node-name"
Authorize = Callable[[Attributes], tuple[bool, str]]


@dataclass(frozen=True)
class Impersonation:
    user: str
    groups: tuple[str, ...]
    groups_given: bool
    uid: str
    extra: dict[str, tuple[str, ...]]


def requested(headers: MultiMapping[str]) -> Impersonation | None:
    """The impersonation a request asks for (None when it asks none); 400 for groups etc. without a user."""
    getall = headers.getall
    items = headers.items
    users: list[str] = getall("Impersonate-User", [])
    groups: list[str] = getall("Impersonate-Group", [])
    uids: list[str] = getall("Impersonate-Uid", [])
    extra: dict[str, list[str]] = {}
    for key, value in items():
        if key.lower().startswith("impersonate-extra-"):
            extra.setdefault(unquote(key[len("impersonate-extra-") :]).lower(), []).append(value)
    if not users:
        if groups or uids or extra:
            raise ApiError(500, "InternalError",
                           "Internal error occurred: requested impersonation of groups, uid or extra without "
                           "impersonating a user")  # fmt: skip
        return None
    return Impersonation(
        user=users[0],
        groups=tuple(groups),
        groups_given=bool(groups),
        uid=uids[0] if uids else "",
        extra={key: tuple(values) for key, values in extra.items()},
    )


def _identity(requester: UserInfo, verb: str, resource: str, name: str, *, group: str, namespace: str = "",
              subresource: str = "") -> Attributes:  # fmt: skip
    return Attributes(requester, verb, True, api_group=group, api_version="v1", resource=resource,
                      subresource=subresource, name=name, namespace=namespace)  # fmt: skip


def _constrained_candidates(requester: UserInfo, wanted: Impersonation) -> list[tuple[str, list[Attributes]]]:
    """(mode, identity checks) to try in order; a candidate whose checks all pass (with its action) suffices.
    A node agent impersonating its own node tries `associated-node` first, then `arbitrary-node`."""
    sa = parse_service_account(wanted.user)
    extra: list[Attributes] = []
    for group in wanted.groups:
        extra.append(_identity(requester, "impersonate:user-info", "groups", group, group=AUTH_GROUP))
    if wanted.uid:
        extra.append(_identity(requester, "impersonate:user-info", "uids", wanted.uid, group=AUTH_GROUP))
    for key, values in wanted.extra.items():
        extra += [_identity(requester, "impersonate:user-info", "userextras", value, group=AUTH_GROUP, subresource=key)
                  for value in values]  # fmt: skip
    if sa is not None:
        identity = _identity(requester, "impersonate:serviceaccount", "serviceaccounts", sa[1], group=AUTH_GROUP,
                             namespace=sa[0])  # fmt: skip
        return [("serviceaccount", [identity, *extra])]
    if wanted.user.startswith(NODE_PREFIX):
        node = wanted.user[len(NODE_PREFIX) :]
        candidates = []
        if node and requester.extra.get(NODE_NAME_EXTRA) == (node,) and parse_service_account(requester.name):
            associated = _identity(requester, "impersonate:associated-node", "nodes", node, group=AUTH_GROUP)
            candidates.append(("associated-node", [associated, *extra]))
        arbitrary = _identity(requester, "impersonate:arbitrary-node", "nodes", node, group=AUTH_GROUP)
        return [*candidates, ("arbitrary-node", [arbitrary, *extra])]
    identity = _identity(requester, "impersonate:user-info", "users", wanted.user, group=AUTH_GROUP)
    return [("user-info", [identity, *extra])]


def _legacy_checks(requester: UserInfo, wanted: Impersonation) -> list[Attributes]:
    sa = parse_service_account(wanted.user)
    if sa is not None:
        checks = [_identity(requester, "impersonate", "serviceaccounts", sa[1], group="", namespace=sa[0])]
    else:
        checks = [_identity(requester, "impersonate", "users", wanted.user, group="")]
    checks += [_identity(requester, "impersonate", "groups", group, group="") for group in wanted.groups]
    if wanted.uid:
        checks.append(_identity(requester, "impersonate", "uids", wanted.uid, group=AUTH_GROUP))
    for key, values in wanted.extra.items():
        checks += [_identity(requester, "impersonate", "userextras", value, group=AUTH_GROUP, subresource=key)
                   for value in values]  # fmt: skip
    return checks


def impersonate(authorize: Authorize, request: Attributes, wanted: Impersonation) -> UserInfo:
    """The user the request acts as, once `request.user` may impersonate `wanted` for it; else ApiError 403."""
    requester = request.user
    constrained = any(
        all(authorize(check)[0] for check in checks)
        and authorize(request.with_verb(f"impersonate-on:{mode}:{request.verb}"))[0]
        for mode, checks in _constrained_candidates(requester, wanted)
    )
    if not constrained:
        for check in _legacy_checks(requester, wanted):
            allowed, reason = authorize(check)
            if not allowed:
                raise forbidden(check, reason)
    return _impersonated_user(wanted)


def _impersonated_user(wanted: Impersonation) -> UserInfo:
    sa = parse_service_account(wanted.user)
    groups: tuple[str, ...] = wanted.groups
    if not wanted.groups_given and sa is not None:
        groups = service_account_groups(sa[0])
    if wanted.user == "system:anonymous":
        if UNAUTHENTICATED not in groups:
            groups = (*groups, UNAUTHENTICATED)
    elif AUTHENTICATED not in groups:
        groups = (*groups, AUTHENTICATED)
    return UserInfo(wanted.user, groups, wanted.uid, dict(wanted.extra))
