"""The Node authorizer (`--authorization-mode=Node,RBAC`) and the NodeRestriction admission plugin, as kubectl
1.37 sees them from a kubelet's identity (`system:node:<name>` in `system:nodes`, by `--as` or by a kubelet's
client certificate): what a node may read and write of ResourceSlices, ResourceClaims, pods, its Node and
its Lease, refused in upstream's words."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Http, Kubectl, kubectl_path
from tests.simcluster.samples import sample

AS_A = ("--as=system:node:node-a", "--as-group=system:nodes")
AS_B = ("--as=system:node:node-b", "--as-group=system:nodes")
CLAIM_SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}


def _slice(name: str, node: str) -> dict[str, Any]:
    obj = sample("resourceslices", name=name)
    obj["spec"]["nodeName"] = node
    obj["spec"]["pool"]["name"] = node
    return obj


def _pod(name: str, node: str | None, **spec: Any) -> dict[str, Any]:
    body = sample("pods", name=name, namespace="default")
    body["spec"].update(spec)
    if node:
        body["spec"]["nodeName"] = node
    return body


@pytest.fixture
def nodes(cluster: SimCluster) -> SimCluster:
    """Nodes node-a and node-b, each with a ResourceSlice and a Lease; a pod on node-a using a claim of its
    own, one generated from a template, and an extended-resource claim; a pod on node-b with its own claim."""
    store = cluster.store
    for node in ("node-a", "node-b"):
        store.create("nodes", sample("nodes", name=node, labels={"kubernetes.io/hostname": node}))
        store.create("resourceslices", _slice(f"{node}-gpu", node))
        store.create("leases", {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                "metadata": {"name": node, "namespace": "kube-node-lease"},
                                "spec": {"holderIdentity": node}})  # fmt: skip
    for claim in ("shared", "trainer-gpu-x7k2p", "trainer-extended-resources-q9z4n", "other"):
        store.create("resourceclaims", {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                        "metadata": {"name": claim, "namespace": "default"}, "spec": CLAIM_SPEC})  # fmt: skip
    trainer = store.create("pods", _pod("trainer", "node-a", resourceClaims=[
        {"name": "shared", "resourceClaimName": "shared"},
        {"name": "gpu", "resourceClaimTemplateName": "gpu-template"},
    ]))  # fmt: skip
    trainer["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "trainer-gpu-x7k2p"}]
    trainer["status"]["extendedResourceClaimStatus"] = {
        "resourceClaimName": "trainer-extended-resources-q9z4n",
        "requestMappings": [{"containerName": "main", "resourceName": "example.com/gpu",
                             "requestName": "container-0-request-0"}],
    }  # fmt: skip
    store.update("pods", trainer, subresource="status")
    store.create(
        "pods", _pod("elsewhere", "node-b", resourceClaims=[{"name": "c", "resourceClaimName": "other"}])
    )
    return cluster


def _out(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def _err(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result.stdout
    return result.stderr.strip()


def test_it_lets_a_node_list_and_watch_resource_slices_only_for_its_own_node(
    nodes: SimCluster, kubectl: Kubectl
) -> None:
    own = _out(
        kubectl(*AS_A, "get", "resourceslices", "--field-selector", "spec.nodeName=node-a", "-o", "name")
    )
    assert own == "resourceslice.resource.k8s.io/node-a-gpu\n"
    assert _err(kubectl(*AS_A, "get", "resourceslices")) == (
        'Error from server (Forbidden): resourceslices.resource.k8s.io is forbidden: User "system:node:node-a" '
        'cannot list resource "resourceslices" in API group "resource.k8s.io" at the cluster scope: '
        "can only list/watch/deletecollection resourceslices with nodeName field selector"
    )
    refused = _err(kubectl(*AS_A, "get", "resourceslices", "--field-selector", "spec.nodeName=node-b"))
    assert refused.endswith(
        "can only list/watch/deletecollection resourceslices with nodeName field selector"
    )
    assert (
        _out(kubectl(*AS_A, "get", "resourceslice", "node-a-gpu", "-o", "name"))
        == "resourceslice.resource.k8s.io/node-a-gpu\n"
    )
    assert _err(kubectl(*AS_A, "get", "resourceslice", "node-b-gpu")) == (
        'Error from server (Forbidden): resourceslices.resource.k8s.io "node-b-gpu" is forbidden: User '
        '"system:node:node-a" cannot get resource "resourceslices" in API group "resource.k8s.io" at the cluster '
        "scope: no relationship found between node 'node-a' and this object"
    )
    # a watch narrowed to the node is let through and streams its slices
    watch = kubectl(*AS_A, "get", "resourceslices", "--field-selector", "spec.nodeName=node-a", "--watch",
                    "--request-timeout=2s", "-o", "name")  # fmt: skip
    assert watch.stdout == "resourceslice.resource.k8s.io/node-a-gpu\n" and "Forbidden" not in watch.stderr


def test_it_answers_auth_can_i_for_a_node_as_the_node_authorizer_does(
    nodes: SimCluster, kubectl: Kubectl
) -> None:
    no = kubectl(*AS_A, "auth", "can-i", "list", "resourceslices")
    assert (no.returncode, no.stdout) == (
        1,
        "no - can only list/watch/deletecollection resourceslices with nodeName field selector\n",
    )
    assert _out(kubectl(*AS_A, "auth", "can-i", "get", "resourceslices/node-a-gpu")) == "yes\n"
    assert kubectl(*AS_A, "auth", "can-i", "get", "resourceslices/node-b-gpu").stdout == (
        "no - no relationship found between node 'node-a' and this object\n"
    )
    assert _out(kubectl(*AS_A, "auth", "can-i", "create", "resourceslices")) == "yes\n"
    assert _out(kubectl(*AS_A, "auth", "can-i", "get", "resourceclaims/trainer-gpu-x7k2p")) == "yes\n"
    assert kubectl(*AS_B, "auth", "can-i", "get", "resourceclaims/shared").stdout == (
        "no - no relationship found between node 'node-b' and this object\n"
    )
    assert kubectl(*AS_A, "auth", "can-i", "list", "nodes").stdout == (
        "no - node 'node-a' cannot read all nodes, only its own Node object\n"
    )
    assert (
        _out(kubectl(*AS_A, "auth", "can-i", "update", "leases/node-a", "-n", "kube-node-lease")) == "yes\n"
    )
    listed = kubectl(*AS_A, "auth", "can-i", "--list")
    assert listed.returncode == 0
    assert (
        "Warning: the list may be incomplete: node authorizer does not support user rule resolution"
        in listed.stderr
    )


def test_it_lets_a_node_get_the_claims_of_the_pods_bound_to_it_and_no_others(
    nodes: SimCluster, kubectl: Kubectl
) -> None:
    for claim in ("shared", "trainer-gpu-x7k2p", "trainer-extended-resources-q9z4n"):
        assert (
            _out(kubectl(*AS_A, "get", "resourceclaim", claim, "-o", "name"))
            == f"resourceclaim.resource.k8s.io/{claim}\n"
        )
    assert _err(kubectl(*AS_A, "get", "resourceclaim", "other")) == (
        'Error from server (Forbidden): resourceclaims.resource.k8s.io "other" is forbidden: User '
        '"system:node:node-a" cannot get resource "resourceclaims" in API group "resource.k8s.io" in the namespace '
        "\"default\": no relationship found between node 'node-a' and this object"
    )
    assert _err(kubectl(*AS_A, "get", "resourceclaims")).endswith(
        'in the namespace "default": can only get individual resources of this type'
    )
    assert (
        _out(kubectl(*AS_B, "get", "resourceclaim", "other", "-o", "name"))
        == "resourceclaim.resource.k8s.io/other\n"
    )


def test_it_keeps_a_kubelet_to_the_resource_slices_of_its_own_node(
    nodes: SimCluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubelet = nodes.user_kubeconfig(
        tmp_path / "kubelet-a", user="system:node:node-a", groups=("system:nodes",)
    )

    def as_kubelet(*args: str, input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(kubectl_path()), "--kubeconfig", str(kubelet), "--cache-dir", str(tmp_path / "c"), *args],
                              input=input_text, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "HOME": str(tmp_path)})  # fmt: skip

    for_b = json.dumps(_slice("stolen", "node-b"))
    assert _err(as_kubelet("create", "-f", "-", input_text=for_b)) == (
        'Error from server (Forbidden): error when creating "STDIN": resourceslices.resource.k8s.io "stolen" is '
        "forbidden: can only create ResourceSlice with the same NodeName as the requesting node"
    )
    assert _out(as_kubelet("create", "-f", "-", input_text=json.dumps(_slice("fpga", "node-a")))) == (
        "resourceslice.resource.k8s.io/fpga created\n"
    )
    assert (
        _out(as_kubelet("label", "resourceslice", "fpga", "health=ok"))
        == "resourceslice.resource.k8s.io/fpga labeled\n"
    )
    assert _err(as_kubelet("delete", "resourceslice", "node-b-gpu")).endswith(
        "no relationship found between node 'node-a' and this object"
    )
    assert (
        _out(as_kubelet("delete", "resourceslice", "fpga"))
        == 'resourceslice.resource.k8s.io "fpga" deleted\n'
    )
    assert {s["metadata"]["name"] for s in nodes.store.list("resourceslices")} == {"node-a-gpu", "node-b-gpu"}


def test_it_deletes_a_collection_of_slices_only_for_the_nodes_own_selector(
    nodes: SimCluster, tmp_path: Path
) -> None:
    http = _http_as(nodes, tmp_path, "node-a")
    path = "/apis/resource.k8s.io/v1/resourceslices"
    status, _, body = http.request("DELETE", path)
    assert (status, body["message"]) == (403, (
        'resourceslices.resource.k8s.io is forbidden: User "system:node:node-a" cannot deletecollection resource '
        '"resourceslices" in API group "resource.k8s.io" at the cluster scope: can only list/watch/deletecollection '
        "resourceslices with nodeName field selector"
    ))  # fmt: skip
    status, _, body = http.request("DELETE", path + "?fieldSelector=spec.nodeName%3Dnode-a")
    assert status == 200 and [i["metadata"]["name"] for i in body["items"]] == ["node-a-gpu"]
    assert [s["metadata"]["name"] for s in nodes.store.list("resourceslices")] == ["node-b-gpu"]


def test_it_keeps_a_node_to_its_own_node_object_and_lease(nodes: SimCluster, kubectl: Kubectl) -> None:
    assert _out(kubectl(*AS_A, "get", "node", "node-a", "-o", "name")) == "node/node-a\n"
    assert _err(kubectl(*AS_A, "get", "nodes")) == (
        'Error from server (Forbidden): nodes is forbidden: User "system:node:node-a" cannot list resource "nodes" '
        "in API group \"\" at the cluster scope: node 'node-a' cannot read all nodes, only its own Node object"
    )
    assert _out(kubectl(*AS_A, "label", "node", "node-a", "example.com/rack=r1")) == "node/node-a labeled\n"
    assert _err(kubectl(*AS_A, "label", "node", "node-a", "node-role.kubernetes.io/gpu=")) == (
        'Error from server (Forbidden): nodes "node-a" is forbidden: is not allowed to modify labels: '
        "node-role.kubernetes.io/gpu"
    )
    assert _err(kubectl(*AS_A, "taint", "node", "node-a", "example.com/bad=x:NoSchedule")) == (
        'Error from server (Forbidden): nodes "node-a" is forbidden: node "node-a" is not allowed to modify taints'
    )
    assert _out(kubectl(*AS_A, "annotate", "lease", "node-a", "-n", "kube-node-lease", "renewed=yes")) == (
        "lease.coordination.k8s.io/node-a annotated\n"
    )
    assert _err(kubectl(*AS_A, "get", "lease", "node-b", "-n", "kube-node-lease")) == (
        'Error from server (Forbidden): leases.coordination.k8s.io "node-b" is forbidden: User "system:node:node-a" '
        'cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "kube-node-lease": '
        "can only access node lease with the same name as the requesting node"
    )
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": "node-b", "namespace": "kube-node-lease"}}  # fmt: skip
    nodes.store.delete("leases", "node-b", namespace="kube-node-lease")
    assert _err(kubectl(*AS_A, "create", "-f", "-", input_text=json.dumps(lease))) == (
        'Error from server (Forbidden): error when creating "STDIN": leases.coordination.k8s.io "node-b" is '
        "forbidden: can only access node lease with the same name as the requesting node"
    )


def test_it_lets_a_node_read_and_report_on_its_own_pods_only(
    nodes: SimCluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    own = _out(kubectl(*AS_A, "get", "pods", "--field-selector", "spec.nodeName=node-a", "-o", "name"))
    assert own == "pod/trainer\n"
    assert _err(kubectl(*AS_A, "get", "pods")).endswith(
        "can only list/watch pods with spec.nodeName field selector"
    )
    assert _err(kubectl(*AS_A, "get", "pod", "elsewhere")).endswith(
        "no relationship found between node 'node-a' and this object"
    )
    http = _http_as(nodes, tmp_path, "node-a")
    status, _, body = http.request(
        "PATCH", "/api/v1/namespaces/default/pods/elsewhere/status", {"status": {"message": "mine now"}},
        content_type="application/merge-patch+json",
    )  # fmt: skip
    assert (status, body["message"]) == (403, 'pods "elsewhere" is forbidden: node "node-a" can only update pod '
                                              "status for pods with spec.nodeName set to itself")  # fmt: skip
    status, _, _ = http.request(
        "PATCH", "/api/v1/namespaces/default/pods/trainer/status", {"status": {"message": "ok"}},
        content_type="application/merge-patch+json",
    )  # fmt: skip
    assert status == 200
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "elsewhere"}}
    status, _, body = http.request("POST", "/api/v1/namespaces/default/pods/elsewhere/eviction", eviction)
    assert (status, body["message"]) == (
        403,
        'pods "elsewhere" is forbidden: node node-a can only evict pods with spec.nodeName set to itself',
    )
    status, _, body = http.request("DELETE", "/api/v1/namespaces/default/pods/elsewhere")
    assert (status, body["message"]) == (
        403,
        'pods "elsewhere" is forbidden: node "node-a" can only delete pods with spec.nodeName set to itself',
    )


def test_it_reads_a_field_selector_in_a_subject_access_review(nodes: SimCluster, http: Http) -> None:
    def review(selector: dict[str, Any]) -> dict[str, Any]:
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                "spec": {"user": "system:node:node-a", "groups": ["system:nodes", "system:authenticated"],
                         "resourceAttributes": {"verb": "watch", "group": "resource.k8s.io",
                                                "resource": "resourceslices", "fieldSelector": selector}}}  # fmt: skip
        status, _, answer = http.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body)
        assert status == 201
        return dict(answer["status"])

    assert review({"rawSelector": "spec.nodeName=node-a"}) == {"allowed": True}
    assert review({"requirements": [{"key": "spec.nodeName", "operator": "In", "values": ["node-a"]}]}) == {
        "allowed": True
    }
    assert review({"rawSelector": "spec.nodeName!=node-b"}) == {
        "allowed": False, "reason": "can only list/watch/deletecollection resourceslices with nodeName field selector",
    }  # fmt: skip


def _http_as(cluster: SimCluster, tmp_path: Path, node: str) -> Http:
    """HTTPS with a kubelet's client certificate: CN system:node:<node>, O system:nodes."""
    assert cluster.pki is not None
    cert, key = cluster.pki.issue_client_cert(f"system:node:{node}", ("system:nodes",))
    (tmp_path / f"{node}.crt").write_bytes(cert)
    (tmp_path / f"{node}.key").write_bytes(key)
    context = cluster.ssl_context(admin=False)
    assert context is not None
    context.load_cert_chain(tmp_path / f"{node}.crt", tmp_path / f"{node}.key")
    return Http(cluster.url, context)


