"""The chart's RBAC, read the way the API server's authorizer reads it: least privilege for every value set,
everything the product actually calls granted, and impersonation replacing the dashboard's own writes."""

from __future__ import annotations

import pytest

from dra.kinds import BY_PLURAL
from inventory.kube import MIRRORED_KINDS
from maintenance.cluster import RULES as TAINT_RULES
from tests.deploy.chart import allowed, rendered, rules
from tests.deploy.values import VALUE_SETS
from tests.helm import find

pytestmark = pytest.mark.helm

RESOURCE = "resource.k8s.io"
WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")
#: verbs that hand out more power than the rule names: never for the dashboard
ESCALATING_VERBS = {"escalate", "bind", "approve", "sign"}


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_it_grants_no_wildcard_no_secrets_no_pod_deletion_and_no_slice_writes(value_set: str) -> None:
    manifests = rendered(value_set)
    every_rule = rules(manifests, "ClusterRole") + rules(manifests, "Role")
    assert every_rule, "the chart renders no RBAC rules"
    for rule in every_rule:
        fields = (rule.api_groups, rule.resources, rule.verbs, rule.resource_names)
        assert not any("*" in value for field in fields for value in field), f"wildcard in {rule}"
        assert not rule.non_resource_urls, f"non-resource URLs in {rule}"
        assert rule.resources and rule.verbs, f"a rule without resources or verbs: {rule}"
        assert "secrets" not in rule.resources, f"access to Secrets in {rule}"
        assert not ESCALATING_VERBS & set(rule.verbs), f"an escalating verb in {rule}"
        if "" in rule.api_groups and "pods" in rule.resources:
            assert not {"delete", "deletecollection", "create", "update", "patch"} & set(rule.verbs), rule
        if RESOURCE in rule.api_groups and "resourceslices" in rule.resources:
            assert set(rule.verbs) <= {"get", "list", "watch"}, f"ResourceSlice writes in {rule}"
    for verb in ("get", "list", "watch", *WRITE_VERBS):
        assert not allowed(manifests, "", "secrets", verb)
    for verb in WRITE_VERBS:
        assert not allowed(manifests, RESOURCE, "resourceslices", verb)
    assert not allowed(manifests, "", "pods", "delete")


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_it_lets_the_mirror_list_and_watch_every_kind_it_mirrors(value_set: str) -> None:
    manifests = rendered(value_set)
    for plural in MIRRORED_KINDS:
        kind = BY_PLURAL[plural]
        for verb in ("get", "list", "watch"):
            assert allowed(manifests, kind.group, plural, verb), (
                f"{verb} {kind.group_resource} is not granted"
            )


def test_it_lets_the_dashboard_write_device_taint_rules_itself_without_impersonation() -> None:
    manifests = rendered("default")
    for verb in ("create", "patch", "update", "delete"):
        assert allowed(manifests, RESOURCE, TAINT_RULES, verb), verb
    assert not allowed(manifests, RESOURCE, TAINT_RULES, "deletecollection")
    assert not allowed(manifests, "authentication.k8s.io", "users", "impersonate:user-info", name="alice")
    assert not allowed(manifests, "", "users", "impersonate", name="alice")


@pytest.mark.parametrize("value_set", ["impersonation", "impersonation-restricted", "impersonation-legacy"])
def test_it_only_impersonates_for_device_taint_rule_writes_with_impersonation_on(value_set: str) -> None:
    manifests = rendered(value_set)
    for verb in ("create", "patch", "update", "delete"):
        assert not allowed(manifests, RESOURCE, TAINT_RULES, verb), f"{verb} as the dashboard itself"
    assert not allowed(manifests, "", "pods/eviction", "create"), "evictions as the dashboard itself"
    # reading stays the dashboard's own: the mirror watches the rules
    assert allowed(manifests, RESOURCE, TAINT_RULES, "watch")


@pytest.mark.parametrize("value_set", ["impersonation", "impersonation-restricted"])
def test_it_impersonates_with_constrained_verbs_limited_to_what_dradash_writes(value_set: str) -> None:
    manifests = rendered(value_set)
    restricted = VALUE_SETS[value_set]["impersonation"]
    user = (restricted.get("allowedUsers") or ["alice@example.com"])[0]
    group = (restricted.get("allowedGroups") or ["oidc:sre"])[0]
    assert allowed(manifests, "authentication.k8s.io", "users", "impersonate:user-info", name=user)
    assert allowed(manifests, "authentication.k8s.io", "groups", "impersonate:user-info", name=group)
    for verb in ("create", "patch", "update", "delete"):
        assert allowed(manifests, RESOURCE, TAINT_RULES, f"impersonate-on:user-info:{verb}"), verb
    assert allowed(manifests, "", "pods/eviction", "impersonate-on:user-info:create")
    assert allowed(
        manifests, "authorization.k8s.io", "selfsubjectaccessreviews", "impersonate-on:user-info:create"
    )
    # the classic verb would let the dashboard be the user for anything: not granted in constrained mode
    assert not any("impersonate" in rule.verbs for rule in rules(manifests, "ClusterRole"))
    impersonated_writes = {
        (group, resource)
        for rule in rules(manifests, "ClusterRole")
        for verb in rule.verbs
        if verb.startswith("impersonate-on:")
        for group in rule.api_groups
        for resource in rule.resources
    }
    assert impersonated_writes == {
        (RESOURCE, TAINT_RULES),
        (RESOURCE, "resourcepoolstatusrequests"),  # pool availability snapshots, as the user
        ("", "pods/eviction"),
        ("authorization.k8s.io", "selfsubjectaccessreviews"),
    }
    assert not allowed(manifests, "", "pods", "impersonate-on:user-info:delete")
    assert not allowed(manifests, "", "serviceaccounts", "impersonate:serviceaccount", name="default")


