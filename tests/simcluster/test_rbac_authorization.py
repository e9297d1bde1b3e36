"""RBAC on every request: Roles and ClusterRoles, their bindings, verbs (list/watch/get apart), resourceNames,
subresources, nonResourceURLs, the 403 Status as kube words it, the access reviews, and impersonation
(classic and constrained)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Http

RBAC = "rbac.authorization.k8s.io"


def _role(
    api: client.ApiClient, name: str, rules: list[dict[str, Any]], namespace: str | None = None
) -> None:
    body = {"apiVersion": f"{RBAC}/v1", "kind": "Role" if namespace else "ClusterRole",
            "metadata": {"name": name}, "rules": rules}  # fmt: skip
    rbac = client.RbacAuthorizationV1Api(api)
    if namespace:
        rbac.create_namespaced_role(namespace, body)
    else:
        rbac.create_cluster_role(body)


def _bind(api: client.ApiClient, name: str, role: str, subjects: list[dict[str, str]], *, namespace: str | None = None,
          kind: str = "ClusterRole") -> None:  # fmt: skip
    body = {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding" if namespace else "ClusterRoleBinding",
            "metadata": {"name": name}, "roleRef": {"apiGroup": RBAC, "kind": kind, "name": role},
            "subjects": subjects}  # fmt: skip
    rbac = client.RbacAuthorizationV1Api(api)
    if namespace:
        rbac.create_namespaced_role_binding(namespace, body)
    else:
        rbac.create_cluster_role_binding(body)


def _user(name: str) -> dict[str, str]:
    return {"apiGroup": RBAC, "kind": "User", "name": name}


@pytest.fixture
def world(cluster: SimCluster, api: client.ApiClient) -> SimCluster:
    core = client.CoreV1Api(api)
    for ns in ("ml", "web"):
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
    _role(api, "pod-reader", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}], "ml")
    _bind(api, "alice-reads-pods", "pod-reader", [_user("alice")], namespace="ml", kind="Role")
    return cluster


@pytest.fixture
def alice(world: SimCluster, tmp_path: Path) -> Iterator[Http]:
    yield _http_as(world, tmp_path, "alice")


def _http_as(cluster: SimCluster, tmp_path: Path, user: str, groups: tuple[str, ...] = ()) -> Http:
    assert cluster.pki is not None
    cert, key = cluster.pki.issue_client_cert(user, groups)
    (tmp_path / f"{user}.crt").write_bytes(cert)
    (tmp_path / f"{user}.key").write_bytes(key)
    context = cluster.ssl_context(admin=False)
    assert context is not None
    context.load_cert_chain(tmp_path / f"{user}.crt", tmp_path / f"{user}.key")
    return Http(cluster.url, context)


def _forbidden(message: str, *, kind: str, name: str | None = None, group: str = "") -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    details["kind"] = kind
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": "Forbidden", "details": details, "code": 403}  # fmt: skip


def test_it_allows_what_a_role_binding_grants_in_its_namespace(alice: Http) -> None:
    assert alice.get("/api/v1/namespaces/ml/pods")[0] == 200


def test_it_answers_403_in_kubes_words_in_another_namespace(alice: Http) -> None:
    status, _, body = alice.get("/api/v1/namespaces/web/pods")
    assert status == 403
    assert body == _forbidden(
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "web"',
        kind="pods",
    )


def test_it_names_the_cluster_scope_and_the_object_in_the_403(alice: Http) -> None:
    status, _, body = alice.get("/api/v1/pods")
    assert status == 403 and body["message"] == (
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope'
    )
    status, _, body = alice.get("/apis/resource.k8s.io/v1/deviceclasses/gpu")
    assert status == 403 and body == _forbidden(
        'deviceclasses.resource.k8s.io "gpu" is forbidden: User "alice" cannot get resource "deviceclasses" in API '
        'group "resource.k8s.io" at the cluster scope', kind="deviceclasses", name="gpu", group="resource.k8s.io",
    )  # fmt: skip


def test_it_treats_watch_as_a_verb_of_its_own(alice: Http) -> None:
    status, _, body = alice.get("/api/v1/namespaces/ml/pods?watch=true&timeoutSeconds=1")
    assert status == 403
    assert 'cannot watch resource "pods"' in body["message"]


def test_it_authorizes_subresources_apart_from_their_resource(alice: Http) -> None:
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p", "namespace": "ml"}}
    status, _, body = alice.request("POST", "/api/v1/namespaces/ml/pods/p/eviction", eviction)
    assert status == 403 and body["message"] == (
        'pods "p" is forbidden: User "alice" cannot create resource "pods/eviction" in API group "" in the namespace "ml"'
    )


def test_it_honours_resource_names(world: SimCluster, api: client.ApiClient, tmp_path: Path) -> None:
    _role(api, "one-lease", [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                              "resourceNames": ["mirror"], "verbs": ["get", "list"]}], "ml")  # fmt: skip
    _bind(api, "bob-one-lease", "one-lease", [_user("bob")], namespace="ml", kind="Role")
    client.CoordinationV1Api(api).create_namespaced_lease("ml", {"metadata": {"name": "mirror"}, "spec": {}})
    bob = _http_as(world, tmp_path, "bob")
    assert bob.get("/apis/coordination.k8s.io/v1/namespaces/ml/leases/mirror")[0] == 200
    assert bob.get("/apis/coordination.k8s.io/v1/namespaces/ml/leases/other")[0] == 403
    assert bob.get("/apis/coordination.k8s.io/v1/namespaces/ml/leases")[0] == 403, "a list names no object"
    assert (
        bob.get("/apis/coordination.k8s.io/v1/namespaces/ml/leases?fieldSelector=metadata.name%3Dmirror")[0]
        == 200
    )


def test_it_limits_a_cluster_role_bound_by_a_role_binding_to_that_namespace(
    world: SimCluster, api: client.ApiClient, tmp_path: Path
) -> None:
    _bind(api, "carol-views-web", "view", [_user("carol")], namespace="web")
    carol = _http_as(world, tmp_path, "carol")
    assert carol.get("/api/v1/namespaces/web/pods")[0] == 200
    assert carol.get("/api/v1/namespaces/ml/pods")[0] == 403
    assert carol.get("/api/v1/pods")[0] == 403


def test_it_grants_groups_from_the_certificate_organization(world: SimCluster, api: client.ApiClient,
                                                            tmp_path: Path) -> None:  # fmt: skip
    _bind(api, "ops-view", "view", [{"apiGroup": RBAC, "kind": "Group", "name": "ops"}])
    dave = _http_as(world, tmp_path, "dave", ("ops",))
    assert dave.get("/api/v1/pods")[0] == 200
    assert _http_as(world, tmp_path, "erin").get("/api/v1/pods")[0] == 403


def test_it_guards_non_resource_urls_and_the_fault_hooks(alice: Http) -> None:
    assert alice.get("/apis")[0] == 200, "system:discovery is bound to system:authenticated"
    status, _, body = alice.request("POST", "/_simcluster/compact")
    assert status == 403
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": 'forbidden: User "alice" cannot post path "/_simcluster/compact"', "reason": "Forbidden",
                    "details": {}, "code": 403}  # fmt: skip


def test_it_answers_access_reviews_for_oneself_and_for_others(alice: Http, api: client.ApiClient) -> None:
    ssar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"namespace": "ml", "verb": "list", "resource": "pods"}}}  # fmt: skip
    status, _, body = alice.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ssar)
    assert status == 201 and body["status"]["allowed"] is True
    assert (
        body["status"]["reason"]
        == 'RBAC: allowed by RoleBinding "alice-reads-pods/ml" of Role "pod-reader" to User "alice"'
    )
    sar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
           "spec": {"user": "alice", "resourceAttributes": {"namespace": "web", "verb": "list", "resource": "pods"}}}  # fmt: skip
    status, _, body = alice.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar)
    assert status == 403, "asking about others needs create on subjectaccessreviews"
    answer = client.AuthorizationV1Api(api).create_subject_access_review(sar)
    assert answer.status.allowed is False


def test_it_lists_the_rules_that_apply_in_a_namespace(alice: Http) -> None:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": "ml"},
    }
    status, _, body = alice.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", review)
    assert status == 201 and body["status"]["incomplete"] is False
    assert {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]} in body["status"][
        "resourceRules"
    ]
    status, _, body = alice.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                                    {**review, "spec": {"namespace": "web"}})  # fmt: skip
    assert {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]} not in body["status"][
        "resourceRules"
    ]


def test_it_says_which_bound_role_is_missing(
    world: SimCluster, api: client.ApiClient, tmp_path: Path
) -> None:
    _bind(api, "frank-ghost", "ghost-role", [_user("frank")])
    status, _, body = _http_as(world, tmp_path, "frank").get("/api/v1/pods")
    assert status == 403
    assert body["message"].endswith(': RBAC: clusterrole.rbac.authorization.k8s.io "ghost-role" not found')


def test_it_re_reads_rbac_as_soon_as_a_binding_goes(alice: Http, api: client.ApiClient) -> None:
    assert alice.get("/api/v1/namespaces/ml/pods")[0] == 200
    client.RbacAuthorizationV1Api(api).delete_namespaced_role_binding("alice-reads-pods", "ml")
    assert alice.get("/api/v1/namespaces/ml/pods")[0] == 403


# --------------------------------------------------------------------------------------------- impersonation


def test_it_impersonates_with_the_classic_verb(
    world: SimCluster, api: client.ApiClient, tmp_path: Path
) -> None:
    _role(api, "impersonator", [{"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"],
                                 "resourceNames": ["alice"]}])  # fmt: skip
    _bind(api, "dradash-impersonates", "impersonator", [_user("dradash")])
    dradash = _http_as(world, tmp_path, "dradash")
    assert dradash.get("/api/v1/namespaces/ml/pods")[0] == 403
    assert dradash.get("/api/v1/namespaces/ml/pods", headers={"Impersonate-User": "alice"})[0] == 200
    status, _, body = dradash.get("/api/v1/namespaces/ml/pods", headers={"Impersonate-User": "bob"})
    assert status == 403
    assert body == _forbidden('users "bob" is forbidden: User "dradash" cannot impersonate resource "users" in API '
                              'group "" at the cluster scope', kind="users", name="bob")  # fmt: skip
    status, _, body = dradash.get("/api/v1/namespaces/ml/pods", headers={"Impersonate-User": "alice",
                                                                         "Impersonate-Group": "system:masters"})  # fmt: skip
    assert status == 403 and body["message"].startswith(
        'groups "system:masters" is forbidden: User "dradash" cannot impersonate'
    )


def test_it_reports_the_impersonated_user_in_a_self_subject_review(
    cluster: SimCluster, api: client.ApiClient
) -> None:
    http = Http(cluster.url, cluster.ssl_context())
    headers = {"Impersonate-User": "system:serviceaccount:ml:bot", "Impersonate-Extra-Scopes": "view"}
    status, _, body = http.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                   {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
                                   headers=headers)  # fmt: skip
    assert status == 201
    assert body["status"]["userInfo"] == {
        "username": "system:serviceaccount:ml:bot",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:ml", "system:authenticated"],
        "extra": {"scopes": ["view"]},
    }


def _constrained(api: client.ApiClient, actions: list[dict[str, Any]]) -> None:
    """The identity rules the Helm chart renders in impersonation.mode=constrained, plus `actions`."""
    _role(api, "dradash-constrained", [
        {"apiGroups": ["authentication.k8s.io"], "resources": ["users"], "verbs": ["impersonate:user-info"]},
        {"apiGroups": ["authentication.k8s.io"], "resources": ["groups"], "verbs": ["impersonate:user-info"]},
        *actions,
    ])  # fmt: skip
    _bind(api, "dradash-constrained", "dradash-constrained", [_user("dradash")])


def test_it_impersonates_with_constrained_verbs_only_for_the_granted_action(
    world: SimCluster, api: client.ApiClient, tmp_path: Path
) -> None:
    _constrained(api, [{"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews"],
                        "verbs": ["impersonate-on:user-info:create"]}])  # fmt: skip
    dradash = _http_as(world, tmp_path, "dradash")
    ssar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"namespace": "ml", "verb": "list", "resource": "pods"}}}  # fmt: skip
    status, _, body = dradash.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ssar,
                                      headers={"Impersonate-User": "alice", "Impersonate-Group": "team"})  # fmt: skip
    assert status == 201 and body["status"]["allowed"] is True, "the review ran as alice"
    # alice may list pods in ml, but the impersonator was granted only SelfSubjectAccessReviews
    status, _, body = dradash.get("/api/v1/namespaces/ml/pods", headers={"Impersonate-User": "alice"})
    assert status == 403
    assert body["message"] == ('users "alice" is forbidden: User "dradash" cannot impersonate resource "users" in '
                               'API group "" at the cluster scope')  # fmt: skip


def test_it_checks_constrained_impersonation_of_a_service_account_in_its_namespace(
    world: SimCluster, api: client.ApiClient, tmp_path: Path
) -> None:
    _role(api, "as-bot", [{"apiGroups": ["authentication.k8s.io"], "resources": ["serviceaccounts"],
                           "resourceNames": ["bot"], "verbs": ["impersonate:serviceaccount"]}], "ml")  # fmt: skip
    _bind(api, "as-bot", "as-bot", [_user("dradash")], namespace="ml", kind="Role")
    _role(
        api,
        "bot-lists",
        [{"apiGroups": [""], "resources": ["pods"], "verbs": ["impersonate-on:serviceaccount:list"]}],
    )
    _bind(api, "bot-lists", "bot-lists", [_user("dradash")])
    _bind(
        api,
        "bot-views",
        "view",
        [{"kind": "ServiceAccount", "name": "bot", "namespace": "ml"}],
        namespace="ml",
    )
    dradash = _http_as(world, tmp_path, "dradash")
    assert (
        dradash.get(
            "/api/v1/namespaces/ml/pods", headers={"Impersonate-User": "system:serviceaccount:ml:bot"}
        )[0]
        == 200
    )
    status, _, body = dradash.get(
        "/api/v1/namespaces/ml/pods", headers={"Impersonate-User": "system:serviceaccount:ml:other"}
    )
    assert status == 403 and body["message"].startswith('serviceaccounts "other" is forbidden: User "dradash" cannot '
                                                        'impersonate resource "serviceaccounts" in API group ""')  # fmt: skip


def test_it_keeps_non_admins_out_of_the_rbac_objects(alice: Http) -> None:
    status, _, body = alice.get("/apis/rbac.authorization.k8s.io/v1/clusterroles")
    assert status == 403
    assert json.dumps(body).count("clusterroles.rbac.authorization.k8s.io is forbidden") == 1


def test_it_refuses_to_change_a_bindings_role(world: SimCluster, api: client.ApiClient) -> None:
    with pytest.raises(client.ApiException) as caught:
        client.RbacAuthorizationV1Api(api).patch_namespaced_role_binding(
            "alice-reads-pods", "ml", {"roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "admin"}}
        )
    assert caught.value.status == 422
    assert json.loads(caught.value.body)["details"]["causes"][0]["field"] == "roleRef"


def test_it_lets_a_node_agent_impersonate_only_its_own_node(world: SimCluster, api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_service_account(
        "ml", client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="agent"))
    )
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "agent-0"},
           "spec": {"nodeName": "node-1", "serviceAccountName": "agent", "containers": [{"name": "c", "image": "x"}]}}  # fmt: skip
    created = core.create_namespaced_pod("ml", pod)
    bound = client.V1BoundObjectReference(
        kind="Pod", api_version="v1", name="agent-0", uid=created.metadata.uid
    )
    request = client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[], bound_object_ref=bound)
    )
    token = core.create_namespaced_service_account_token("agent", "ml", request).status.token
    _role(api, "node-agent", [
        {"apiGroups": ["authentication.k8s.io"], "resources": ["nodes"], "verbs": ["impersonate:associated-node"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["impersonate-on:associated-node:list"]},
    ])  # fmt: skip
    _bind(api, "node-agent", "node-agent", [{"kind": "ServiceAccount", "name": "agent", "namespace": "ml"}])
    _bind(api, "nodes-read-pods", "view", [{"apiGroup": RBAC, "kind": "Group", "name": "system:nodes"}])
    http = Http(world.url, world.ssl_context(admin=False))
    headers = {"Authorization": f"Bearer {token}", "Impersonate-Group": "system:nodes"}
    own = http.get("/api/v1/pods", headers={**headers, "Impersonate-User": "system:node:node-1"})
    assert own[0] == 403, "the group needs impersonate:user-info too"
    _role(api, "node-agent-groups", [{"apiGroups": ["authentication.k8s.io"], "resources": ["groups"],
                                      "resourceNames": ["system:nodes"], "verbs": ["impersonate:user-info"]}])  # fmt: skip
    _bind(
        api,
        "node-agent-groups",
        "node-agent-groups",
        [{"kind": "ServiceAccount", "name": "agent", "namespace": "ml"}],
    )
    assert http.get("/api/v1/pods", headers={**headers, "Impersonate-User": "system:node:node-1"})[0] == 200
    status, _, body = http.get("/api/v1/pods", headers={**headers, "Impersonate-User": "system:node:node-2"})
    assert status == 403 and body["message"].startswith('users "system:node:node-2" is forbidden')
    core.delete_namespaced_pod("agent-0", "ml", grace_period_seconds=0)
    status, _, _ = http.get("/api/v1/pods", headers={**headers, "Impersonate-User": "system:node:node-1"})
    assert status == 401, "a token bound to a pod ends with the pod"
