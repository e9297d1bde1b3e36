"""RBAC privilege-escalation prevention, as upstream's policy-based storage for Roles and bindings.

A user may create or change a Role or ClusterRole only with rules they already hold (where the role applies:
its namespace for a Role, the cluster for a ClusterRole), unless they may `escalate` it; and may bind a role
only if they hold its rules, unless they may `bind` it. `system:masters` may do both. Otherwise the write is
refused with upstream's words:

    roles.rbac.authorization.k8s.io "x" is forbidden: user "alice" (groups=["system:authenticated"]) is
    attempting to grant RBAC permissions not currently held:
    {APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}

The requester is the request's (effective) user, set by the server for each request in `REQUESTER`;
in-process writers (controllers, the bootstrap policy) have none and are not checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from simcluster.auth import UserInfo
from simcluster.errors import ApiError

if TYPE_CHECKING:
    from simcluster.rbac import Authorizer
    from simcluster.resources import ResourceDef
    from simcluster.store import Store

Rule = Mapping[str, Any]
RBAC_GROUP = "rbac.authorization.k8s.io"
PRIVILEGED_GROUP = "system:masters"
ROLE_PLURALS = frozenset({"roles", "clusterroles"})
BINDING_PLURALS = frozenset({"rolebindings", "clusterrolebindings"})

#: rbacregistryvalidation's fullAuthority: what using an aggregationRule asks of its writer
FULL_AUTHORITY: list[Rule] = [
    {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
    {"nonResourceURLs": ["*"], "verbs": ["*"]},
]
#: who is writing, for the request being served (None: an in-process writer)
REQUESTER: ContextVar[UserInfo | None] = ContextVar("simcluster_requester", default=None)


def _go_quote(values: Iterable[Any]) -> str:
    """Go's %q of a []string: `["a" "b"]`."""
    return "[" + " ".join('"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "]"


def breakdown(rule: Rule) -> list[dict[str, Any]]:
    """One rule per (group, resource, resourceName, verb) or (URL, verb), as upstream's BreakdownRule."""
    out: list[dict[str, Any]] = []
    verbs = list(rule.get("verbs") or [])
    for group in rule.get("apiGroups") or []:
        for resource in rule.get("resources") or []:
            names = list(rule.get("resourceNames") or [])
            for verb in verbs:
                if names:
                    out += [{"apiGroups": [group], "resources": [resource], "resourceNames": [n], "verbs": [verb]}
                            for n in names]  # fmt: skip
                else:
                    out.append({"apiGroups": [group], "resources": [resource], "verbs": [verb]})
    for url in rule.get("nonResourceURLs") or []:
        out += [{"nonResourceURLs": [url], "verbs": [verb]} for verb in verbs]
    return out


def _has_all(owner: Sequence[Any], wanted: Sequence[Any]) -> bool:
    return "*" in owner or all(w in owner for w in wanted)


def _resources_cover(owner: Sequence[Any], wanted: Sequence[Any]) -> bool:
    if "*" in owner:
        return True
    for resource in wanted:
        if resource in owner:
            continue
        name, _, sub = str(resource).partition("/")
        if sub and (f"{name}/*" in owner or f"*/{sub}" in owner):
            continue
        return False
    return True


def _urls_cover(owner: Sequence[Any], wanted: Sequence[Any]) -> bool:
    for url in wanted:
        if not any(
            o == url or o == "*" or (str(o).endswith("*") and str(url).startswith(str(o)[:-1])) for o in owner
        ):
            return False
    return True


def rule_covers(owner: Rule, wanted: Rule) -> bool:
    """upstream's ruleCovers: the owner's rule grants every verb, group, resource, name and URL of `wanted`."""
    if not _has_all(list(owner.get("verbs") or []), list(wanted.get("verbs") or [])):
        return False
    if wanted.get("nonResourceURLs"):
        return _urls_cover(list(owner.get("nonResourceURLs") or []), list(wanted["nonResourceURLs"]))
    if not _has_all(list(owner.get("apiGroups") or []), list(wanted.get("apiGroups") or [])):
        return False
    if not _resources_cover(list(owner.get("resources") or []), list(wanted.get("resources") or [])):
        return False
    owner_names = list(owner.get("resourceNames") or [])
    return not owner_names or (
        bool(wanted.get("resourceNames")) and all(n in owner_names for n in wanted["resourceNames"])
    )


def missing_rules(owner_rules: Sequence[Rule], wanted: Iterable[Rule]) -> list[dict[str, Any]]:
    """The broken-down rules of `wanted` no owner rule covers (upstream's Covers)."""
    return [
        sub for rule in wanted for sub in breakdown(rule) if not any(rule_covers(o, sub) for o in owner_rules)
    ]


def _compact(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """upstream's CompactRules: simple one-group one-resource rules merge their verbs."""
    simple: dict[tuple[str, str], dict[str, Any]] = {}
    out: list[dict[str, Any]] = []
    for rule in rules:
        if rule.get("resourceNames") or rule.get("nonResourceURLs"):
            out.append(rule)
            continue
        key = (rule["apiGroups"][0], rule["resources"][0])
        if key in simple:
            simple[key]["verbs"] += [v for v in rule["verbs"] if v not in simple[key]["verbs"]]
        else:
            simple[key] = {**rule, "verbs": list(rule["verbs"])}
            out.append(simple[key])
    return out


def compact_string(rule: Rule) -> str:
    """upstream's rbacv1helpers.CompactString."""
    parts = [
        f"{label}:{_go_quote(rule[key])}"
        for label, key in (
            ("APIGroups", "apiGroups"),
            ("Resources", "resources"),
            ("NonResourceURLs", "nonResourceURLs"),
            ("ResourceNames", "resourceNames"),
            ("Verbs", "verbs"),
        )  # fmt: skip
        if rule.get(key)
    ]
    return "{" + ", ".join(parts) + "}"


def escalation_message(user: UserInfo, missing: list[dict[str, Any]]) -> str:
    lines = sorted({compact_string(r) for r in _compact(missing)})
    return (
        f'user "{user.name}" (groups={_go_quote(user.groups)}) is attempting to grant RBAC permissions not '
        "currently held:\n" + "\n".join(lines)
    )


def _forbidden(plural: str, name: str, message: str) -> ApiError:
    return ApiError(
        403, "Forbidden", f'{plural}.{RBAC_GROUP} "{name}" is forbidden: {message}',
        {"name": name, "group": RBAC_GROUP, "kind": plural},
    )  # fmt: skip


class EscalationCheck:
    """The store's admission hook for Roles, ClusterRoles and their bindings."""

    def __init__(self, store: Store, authorizer: Authorizer) -> None:
        self.store = store
        self.authorizer = authorizer

    def __call__(
        self,
        operation: str,
        resource: ResourceDef,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
        subresource: str | None,
    ) -> None:
        user = REQUESTER.get()
        if user is None or PRIVILEGED_GROUP in user.groups or obj is None or subresource is not None:
            return  # deletes and subresources grant nothing
        if resource.plural in ROLE_PLURALS:
            self._role(resource.plural, obj, old, user)
        elif resource.plural in BINDING_PLURALS:
            self._binding(resource.plural, obj, old, user)

    def _allowed(self, user: UserInfo, verb: str, plural: str, name: str, namespace: str) -> bool:
        from simcluster.rbac import Attributes

        attrs = Attributes(user, verb, True, api_group=RBAC_GROUP, api_version="v1", resource=plural, name=name,
                           namespace=namespace)  # fmt: skip
        return self.authorizer.authorize(attrs)[0]

    def _confirm(self, plural: str, name: str, namespace: str, user: UserInfo, rules: Sequence[Rule]) -> None:
        missing = missing_rules(self.authorizer.owner_rules(user, namespace), rules)
        if missing:
            raise _forbidden(plural, name, escalation_message(user, missing))

    def _role(self, plural: str, obj: dict[str, Any], old: dict[str, Any] | None, user: UserInfo) -> None:
        rules = list(obj.get("rules") or [])
        aggregation = obj.get("aggregationRule")
        if (
            old is not None
            and rules == list(old.get("rules") or [])
            and aggregation == old.get("aggregationRule")
        ):
            return  # only metadata changes: nothing is granted
        meta = obj.get("metadata") or {}
        name, namespace = str(meta.get("name", "")), str(meta.get("namespace") or "")
        if self._allowed(user, "escalate", plural, name, namespace):
            return
        self._confirm(plural, name, namespace, user, rules)
        # an aggregationRule can gather anything (and keep a role from being tightened): it takes * on *.*
        aggregating = plural == "clusterroles" and (aggregation or (old or {}).get("aggregationRule"))
        if aggregating and missing_rules(self.authorizer.owner_rules(user, ""), FULL_AUTHORITY):
            raise _forbidden(plural, name, "must have cluster-admin privileges to use the aggregationRule")

    def _binding(self, plural: str, obj: dict[str, Any], old: dict[str, Any] | None, user: UserInfo) -> None:
        if (
            old is not None
            and obj.get("subjects") == old.get("subjects")
            and obj.get("roleRef") == old.get("roleRef")
        ):
            return
        meta = obj.get("metadata") or {}
        name, namespace = str(meta.get("name", "")), str(meta.get("namespace") or "")
        ref = obj.get("roleRef") or {}
        role_plural = "clusterroles" if ref.get("kind") == "ClusterRole" else "roles"
        role_name = str(ref.get("name", ""))
        if self._allowed(user, "bind", role_plural, role_name, namespace):
            return
        try:
            role = self.store.get(
                role_plural, role_name, namespace=namespace if role_plural == "roles" else None
            )
        except ApiError as error:
            if error.status == 404:
                raise not_found_role(role_plural, role_name) from error
            raise
        self._confirm(plural, name, namespace, user, list(role.get("rules") or []))


def not_found_role(plural: str, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{plural}.{RBAC_GROUP} "{name}" not found',
                    {"name": name, "group": RBAC_GROUP, "kind": plural})  # fmt: skip


__all__ = ["REQUESTER", "EscalationCheck", "breakdown", "compact_string", "missing_rules"]