def test_it_restricts_impersonation_to_the_allowed_users_and_groups() -> None:
    manifests = rendered("impersonation-restricted")
    assert allowed(
        manifests, "authentication.k8s.io", "users", "impersonate:user-info", name="bob@example.com"
    )
    assert not allowed(manifests, "authentication.k8s.io", "users", "impersonate:user-info", name="mallory")
    assert not allowed(
        manifests, "authentication.k8s.io", "groups", "impersonate:user-info", name="system:masters"
    )
    open_manifests = rendered("impersonation")
    assert allowed(
        open_manifests, "authentication.k8s.io", "groups", "impersonate:user-info", name="anything"
    )


def test_it_uses_the_classic_impersonate_verb_in_legacy_mode_restricted_to_the_allowed_groups() -> None:
    manifests = rendered("impersonation-legacy")
    assert allowed(manifests, "", "users", "impersonate", name="alice@example.com")
    assert allowed(manifests, "", "groups", "impersonate", name="oidc:sre")
    assert not allowed(manifests, "", "groups", "impersonate", name="system:masters")
    assert not any(v.startswith("impersonate-on:") for r in rules(manifests, "ClusterRole") for v in r.verbs)


def test_it_grants_evictions_only_while_the_drain_is_enabled() -> None:
    assert allowed(rendered("default"), "", "pods/eviction", "create")
    manifests = rendered("drain-off")
    assert not any("pods/eviction" in rule.resources for rule in rules(manifests, "ClusterRole"))
    assert allowed(manifests, RESOURCE, TAINT_RULES, "create"), "the drain switch leaves maintenance alone"


def test_it_creates_and_deletes_resource_pool_status_requests_only_when_enabled() -> None:
    for verb in ("create", "delete"):
        assert allowed(rendered("default"), RESOURCE, "resourcepoolstatusrequests", verb)
        assert not allowed(rendered("pool-status-off"), RESOURCE, "resourcepoolstatusrequests", verb)
        # with impersonation on the snapshot is made as the user, like DeviceTaintRule writes
        assert not allowed(rendered("impersonation"), RESOURCE, "resourcepoolstatusrequests", verb)
        assert allowed(
            rendered("impersonation"),
            RESOURCE,
            "resourcepoolstatusrequests",
            f"impersonate-on:user-info:{verb}",
        )
    for verb in ("update", "patch"):
        assert not allowed(rendered("default"), RESOURCE, "resourcepoolstatusrequests", verb)


def test_it_lets_the_ui_ask_what_a_user_may_do() -> None:
    assert allowed(rendered("default"), "authorization.k8s.io", "selfsubjectaccessreviews", "create")
    assert not allowed(rendered("default"), "authorization.k8s.io", "subjectaccessreviews", "create")


def test_it_grants_the_mirror_lease_in_its_own_namespace_only() -> None:
    manifests = rendered("default")
    assert not any("leases" in rule.resources for rule in rules(manifests, "ClusterRole"))
    role = find(manifests, "Role", "dradash-mirror-lease")
    assert "namespace" not in role["metadata"], "the Role belongs to the release namespace helm installs into"
    lease_rules = rules(manifests, "Role")
    mirror = find(manifests, "Deployment", "dradash-mirror")["spec"]["template"]["spec"]["containers"][0]
    (lease_name,) = [e["value"] for e in mirror["env"] if e["name"] == "DRADASH_MIRROR_LEASE_NAME"]

    def role_allows(verb: str, name: str | None) -> bool:
        return any(rule.allows("coordination.k8s.io", "leases", verb, name) for rule in lease_rules)

    assert role_allows("create", None)
    assert role_allows("get", lease_name) and role_allows("update", lease_name)
    assert not role_allows("update", "kube-scheduler"), "renewing is limited to the mirror's own Lease"
    assert not role_allows("delete", lease_name) and not role_allows("list", None)
    assert not any(m["kind"] == "Role" for m in rendered("single-mirror")), "no Lease without leader election"


@pytest.mark.parametrize("value_set", ["default", "impersonation"])
def test_it_binds_the_roles_to_the_chart_service_account_in_the_release_namespace(value_set: str) -> None:
    manifests = rendered(value_set)
    account = find(manifests, "ServiceAccount")["metadata"]["name"]
    for binding_kind, role_kind in (("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")):
        binding = find(manifests, binding_kind)
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": role_kind,
            "name": find(manifests, role_kind)["metadata"]["name"],
        }
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": "dradash"}]
    for m in manifests:
        if m["kind"] in ("Deployment", "Job"):
            assert m["spec"]["template"]["spec"]["serviceAccountName"] == account
