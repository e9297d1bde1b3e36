"""RBAC escalation prevention: a user writes Roles and bindings only with rights they hold, or with the
`escalate` / `bind` verbs, as upstream's policy-based RBAC storage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from simcluster.escalation import breakdown, compact_string, missing_rules
from simcluster.testing import SimCluster
from tests.simcluster.conftest import Http
from tests.simcluster.test_rbac_authorization import RBAC, _bind, _http_as, _role, _user

PODS_GET_LIST = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}


def role_body(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": {"name": name}, "rules": rules}


def binding_body(name: str, role: str, user: str, *, kind: str = "Role") -> dict[str, Any]:
    return {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": kind, "name": role}, "subjects": [_user(user)]}  # fmt: skip


@pytest.fixture
def bob(cluster: SimCluster, api: client.ApiClient, tmp_path: Path) -> Http:
    """bob may read pods and manage roles and role bindings in namespace ml, nothing else."""
    client.CoreV1Api(api).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="ml")))
    _role(api, "role-admin", [
        PODS_GET_LIST,
        {"apiGroups": [RBAC], "resources": ["roles", "rolebindings"], "verbs": ["create", "update", "patch", "get"]},
    ], "ml")  # fmt: skip
    _bind(api, "bob-role-admin", "role-admin", [_user("bob")], namespace="ml", kind="Role")
    _role(api, "secret-reader", [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}], "ml")
    return _http_as(cluster, tmp_path, "bob")


def test_a_user_may_create_a_role_with_rights_they_hold(bob: Http) -> None:
    status, _, body = bob.request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/ml/roles", role_body("reader", [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
    ]))  # fmt: skip
    assert status == 201, body


def test_a_role_granting_more_than_the_user_holds_is_refused_in_upstreams_words(bob: Http) -> None:
    status, _, body = bob.request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/ml/roles", role_body("grab", [
        {"apiGroups": [""], "resources": ["pods", "secrets"], "verbs": ["get", "delete"]},
    ]))  # fmt: skip

    assert status == 403
    assert body["reason"] == "Forbidden"
    assert body["message"] == (
        'roles.rbac.authorization.k8s.io "grab" is forbidden: user "bob" (groups=["system:authenticated"]) is '
        "attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}'
    )
    assert bob.get("/apis/rbac.authorization.k8s.io/v1/namespaces/ml/roles/grab")[0] == 404  # nothing written


def test_changing_a_roles_rules_is_checked_but_its_labels_are_not(bob: Http, api: client.ApiClient) -> None:
    assert (
        bob.request(
            "POST",
            "/apis/rbac.authorization.k8s.io/v1/namespaces/ml/roles",
            role_body("mine", [PODS_GET_LIST]),
        )[0]
        == 201
    )
    path = "/apis/rbac.authorization.k8s.io/v1/namespaces/ml/roles/mine"
    labelled = bob.request("PATCH", path, {"metadata": {"labels": {"team": "ml"}}},
                           content_type="application/merge-patch+json")  # fmt: skip
    assert labelled[0] == 200, labelled
    widened = bob.request("PATCH", path, {"rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]},
                          content_type="application/merge-patch+json")  # fmt: skip
    assert widened[0] == 403
    assert "not currently held" in widened[2]["message"]
    assert '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}' in widened[2]["message"]


def test_the_escalate_verb_lets_a_user_grant_what_they_do_not_hold(bob: Http, api: client.ApiClient) -> None:
    _role(api, "escalator", [{"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["escalate"]}], "ml")
    _bind(api, "bob-escalates", "escalator", [_user("bob")], namespace="ml", kind="Role")
    status, _, body = bob.request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/ml/roles", role_body("grab", [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
    ]))  # fmt: skip
    assert status == 201, body


def test_binding_a_role_needs_its_rights_or_the_bind_verb(bob: Http, api: client.ApiClient) -> None:
    bindings = "/apis/rbac.authorization.k8s.io/v1/namespaces/ml/rolebindings"
    status, _, body = bob.request("POST", bindings, binding_body("carol-secrets", "secret-reader", "carol"))
    assert status == 403
    assert body["message"].startswith(
        'rolebindings.rbac.authorization.k8s.io "carol-secrets" is forbidden: user "bob"'
    )
    assert body["message"].endswith('{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}')

    missing = bob.request("POST", bindings, binding_body("carol-ghost", "no-such-role", "carol"))
    assert missing[0] == 404
    assert missing[2]["message"] == 'roles.rbac.authorization.k8s.io "no-such-role" not found'

    _role(api, "binder", [{"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["bind"],
                           "resourceNames": ["secret-reader"]}], "ml")  # fmt: skip
    _bind(api, "bob-binds", "binder", [_user("bob")], namespace="ml", kind="Role")
    assert bob.request("POST", bindings, binding_body("carol-secrets", "secret-reader", "carol"))[0] == 201


def test_cluster_admins_and_in_process_writers_are_not_checked(
    cluster: SimCluster, api: client.ApiClient
) -> None:
    _role(api, "anything", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}])  # system:masters
    cluster.store.create("clusterroles", {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole",
                                          "metadata": {"name": "from-a-controller"}, "rules": [PODS_GET_LIST]})  # fmt: skip
    assert cluster.store.get("clusterroles", "anything")["rules"][0]["verbs"] == ["*"]


def test_covers_follows_upstream_for_wildcards_subresources_and_names() -> None:
    owner = [
        {"apiGroups": [""], "resources": ["pods/*"], "verbs": ["get"]},
        {"apiGroups": ["apps"], "resources": ["*"], "verbs": ["*"]},
        {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"], "verbs": ["get"]},
        {"nonResourceURLs": ["/healthz/*"], "verbs": ["get"]},
    ]
    assert missing_rules(owner, [{"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]}]) == []
    assert (
        missing_rules(owner, [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["delete"]}])
        == []
    )
    assert missing_rules(owner, [{"nonResourceURLs": ["/healthz/etcd"], "verbs": ["get"]}]) == []
    # a named grant does not cover every name
    assert missing_rules(owner, [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]) == [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}
    ]
    assert len(breakdown({"apiGroups": ["", "apps"], "resources": ["a", "b"], "verbs": ["get", "list"]})) == 8
    assert (
        compact_string({"nonResourceURLs": ["/x"], "verbs": ["get"]})
        == '{NonResourceURLs:["/x"], Verbs:["get"]}'
    )


def test_kubectl_create_role_as_a_user_without_the_rights_prints_the_missing_permissions(
    bob: Http, kubectl: Any
) -> None:
    refused = kubectl("create", "role", "grab", "-n", "ml", "--verb=get", "--resource=secrets", "--as", "bob")
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): roles.rbac.authorization.k8s.io "grab" is forbidden: user "bob" '
        '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'
    )
    created = kubectl("create", "role", "reader", "-n", "ml", "--verb=get", "--resource=pods", "--as", "bob")
    assert created.returncode == 0, created.stderr


def test_an_aggregation_rule_takes_cluster_admin_privileges(
    cluster: SimCluster, api: client.ApiClient, tmp_path: Path
) -> None:
    # carol may write ClusterRoles and holds what the one she writes grants, not * on *.*
    _role(api, "role-writer", [
        {"apiGroups": [RBAC], "resources": ["clusterroles"], "verbs": ["create", "update", "patch", "get"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
    ])  # fmt: skip
    _bind(api, "carol-role-writer", "role-writer", [_user("carol")])
    carol = _http_as(cluster, tmp_path, "carol")
    body = {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": "gatherer"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}}]}}  # fmt: skip
    status, _, answer = carol.request("POST", f"/apis/{RBAC}/v1/clusterroles", body)
    assert (status, answer["message"]) == (
        403,
        'clusterroles.rbac.authorization.k8s.io "gatherer" is forbidden: '
        "must have cluster-admin privileges to use the aggregationRule",
    )
    plain = {
        **body,
        "metadata": {"name": "plain"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
    }
    del plain["aggregationRule"]
    assert carol.request("POST", f"/apis/{RBAC}/v1/clusterroles", plain)[0] == 201
    status, _, answer = carol.request(
        "PATCH", f"/apis/{RBAC}/v1/clusterroles/plain", {"aggregationRule": body["aggregationRule"]},
        content_type="application/merge-patch+json",
    )  # fmt: skip
    assert status == 403, answer
