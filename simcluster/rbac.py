"""Authorization: request attributes and the RBAC authorizer (`rbac.authorization.k8s.io/v1`), as upstream.

The group `system:masters` may do anything (kube's privileged-group authorizer comes before the modes).
Then the modes before RBAC decide (the server runs the Node authorizer, `simcluster.nodeauthz`, as
`--authorization-mode=Node,RBAC` does), then RBAC: ClusterRoleBindings grant their ClusterRole everywhere, RoleBindings grant a Role
of their namespace or a ClusterRole only inside their namespace. Rules match verbs, API groups, resources
(`pods/eviction`, `*/status`, `*`), resourceNames and nonResourceURLs (`/healthz`, `/api/*`) as upstream's
`rbac.RuleAllows`. Aggregated ClusterRoles are not supported (their `aggregationRule` is ignored; the
bootstrap `admin`/`edit`/`view` roles carry flat rules instead).

The bootstrap policy a new cluster has (`system:discovery`, `system:public-info-viewer`,
`system:basic-user`, `cluster-admin`, `system:node` and their bindings) is seeded into the store by `seed_bootstrap_policy`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from dra.selection import SelectorError, label_selector
from simcluster.auth import UserInfo
from simcluster.errors import ApiError
from simcluster.store import Store

__all__ = [
    "NODE_RULES",
    "Attributes",
    "Authorizer",
    "FieldRequirement",
    "Mode",
    "forbidden",
    "rule_allows",
    "seed_bootstrap_policy",
]

RBAC_PLURALS = frozenset({"clusterroles", "clusterrolebindings", "roles", "rolebindings"})
PRIVILEGED_GROUP = "system:masters"
_RBAC = "rbac.authorization.k8s.io"
_AUTO_UPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
_BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}


#: One field selector requirement: (field, "=" or "!=", value); `==` reads as `=`, as fields.ParseSelector.
FieldRequirement = tuple[str, str, str]


@dataclass(frozen=True)
class Attributes:
    """What a request asks to do (upstream's authorizer.Attributes). `field_selector` holds the requirements
    of a list, watch or deletecollection's `?fieldSelector=` (AuthorizeWithSelectors)."""

    user: UserInfo
    verb: str
    resource_request: bool
    path: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    namespace: str = ""
    field_selector: tuple[FieldRequirement, ...] = ()

    def with_user(self, user: UserInfo) -> Attributes:
        return replace(self, user=user)

    def with_verb(self, verb: str) -> Attributes:
        return replace(self, verb=verb)


def forbidden_message(attrs: Attributes) -> str:
    """upstream's responsewriters.forbiddenMessage."""
    user = attrs.user.name
    if not attrs.resource_request:
        return f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    return f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" {where}'


def forbidden(attrs: Attributes, reason: str = "") -> ApiError:
    """403 as kube writes it: `pods "x" is forbidden: User "u" cannot get resource "pods" in API group …`."""
    message = forbidden_message(attrs)
    if reason:
        message = f"{message}: {reason}"
    details: dict[str, Any] = {}
    if attrs.resource_request:
        qualified = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
        text = (
            f'{qualified} "{attrs.name}" is forbidden: {message}'
            if attrs.name
            else f"{qualified} is forbidden: {message}"
        )
        if attrs.name:
            details["name"] = attrs.name
        if attrs.api_group:
            details["group"] = attrs.api_group
        details["kind"] = attrs.resource
    else:
        text = f"forbidden: {message}"
    return ApiError(403, "Forbidden", text, details)


# ---------------------------------------------------------------------------------------------- rule matching


def _has(values: Iterable[Any], wanted: str) -> bool:
    return any(v == "*" or v == wanted for v in values)


def _resource_matches(rule_resources: Iterable[Any], combined: str, subresource: str) -> bool:
    for resource in rule_resources:
        if resource == "*" or resource == combined:
            return True
        if subresource and resource == f"*/{subresource}":
            return True
    return False


def _url_matches(rule_urls: Iterable[Any], path: str) -> bool:
    for url in rule_urls:
        if url == "*" or url == path:
            return True
        if isinstance(url, str) and url.endswith("*") and path.startswith(url.rstrip("*")):
            return True
    return False


def rule_allows(rule: Mapping[str, Any], attrs: Attributes) -> bool:
    if not _has(rule.get("verbs") or (), attrs.verb):
        return False
    if not attrs.resource_request:
        return _url_matches(rule.get("nonResourceURLs") or (), attrs.path)
    combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    names = rule.get("resourceNames") or ()
    return (
        _has(rule.get("apiGroups") or (), attrs.api_group)
        and _resource_matches(rule.get("resources") or (), combined, attrs.subresource)
        and (not names or attrs.name in names)
    )


# ---------------------------------------------------------------------------------------------- the authorizer


@dataclass(frozen=True)
class _Grant:
    """The rules one binding subject gives: where (namespace or "" for everywhere) and why."""

    namespace: str
    rules: tuple[Mapping[str, Any], ...]
    source: str  # `ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`


@dataclass(frozen=True)
class _Subject:
    kind: str
    name: str
    namespace: str


@dataclass
class _Index:
    grants: list[tuple[_Subject, _Grant]]
    missing: list[tuple[_Subject, str, str]]  # subject, binding namespace, error text


class Mode(Protocol):
    """An authorization mode consulted before RBAC (`--authorization-mode=Node,RBAC`)."""

    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        """(allowed, reason); not allowed is "no opinion": the next mode decides."""
        ...

    def rules_error(self, user: UserInfo) -> str:
        """Why this mode cannot list the user's rules ("" when it has none to add)."""
        ...


class Authorizer:
    """The authorizer chain: `system:masters`, then each of `modes`, then RBAC over the store's Roles and
    bindings (re-read when any of them changes). The first to allow decides; a refusal gives every mode's
    reason, one a line, as upstream's union authorizer."""

    def __init__(self, store: Store, modes: Sequence[Mode] = ()) -> None:
        self.store = store
        self.modes = tuple(modes)
        self._lock = threading.Lock()
        self._index: _Index | None = None
        store.subscribe(self._on_change)

    def _on_change(self, event_type: str, plural: str, obj: dict[str, Any]) -> None:
        if plural in RBAC_PLURALS:
            self._index = None

    def _current(self) -> _Index:
        index = self._index
        if index is None:
            with self._lock:
                index = self._index
                if index is None:
                    index = self._index = self._build()
        return index

    def _build(self) -> _Index:
        store = self.store
        cluster_roles = {o["metadata"]["name"]: o for o in _objects(store, "clusterroles")}
        roles = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in _objects(store, "roles")}
        grants: list[tuple[_Subject, _Grant]] = []
        missing: list[tuple[_Subject, str, str]] = []
        for binding in _objects(store, "clusterrolebindings"):
            ref = binding.get("roleRef") or {}
            role = cluster_roles.get(ref.get("name")) if ref.get("kind") == "ClusterRole" else None
            for subject in _subjects(binding, ""):
                if role is None:
                    missing.append(
                        (subject, "", f'clusterrole.rbac.authorization.k8s.io "{ref.get("name")}" not found')
                    )
                    continue
                source = (f'ClusterRoleBinding "{binding["metadata"]["name"]}" of ClusterRole "{ref.get("name")}" '
                          f"to {_describe(subject)}")  # fmt: skip
                grants.append((subject, _Grant("", tuple(role.get("rules") or ()), source)))
        for binding in _objects(store, "rolebindings"):
            namespace = binding["metadata"]["namespace"]
            ref = binding.get("roleRef") or {}
            kind = ref.get("kind")
            role = (
                cluster_roles.get(ref.get("name"))
                if kind == "ClusterRole"
                else roles.get((namespace, ref.get("name")))
            )
            for subject in _subjects(binding, namespace):
                if role is None:
                    singular = "clusterrole" if kind == "ClusterRole" else "role"
                    missing.append(
                        (
                            subject,
                            namespace,
                            f'{singular}.rbac.authorization.k8s.io "{ref.get("name")}" not found',
                        )
                    )
                    continue
                source = (f'RoleBinding "{binding["metadata"]["name"]}/{namespace}" of {kind} "{ref.get("name")}" '
                          f"to {_describe(subject)}")  # fmt: skip
                grants.append((subject, _Grant(namespace, tuple(role.get("rules") or ()), source)))
        return _Index(grants, missing)

    def _grants_for(self, user: UserInfo) -> tuple[list[_Grant], list[tuple[str, str]]]:
        index = self._current()
        grants = [grant for subject, grant in index.grants if _applies(subject, user)]
        errors = [(namespace, text) for subject, namespace, text in index.missing if _applies(subject, user)]
        return grants, errors

    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        """(allowed, reason) as upstream's SubjectAccessReview status reports them."""
        if PRIVILEGED_GROUP in attrs.user.groups:
            return True, ""
        reasons = []
        for mode in self.modes:
            allowed, reason = mode.authorize(attrs)
            if allowed:
                return True, reason
            if reason:
                reasons.append(reason)
        allowed, reason = self._rbac(attrs)
        if allowed:
            return True, reason
        return False, "\n".join([*reasons, reason] if reason else reasons)

    def rules_error(self, user: UserInfo) -> str:
        """The evaluation error of a SelfSubjectRulesReview: the modes that cannot list the user's rules
        (upstream's aggregate of their errors); "" when the rules are complete."""
        errors = [error for mode in self.modes if (error := mode.rules_error(user))]
        return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]" if errors else ""

    def _rbac(self, attrs: Attributes) -> tuple[bool, str]:
        grants, errors = self._grants_for(attrs.user)
        for grant in grants:
            if grant.namespace and grant.namespace != attrs.namespace:
                continue
            if any(rule_allows(rule, attrs) for rule in grant.rules):
                return True, f"RBAC: allowed by {grant.source}"
        relevant = [text for namespace, text in errors if not namespace or namespace == attrs.namespace]
        if relevant:
            joined = relevant[0] if len(relevant) == 1 else "[" + ", ".join(relevant) + "]"
            return False, f"RBAC: {joined}"
        return False, ""

    def owner_rules(self, user: UserInfo, namespace: str) -> list[Mapping[str, Any]]:
        """Every rule granted to `user` that applies in `namespace` ("" = cluster-wide grants only), as
        upstream's RulesFor, for the escalation check."""
        return [
            rule
            for grant in self._grants_for(user)[0]
            if not grant.namespace or grant.namespace == namespace
            for rule in grant.rules
        ]

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(resourceRules, nonResourceRules) that apply to `user` in `namespace`, for SelfSubjectRulesReview."""
        if PRIVILEGED_GROUP in user.groups:
            grants: list[_Grant] = [_Grant("", ({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                                                {"verbs": ["*"], "nonResourceURLs": ["*"]}), "")]  # fmt: skip
            grants += self._grants_for(user)[0]
        else:
            grants = self._grants_for(user)[0]
        resource_rules: list[dict[str, Any]] = []
        non_resource_rules: list[dict[str, Any]] = []
        for grant in grants:
            if grant.namespace and grant.namespace != namespace:
                continue
            for rule in grant.rules:
                if rule.get("nonResourceURLs"):
                    if not grant.namespace:  # a RoleBinding never grants non-resource URLs
                        entry = {
                            "verbs": list(rule.get("verbs") or []),
                            "nonResourceURLs": list(rule["nonResourceURLs"]),
                        }
                        if entry not in non_resource_rules:
                            non_resource_rules.append(entry)
                    continue
                entry = {"verbs": list(rule.get("verbs") or []), "apiGroups": list(rule.get("apiGroups") or []),
                         "resources": list(rule.get("resources") or [])}  # fmt: skip
                if rule.get("resourceNames"):
                    entry["resourceNames"] = list(rule["resourceNames"])
                if entry not in resource_rules:
                    resource_rules.append(entry)
        return resource_rules, non_resource_rules


def _objects(store: Store, plural: str) -> list[dict[str, Any]]:
    return [entry.obj for entry in store.snapshot(plural)[1]]


def _subjects(binding: Mapping[str, Any], namespace: str) -> list[_Subject]:
    found = []
    for subject in binding.get("subjects") or ():
        kind = str(subject.get("kind", ""))
        subject_ns = str(subject.get("namespace") or "")
        if kind == "ServiceAccount" and not subject_ns:
            subject_ns = namespace
        found.append(_Subject(kind, str(subject.get("name", "")), subject_ns))
    return found


def _applies(subject: _Subject, user: UserInfo) -> bool:
    if subject.kind == "User":
        return subject.name == user.name
    if subject.kind == "Group":
        return subject.name in user.groups
    if subject.kind == "ServiceAccount":
        return user.name == f"system:serviceaccount:{subject.namespace}:{subject.name}"
    return False


def _describe(subject: _Subject) -> str:
    if subject.kind == "ServiceAccount":
        return f'ServiceAccount "{subject.name}/{subject.namespace}"'
    return f'{subject.kind} "{subject.name}"'


# ---------------------------------------------------------------------------------------------- bootstrap policy

_READ = ["get", "list", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]
_VIEW_RULES: list[dict[str, Any]] = [
    {"apiGroups": [""], "resources": ["pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
                                      "services", "services/status", "endpoints", "persistentvolumeclaims",
                                      "persistentvolumeclaims/status", "configmaps"], "verbs": _READ},
    {"apiGroups": [""], "resources": ["limitranges", "resourcequotas", "bindings", "events", "pods/status",
                                      "resourcequotas/status", "namespaces/status", "replicationcontrollers/status",
                                      "pods/log"], "verbs": _READ},
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": _READ},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": _READ},
    {"apiGroups": ["apps"], "resources": ["controllerrevisions", "statefulsets", "statefulsets/status",
                                          "statefulsets/scale", "daemonsets", "daemonsets/status", "deployments",
                                          "deployments/status", "deployments/scale", "replicasets",
                                          "replicasets/status", "replicasets/scale"], "verbs": _READ},
    {"apiGroups": ["batch"], "resources": ["jobs", "cronjobs", "cronjobs/status", "jobs/status"], "verbs": _READ},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets", "poddisruptionbudgets/status"], "verbs": _READ},
    {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies", "ingresses", "ingresses/status"],
     "verbs": _READ},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": _READ},
    {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims", "resourceclaims/status", "resourceclaimtemplates"],
     "verbs": _READ},
]  # fmt: skip
_EDIT_RULES: list[dict[str, Any]] = [
    {"apiGroups": [""], "resources": ["pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"],
     "verbs": _WRITE},
    {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
                                      "services", "services/proxy", "persistentvolumeclaims", "configmaps", "secrets",
                                      "events"], "verbs": _WRITE},
    {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["secrets"], "verbs": _READ},
    {"apiGroups": ["apps"], "resources": ["statefulsets", "statefulsets/scale", "daemonsets", "deployments",
                                          "deployments/scale", "deployments/rollback", "replicasets",
                                          "replicasets/scale"], "verbs": _WRITE},
    {"apiGroups": ["batch"], "resources": ["jobs", "cronjobs"], "verbs": _WRITE},
    {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies", "ingresses"], "verbs": _WRITE},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": _WRITE},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": _WRITE},
    {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims", "resourceclaimtemplates"], "verbs": _WRITE},
    *_VIEW_RULES,
]  # fmt: skip
_ADMIN_RULES: list[dict[str, Any]] = [
    {
        "apiGroups": ["rbac.authorization.k8s.io"],
        "resources": ["rolebindings", "roles"],
        "verbs": [*_READ, *_WRITE],
    },
    {"apiGroups": ["authorization.k8s.io"], "resources": ["localsubjectaccessreviews"], "verbs": ["create"]},
    *_EDIT_RULES,
]

#: bootstrappolicy.NodeRules (DRA on): the ClusterRole `system:node`, and what the Node authorizer lets every
#: node do where it does not look closer (`simcluster.nodeauthz`).
NODE_RULES: list[dict[str, Any]] = [
    {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
    {"apiGroups": ["authorization.k8s.io"], "resources": ["localsubjectaccessreviews", "subjectaccessreviews"],
     "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["services"], "verbs": _READ},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["create", "get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch", "update"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["patch", "update"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch", "update"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": _READ},
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["create", "delete"]},
    {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["patch", "update"]},
    {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": _READ},
    {"apiGroups": [""], "resources": ["persistentvolumeclaims", "persistentvolumes"], "verbs": ["get"]},
    {"apiGroups": [""], "resources": ["endpoints"], "verbs": ["get"]},
    {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"],
     "verbs": ["create", "get", "list", "watch"]},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
     "verbs": ["create", "delete", "get", "patch", "update"]},
    {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattachments"], "verbs": ["get"]},
    {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["persistentvolumeclaims/status"], "verbs": ["get", "patch", "update"]},
    {"apiGroups": ["storage.k8s.io"], "resources": ["csidrivers"], "verbs": _READ},
    {"apiGroups": ["storage.k8s.io"], "resources": ["csinodes"],
     "verbs": ["create", "delete", "get", "patch", "update"]},
    {"apiGroups": ["node.k8s.io"], "resources": ["runtimeclasses"], "verbs": _READ},
    {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"], "verbs": ["get"]},
    {"apiGroups": ["resource.k8s.io"], "resources": ["resourceslices"], "verbs": ["deletecollection"]},
    {"apiGroups": ["certificates.k8s.io"], "resources": ["clustertrustbundles"], "verbs": _READ},
    {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["get"]},
]  # fmt: skip
_AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"
#: bootstrappolicy's aggregated roles: admin, edit and view hold what the ClusterRoles labelled for them hold
#: (system:aggregate-to-* theirs, edit and view each other's), written there by the aggregation controller.
AGGREGATED_ROLES: dict[str, tuple[str, str | None]] = {  # → (the label they gather, the one they carry)
    "admin": ("admin", None),
    "edit": ("edit", "admin"),
    "view": ("view", "edit"),
}
BOOTSTRAP_CLUSTER_ROLES: dict[str, list[dict[str, Any]]] = {
    "cluster-admin": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                      {"nonResourceURLs": ["*"], "verbs": ["*"]}],
    "system:discovery": [{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                                              "/openapi/*", "/readyz", "/version", "/version/"], "verbs": ["get"]}],
    "system:public-info-viewer": [{"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
                                   "verbs": ["get"]}],
    "system:monitoring": [{"nonResourceURLs": ["/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz",
                                               "/livez/*", "/readyz/*", "/healthz/*"], "verbs": ["get"]}],
    "system:service-account-issuer-discovery": [{"nonResourceURLs": ["/.well-known/openid-configuration",
                                                                     "/.well-known/openid-configuration/",
                                                                     "/openid/v1/jwks", "/openid/v1/jwks/"],
                                                 "verbs": ["get"]}],
    "system:basic-user": [
        {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
         "verbs": ["create"]},
        {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]},
    ],
    "system:aggregate-to-admin": _ADMIN_RULES[: len(_ADMIN_RULES) - len(_EDIT_RULES)],
    "system:aggregate-to-edit": _EDIT_RULES[: len(_EDIT_RULES) - len(_VIEW_RULES)],
    "system:aggregate-to-view": _VIEW_RULES,
    "system:node": NODE_RULES,
}  # fmt: skip
BOOTSTRAP_BINDINGS: dict[str, tuple[str, list[str]]] = {
    "cluster-admin": ("cluster-admin", [PRIVILEGED_GROUP]),
    "system:discovery": ("system:discovery", ["system:authenticated"]),
    "system:public-info-viewer": (
        "system:public-info-viewer",
        ["system:authenticated", "system:unauthenticated"],
    ),
    "system:basic-user": ("system:basic-user", ["system:authenticated"]),
    "system:monitoring": ("system:monitoring", ["system:monitoring"]),
    "system:service-account-issuer-discovery": (
        "system:service-account-issuer-discovery",
        ["system:serviceaccounts"],
    ),
    # bound to no one since v1.8: nodes are authorized by the Node authorizer
    "system:node": ("system:node", []),
}


def seed_bootstrap_policy(store: Store) -> None:
    """The default ClusterRoles and ClusterRoleBindings every cluster starts with (existing ones are kept)."""
    for name, (gathered, carried) in AGGREGATED_ROLES.items():
        labels = dict(_BOOTSTRAP_LABELS)
        if carried:
            labels[_AGGREGATE_TO + carried] = "true"
        _create_if_absent(store, "clusterroles", {
            "apiVersion": f"{_RBAC}/v1", "kind": "ClusterRole",
            "metadata": {"name": name, "labels": labels, "annotations": dict(_AUTO_UPDATE)},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {_AGGREGATE_TO + gathered: "true"}}]},
        })  # fmt: skip
    for name, rules in BOOTSTRAP_CLUSTER_ROLES.items():
        labels = dict(_BOOTSTRAP_LABELS)
        if name.startswith("system:aggregate-to-"):
            labels[_AGGREGATE_TO + name.removeprefix("system:aggregate-to-")] = "true"
        _create_if_absent(store, "clusterroles", {
            "apiVersion": f"{_RBAC}/v1", "kind": "ClusterRole",
            "metadata": {"name": name, "labels": labels, "annotations": dict(_AUTO_UPDATE)},
            "rules": rules,
        })  # fmt: skip
    aggregate_cluster_roles(store)
    for name, (role, groups) in BOOTSTRAP_BINDINGS.items():
        binding: dict[str, Any] = {
            "apiVersion": f"{_RBAC}/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": dict(_BOOTSTRAP_LABELS), "annotations": dict(_AUTO_UPDATE)},
            "roleRef": {"apiGroup": _RBAC, "kind": "ClusterRole", "name": role},
        }  # fmt: skip
        if groups:
            binding["subjects"] = [{"apiGroup": _RBAC, "kind": "Group", "name": group} for group in groups]
        _create_if_absent(store, "clusterrolebindings", binding)


def _create_if_absent(store: Store, plural: str, obj: dict[str, Any]) -> None:
    try:
        store.create(plural, obj)
    except ApiError as error:
        if error.reason != "AlreadyExists":
            raise


def aggregate_cluster_roles(store: Store) -> bool:
    """The clusterrole-aggregation controller's pass: a ClusterRole with an aggregationRule gets the rules of
    every other ClusterRole one of its selectors matches, in their name order, each rule once. Repeated until
    nothing changes (edit gathers view, admin edit). True when it wrote."""
    wrote = False
    for _ in range(8):
        roles = sorted(_objects(store, "clusterroles"), key=lambda r: str(r["metadata"]["name"]))
        changed = False
        for role in roles:
            rule = role.get("aggregationRule")
            if not isinstance(rule, dict):
                continue
            gathered: list[Any] = []
            for raw in rule.get("clusterRoleSelectors") or []:
                try:
                    selector = label_selector(raw)
                except SelectorError:
                    continue
                for other in roles:
                    if other["metadata"]["name"] == role["metadata"]["name"]:
                        continue
                    if not selector.matches(other["metadata"].get("labels") or {}):
                        continue
                    gathered.extend(r for r in other.get("rules") or [] if r not in gathered)
            if gathered != (role.get("rules") or []):
                with contextlib.suppress(ApiError):  # gone or changed meanwhile: the next pass sees it
                    store.patch("clusterroles", str(role["metadata"]["name"]), {"rules": gathered},
                                field_manager="clusterrole-aggregation-controller")  # fmt: skip
                    changed = wrote = True
        if not changed:
            break
    return wrote
