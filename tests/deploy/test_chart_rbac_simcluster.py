"""The chart's RBAC applied to simcluster and judged by its authorizer (issue 11): the service account
`dradash` in namespace `dradash` can list and watch every kind the mirror needs and nothing more, a mirror
run holding only that account's token mirrors every device, and the constrained impersonation rules the
chart renders are exactly what the API server accepts."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command

from dra.kinds import BY_PLURAL
from inventory.kube import MIRRORED_KINDS
from inventory.models import Device, KubeObject
from simcluster.testing import SimCluster, run_simcluster
from tests.helm import NAMESPACE, RELEASE, render
from tests.kubectl import kubectl_binary

pytestmark = pytest.mark.helm

SA = f"system:serviceaccount:{NAMESPACE}:{RELEASE}"
RBAC_KINDS = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}


def _kubectl(
    kubeconfig: Path, tmp_path: Path, *args: str, input_text: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(kubectl_binary()), "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path / "cache"), *args],
        input=input_text, capture_output=True, text=True, timeout=60, env={**os.environ, "HOME": str(tmp_path)},
    )  # fmt: skip


def _apply_chart_rbac(cluster: SimCluster, tmp_path: Path, values: dict[str, Any] | None = None) -> None:
    assert cluster.kubeconfig_path is not None
    docs = [doc for doc in render(values) if doc["kind"] in RBAC_KINDS]
    assert {doc["kind"] for doc in docs} == RBAC_KINDS
    _ok(_kubectl(cluster.kubeconfig_path, tmp_path, "create", "namespace", NAMESPACE))
    _ok(_kubectl(cluster.kubeconfig_path, tmp_path, "apply", "-n", NAMESPACE, "-f", "-",
                 input_text=yaml.safe_dump_all(docs)))  # fmt: skip


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def _can(cluster: SimCluster, tmp_path: Path, *args: str) -> bool:
    assert cluster.kubeconfig_path is not None
    result = _kubectl(cluster.kubeconfig_path, tmp_path, "auth", "can-i", *args, "--as", SA)
    assert result.stdout in ("yes\n", "no\n"), result.stderr
    return result.stdout == "yes\n"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[SimCluster]:
    with run_simcluster(topology="tiny", kubeconfig_path=tmp_path / "kubeconfig") as running:
        yield running


def test_it_lets_the_chart_service_account_list_and_watch_every_mirrored_kind(
    cluster: SimCluster, tmp_path: Path
) -> None:
    _apply_chart_rbac(cluster, tmp_path)
    for plural in MIRRORED_KINDS:
        kind = BY_PLURAL[plural]
        resource = f"{plural}.{kind.group}" if kind.group else plural
        for verb in ("get", "list", "watch"):
            assert _can(cluster, tmp_path, verb, resource, "--all-namespaces"), f"{verb} {resource}"


def test_it_denies_the_chart_service_account_everything_it_was_not_granted(
    cluster: SimCluster, tmp_path: Path
) -> None:
    _apply_chart_rbac(cluster, tmp_path)
    for args in (("get", "secrets"), ("list", "secrets", "-A"), ("delete", "pods", "-n", "ml"),
                 ("create", "pods", "-n", "ml"), ("create", "resourceslices.resource.k8s.io"),
                 ("update", "resourceslices.resource.k8s.io"), ("delete", "resourceslices.resource.k8s.io"),
                 ("patch", "nodes"), ("list", "configmaps", "-A"), ("create", "clusterrolebindings"),
                 ("impersonate", "users"), ("create", "serviceaccounts/token", "-n", NAMESPACE),
                 ("update", "leases.coordination.k8s.io", "-n", NAMESPACE)):  # fmt: skip
        assert not _can(cluster, tmp_path, *args), args
    lease = [doc for doc in render() if doc["kind"] == "Role"][0]["rules"][1]["resourceNames"][0]
    assert _can(cluster, tmp_path, "update", f"leases.coordination.k8s.io/{lease}", "-n", NAMESPACE)
    assert _can(cluster, tmp_path, "create", "leases.coordination.k8s.io", "-n", NAMESPACE)
    assert not _can(cluster, tmp_path, "update", "leases.coordination.k8s.io/other", "-n", NAMESPACE)


def test_it_lists_only_the_chart_rules_for_the_service_account(cluster: SimCluster, tmp_path: Path) -> None:
    _apply_chart_rbac(cluster, tmp_path)
    assert cluster.kubeconfig_path is not None
    out = _ok(_kubectl(cluster.kubeconfig_path, tmp_path, "auth", "can-i", "--list", "--as", SA))
    granted = {line.split()[0]: line.split()[-1] for line in out.splitlines()[1:] if not line.startswith(" ")}
    chart = [doc for doc in render() if doc["kind"] == "ClusterRole"][0]
    expected = {
        "selfsubjectreviews.authentication.k8s.io", "selfsubjectaccessreviews.authorization.k8s.io",
        "selfsubjectrulesreviews.authorization.k8s.io",
    }  # fmt: skip
    for rule in chart["rules"]:
        for group in rule["apiGroups"]:
            expected |= {f"{r}.{group}" if group else r for r in rule["resources"]}
    assert set(granted) == expected
    assert all("*" not in verbs for verbs in granted.values())


@pytest.mark.django_db
def test_it_mirrors_every_device_with_only_the_service_account_token(
    cluster: SimCluster, tmp_path: Path
) -> None:
    _apply_chart_rbac(cluster, tmp_path)
    assert cluster.kubeconfig_path is not None
    token = _ok(
        _kubectl(cluster.kubeconfig_path, tmp_path, "create", "token", RELEASE, "-n", NAMESPACE)
    ).strip()
    kubeconfig = cluster.user_kubeconfig(tmp_path / "dradash-kubeconfig", token=token, namespace=NAMESPACE)
    document = yaml.safe_load(kubeconfig.read_text())
    assert document["users"][0]["user"] == {"token": token}, "the service account's token and nothing else"
    out = StringIO()
    call_command("mirror", "--once", "--kubeconfig", str(kubeconfig), stdout=out)
    assert "mirrored" in out.getvalue()
    slices = cluster.store.list("resourceslices")
    assert Device.objects.count() == sum(len(s["spec"].get("devices") or []) for s in slices) > 0
    assert KubeObject.objects.filter(kind="nodes").count() == len(cluster.store.list("nodes"))


def test_it_accepts_the_constrained_impersonation_rules_the_chart_renders(
    cluster: SimCluster, tmp_path: Path
) -> None:
    _apply_chart_rbac(cluster, tmp_path, {"impersonation": {"enabled": True, "mode": "constrained"}})
    assert cluster.kubeconfig_path is not None
    admin = cluster.kubeconfig_path
    _ok(
        _kubectl(
            admin,
            tmp_path,
            "create",
            "clusterrolebinding",
            "alice-view",
            "--clusterrole=view",
            "--user=alice",
        )
    )
    token = _ok(_kubectl(admin, tmp_path, "create", "token", RELEASE, "-n", NAMESPACE)).strip()
    dradash = cluster.user_kubeconfig(tmp_path / "dradash-kubeconfig", token=token, namespace="ml")
    # `kubectl auth can-i --as` asks with a SelfSubjectAccessReview under Impersonate-User: granted by the chart
    assert _kubectl(dradash, tmp_path, "auth", "can-i", "list", "pods", "--as", "alice").stdout == "yes\n"
    assert _kubectl(dradash, tmp_path, "auth", "can-i", "list", "secrets", "--as", "alice").stdout == "no\n"
    # the DeviceTaintRule write is authorized as the user, who may not write rules
    rule = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "drain-gpu"},
            "spec": {"deviceSelector": {"driver": "gpu.example.com"},
                     "taint": {"key": "example.com/maintenance", "effect": "None"}}}  # fmt: skip
    denied = _kubectl(
        dradash,
        tmp_path,
        "create",
        "--validate=false",
        "-f",
        "-",
        "--as",
        "alice",
        input_text=yaml.safe_dump(rule),
    )
    assert denied.returncode == 1
    assert denied.stderr.strip().endswith(
        'devicetaintrules.resource.k8s.io is forbidden: User "alice" cannot create resource "devicetaintrules" in '
        'API group "resource.k8s.io" at the cluster scope'
    )
    # reading pods as alice is not among the actions the chart lets the dashboard impersonate
    read = _kubectl(dradash, tmp_path, "get", "pods", "--as", "alice")
    assert read.returncode == 1
    assert ('users "alice" is forbidden: User "system:serviceaccount:dradash:dradash" cannot impersonate resource '
            '"users" in API group "" at the cluster scope') in read.stderr  # fmt: skip
