"""kubectl 1.37.1 against simcluster's authentication and RBAC: `auth can-i [--list] [--as]`, `auth whoami`,
`create token`, and what kubectl says for 401 and 403."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Kubectl, kubectl_path

SA = "system:serviceaccount:default:default"


def _out(result: object) -> str:
    assert getattr(result, "returncode", 1) == 0, getattr(result, "stderr", "")
    return str(getattr(result, "stdout", ""))


def _as(cluster: SimCluster, kubectl: Kubectl, tmp_path: Path, kubeconfig: Path, *args: str) -> object:
    import os
    import subprocess

    return subprocess.run(
        [str(kubectl_path()), "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path / "other-cache"), *args],
        capture_output=True, text=True, timeout=60, env={**os.environ, "HOME": str(tmp_path)},
    )  # fmt: skip


def test_it_answers_auth_can_i_for_the_admin_and_for_a_service_account(kubectl: Kubectl) -> None:
    assert _out(kubectl("auth", "can-i", "delete", "nodes")) == "yes\n"
    denied = kubectl("auth", "can-i", "list", "pods", "--as", SA)
    assert (denied.returncode, denied.stdout) == (1, "no\n")
    assert _out(kubectl("auth", "can-i", "create", "selfsubjectaccessreviews", "--as", SA)) == "yes\n"


def test_it_lists_the_rules_like_auth_can_i_list_on_a_real_cluster(kubectl: Kubectl) -> None:
    admin = _out(kubectl("auth", "can-i", "--list")).splitlines()
    assert admin[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert admin[1].split() == ["*.*", "[]", "[]", "[*]"]
    assert admin[2].split() == ["[*]", "[]", "[*]"]
    sa = _out(kubectl("auth", "can-i", "--list", "--as", SA)).splitlines()
    resources = {line.split()[0] for line in sa[1:] if not line.startswith(" ")}
    assert resources == {"selfsubjectreviews.authentication.k8s.io", "selfsubjectaccessreviews.authorization.k8s.io",
                         "selfsubjectrulesreviews.authorization.k8s.io"}  # fmt: skip
    assert any(line.split() == ["[/version]", "[]", "[get]"] for line in sa)


def test_it_tells_auth_whoami_who_is_asking(kubectl: Kubectl) -> None:
    out = _out(kubectl("auth", "whoami"))
    assert out.splitlines() == [
        "ATTRIBUTE   VALUE",
        "Username    kubernetes-admin",
        "Groups      [system:masters system:authenticated]",
    ]
    out = _out(kubectl("auth", "whoami", "--as", SA, "-o", "json"))
    assert json.loads(out)["status"]["userInfo"]["username"] == SA


def test_it_issues_tokens_that_kubectl_then_uses(
    cluster: SimCluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    _out(kubectl("create", "serviceaccount", "robot"))
    _out(
        kubectl("create", "rolebinding", "robot-view", "--clusterrole=view", "--serviceaccount=default:robot")
    )
    token = _out(kubectl("create", "token", "robot", "--duration=15m")).strip()
    header, payload = (base64.urlsafe_b64decode(part + "==") for part in token.split(".")[:2])
    assert header.startswith(b'{"alg":"ES256","kid":"')  # compact JSON, as go-jose writes a JWT
    claims = json.loads(payload)
    assert b" " not in payload
    assert claims["sub"] == "system:serviceaccount:default:robot"
    assert claims["exp"] - claims["iat"] == 900
    robot = cluster.user_kubeconfig(tmp_path / "robot-kubeconfig", token=token)
    assert _out(_as(cluster, kubectl, tmp_path, robot, "get", "pods")) == ""  # allowed, no pods: empty stdout
    denied = _as(cluster, kubectl, tmp_path, robot, "get", "nodes")
    assert denied.returncode == 1
    assert denied.stderr.strip() == (
        'Error from server (Forbidden): nodes is forbidden: User "system:serviceaccount:default:robot" cannot list '
        'resource "nodes" in API group "" at the cluster scope'
    )
    whoami = _out(_as(cluster, kubectl, tmp_path, robot, "auth", "whoami")).splitlines()
    assert whoami[1].split() == ["Username", "system:serviceaccount:default:robot"]
    assert whoami[-1].split()[0] == "Extra:" and "authentication.kubernetes.io/credential-id" in whoami[-1]


def test_it_tells_kubectl_without_credentials_to_log_in(
    cluster: SimCluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    nobody = cluster.user_kubeconfig(tmp_path / "bad-kubeconfig", token="made-up")
    result = _as(cluster, kubectl, tmp_path, nobody, "get", "pods")
    assert result.returncode == 1
    # client-go's words for a 401 Status, as against any real cluster
    assert result.stderr.splitlines()[-1] == (
        "error: You must be logged in to the server (the server has asked for the client to provide credentials)"
    )


def test_it_lets_kubectl_create_rbac_objects_and_namespaces(kubectl: Kubectl) -> None:
    _out(kubectl("create", "namespace", "team"))
    _out(kubectl("create", "role", "reader", "-n", "team", "--verb=get,list", "--resource=pods"))
    _out(kubectl("create", "rolebinding", "alice-reads", "-n", "team", "--role=reader", "--user=alice"))
    _out(kubectl("create", "clusterrole", "node-reader", "--verb=get", "--resource=nodes"))
    _out(kubectl("create", "clusterrolebinding", "alice-nodes", "--clusterrole=node-reader", "--user=alice"))
    assert _out(kubectl("auth", "can-i", "list", "pods", "-n", "team", "--as", "alice")) == "yes\n"
    assert _out(kubectl("auth", "can-i", "get", "nodes", "--as", "alice")) == "yes\n"
    assert kubectl("auth", "can-i", "list", "nodes", "--as", "alice").stdout == "no\n"
    table = _out(kubectl("get", "rolebindings", "-n", "team", "-o", "wide")).splitlines()
    assert table[0].split()[:3] == ["NAME", "ROLE", "AGE"]
    assert table[1].split()[:2] == ["alice-reads", "Role/reader"]


WIDGET_READER = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: widget-reader
  labels:
    rbac.authorization.k8s.io/aggregate-to-view: "true"
rules:
- apiGroups: ["resource.k8s.io"]
  resources: ["deviceclasses"]
  verbs: ["get", "list"]
"""