def test_it_lets_a_node_create_only_mirror_pods_of_its_own(nodes: SimCluster, tmp_path: Path) -> None:
    http = _http_as(nodes, tmp_path, "node-a")
    node_uid = nodes.store.get("nodes", "node-a")["metadata"]["uid"]
    static = _pod("etcd-node-a", "node-a")
    static["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "a1b2"}
    static["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": "node-a",
                                              "uid": node_uid, "controller": True}]  # fmt: skip
    status, _, created = http.request("POST", "/api/v1/namespaces/default/pods", static)
    assert status == 201, created
    assert "serviceAccountName" not in created["spec"], "the ServiceAccount plugin leaves mirror pods alone"
    status, _, body = http.request("POST", "/api/v1/namespaces/default/pods", _pod("sneaky", "node-a"))
    assert (status, body["message"]) == (403, 'pods "sneaky" is forbidden: pod does not have '
                                              '"kubernetes.io/config.mirror" annotation, node "node-a" can only create '
                                              "mirror pods")  # fmt: skip


def test_it_gives_a_node_tokens_only_for_pods_running_on_it(nodes: SimCluster, tmp_path: Path) -> None:
    http = _http_as(nodes, tmp_path, "node-a")
    path = "/api/v1/namespaces/default/serviceaccounts/default/token"

    def request(pod: str | None) -> tuple[int, Any]:
        spec: dict[str, Any] = {"audiences": []}
        if pod:
            uid = nodes.store.get("pods", pod, namespace="default")["metadata"]["uid"]
            spec["boundObjectRef"] = {"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": uid}
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}
        status, _, answer = http.request("POST", path, body)
        return status, answer

    status, answer = request("trainer")
    assert status == 201 and answer["status"]["token"]
    assert request("elsewhere")[1]["message"] == (
        'serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node'
    )
    assert (
        request(None)[1]["message"]
        == 'serviceaccounts "default" is forbidden: node requested token not bound to a pod'
    )
