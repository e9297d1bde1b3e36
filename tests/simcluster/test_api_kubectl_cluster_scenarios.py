"""Everyday kubectl commands that touch every workload kind a cluster serves: `cluster-info dump`, `apply
--prune` with its default allowlist, and `get all`. Each failed while simcluster lacked a kind they list."""

from __future__ import annotations

import json
from pathlib import Path

from tests.simcluster.conftest import Kubectl
from tests.simcluster.kinds_manifests import CRON_JOB, DAEMON_SET, EVERY_KIND, REPLICATION_CONTROLLER

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: x}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: registry.example.com/web:1.0}]}
"""


def _config_map(name: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: default, labels: {{app: x}}}}\n"


def test_it_dumps_the_cluster_with_its_daemonsets_and_replication_controllers(kubectl: Kubectl) -> None:
    applied = kubectl("apply", "-f", "-", input_text=EVERY_KIND)
    assert applied.returncode == 0, applied.stderr
    dump = kubectl("cluster-info", "dump", "--namespaces", "ops")
    assert dump.returncode == 0, dump.stderr
    # one JSON document after another: nodes, events, replicationcontrollers, services, daemonsets, …
    decoder, text, kinds, names = json.JSONDecoder(), dump.stdout, [], set()
    index = 0
    while index < len(text):
        if text[index].isspace():
            index += 1
            continue
        doc, index = decoder.raw_decode(text, index)
        kinds.append(doc.get("kind"))
        names.update(item["metadata"]["name"] for item in doc.get("items") or [])
    assert {"ReplicationControllerList", "DaemonSetList", "DeploymentList", "ReplicaSetList"} <= set(kinds)
    assert {"agent", "legacy"} <= names


def test_it_prunes_a_removed_config_map_and_deployment_without_an_allowlist(
    kubectl: Kubectl, tmp_path: Path
) -> None:
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "settings.yaml").write_text(_config_map("settings"))
    (manifests / "web.yaml").write_text(DEPLOYMENT)
    first = kubectl("apply", "--prune", "-l", "app=x", "-f", str(manifests))
    assert first.returncode == 0, first.stderr
    (manifests / "settings.yaml").unlink()
    (manifests / "web.yaml").unlink()
    (manifests / "other.yaml").write_text(_config_map("other"))
    second = kubectl("apply", "--prune", "-l", "app=x", "-f", str(manifests))
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == [
        "configmap/other created", "configmap/settings pruned", "deployment.apps/web pruned",
    ]  # fmt: skip
    left = kubectl("get", "configmaps,deployments", "-l", "app=x", "-o", "name")
    assert left.stdout.split() == ["configmap/other"]


def test_it_lists_daemonsets_statefulsets_cronjobs_and_replication_controllers_in_get_all(
    kubectl: Kubectl,
) -> None:
    applied = kubectl("apply", "-f", "-", input_text=EVERY_KIND)
    assert applied.returncode == 0, applied.stderr
    listed = kubectl("get", "all", "-A", "-o", "name")
    assert listed.returncode == 0, listed.stderr
    names = set(listed.stdout.split())
    assert {
        "daemonset.apps/agent", "statefulset.apps/db", "cronjob.batch/nightly", "replicationcontroller/legacy",
    } <= names  # fmt: skip
    # `all` is a category: PersistentVolumeClaims, Ingresses and Endpoints are not in it, as upstream
    assert not any(name.startswith(("ingress", "persistentvolumeclaim", "endpoints")) for name in names)
    wide = kubectl("get", "all", "-n", "ops")
    assert "daemonset.apps/agent" in wide.stdout and "cronjob.batch/nightly" in wide.stdout


def test_it_applies_workload_kinds_server_side_twice_then_client_side(kubectl: Kubectl) -> None:
    created = kubectl("create", "namespace", "ops")
    assert created.returncode == 0, created.stderr
    for manifest in (DAEMON_SET, CRON_JOB, REPLICATION_CONTROLLER):
        first = kubectl("apply", "--server-side", "-f", "-", input_text=manifest)
        assert first.returncode == 0, first.stderr
        assert first.stdout.endswith(" serverside-applied\n")
        again = kubectl("apply", "--server-side", "-f", "-", input_text=manifest)
        assert again.returncode == 0, again.stderr
        client_side = kubectl("apply", "-f", "-", input_text=manifest)
        assert client_side.returncode == 0, client_side.stderr