def test_it_aggregates_a_cluster_role_labelled_for_view_into_view_edit_and_admin(tmp_path: Path) -> None:
    import subprocess

    from tests.simcluster.sim_helpers import running, settle

    kubeconfig = tmp_path / "kubeconfig"
    with running(topology=None, kubeconfig_path=kubeconfig) as (cluster, _, _):

        def kubectl(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
            command = [
                str(kubectl_path()),
                "--kubeconfig",
                str(kubeconfig),
                "--cache-dir",
                str(tmp_path),
                *args,
            ]
            return subprocess.run(
                command, input=stdin, capture_output=True, text=True, timeout=60, check=False
            )

        view = json.loads(_out(kubectl("get", "clusterrole", "view", "-o", "json")))
        assert view["aggregationRule"] == {
            "clusterRoleSelectors": [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}]
        }
        assert view["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"
        assert "system:aggregate-to-view" in _out(kubectl("get", "clusterroles", "-o", "name"))
        _out(kubectl("create", "rolebinding", "viewers", "--clusterrole=view", "--user=ann", "-n", "default"))
        _out(kubectl("create", "clusterrolebinding", "admins", "--clusterrole=admin", "--user=bob"))
        assert kubectl("auth", "can-i", "list", "deviceclasses", "--as=bob").stdout == "no\n"

        _out(kubectl("apply", "-f", "-", stdin=WIDGET_READER))
        settle(cluster)
        # the clusterrole-aggregation controller: view gathers it, edit gathers view, admin gathers edit
        for role in ("view", "edit", "admin"):
            rules = json.loads(_out(kubectl("get", "clusterrole", role, "-o", "json")))["rules"]
            assert {
                "apiGroups": ["resource.k8s.io"],
                "resources": ["deviceclasses"],
                "verbs": ["get", "list"],
            } in rules
        assert kubectl("auth", "can-i", "list", "deviceclasses", "--as=bob").stdout == "yes\n"
        assert (
            kubectl("auth", "can-i", "list", "resourceclaims", "-n", "default", "--as=ann").stdout == "yes\n"
        )
        _out(kubectl("delete", "clusterrole", "widget-reader"))
        settle(cluster)
        assert kubectl("auth", "can-i", "list", "deviceclasses", "--as=bob").stdout == "no\n"


def test_kubectl_get_raw_metrics_answers_the_admin_and_the_monitoring_group_and_forbids_others(
    kubectl: Kubectl,
) -> None:
    _out(kubectl("create", "namespace", "team"))
    _out(kubectl("get", "namespaces"))
    _out(kubectl("apply", "--server-side", "--dry-run=server", "-f", "-", input_text=(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: team}\ndata: {mode: fast}\n"
    )))  # fmt: skip
    lines = _out(kubectl("get", "--raw", "/metrics")).splitlines()
    assert "# TYPE apiserver_storage_objects gauge" in lines
    assert 'apiserver_storage_objects{resource="namespaces"} 5' in lines
    assert 'apiserver_storage_objects{resource="resourceslices.resource.k8s.io"} 0' in lines
    assert any(
        line.startswith("kubernetes_build_info{") and 'git_version="v1.37.1"' in line for line in lines
    )
    requests = [line for line in lines if line.startswith("apiserver_request_total{")]
    assert (
        'apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="namespaces",'
        'scope="cluster",subresource="",verb="LIST",version="v1"} 1'
    ) in requests
    assert any('dry_run="All"' in line and 'verb="APPLY"' in line and 'resource="configmaps"' in line
               for line in requests)  # fmt: skip
    # bootstrappolicy's system:monitoring role, bound to the group of that name
    monitoring = _out(
        kubectl("get", "--raw", "/metrics", "--as", "prometheus", "--as-group", "system:monitoring")
    )
    assert "# TYPE apiserver_storage_objects gauge" in monitoring
    denied = kubectl("get", "--raw", "/metrics", "--as", "alice")
    assert (denied.returncode, denied.stderr) == (
        1,
        'Error from server (Forbidden): forbidden: User "alice" cannot get path "/metrics"\n',
    )
