"""Real kubectl 1.37.1 `get -o wide` against simcluster: the priority-1 columns a real server's printers send."""

from __future__ import annotations

import pytest

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Kubectl

pytestmark = pytest.mark.kubectl


def _table(kubectl: Kubectl, *args: str) -> list[list[str]]:
    result = kubectl("get", *args)
    assert result.returncode == 0, result.stderr
    return [line.split("   ") for line in result.stdout.splitlines()]


def _cells(line: list[str]) -> list[str]:
    return [cell.strip() for cell in line if cell.strip()]


def test_it_shows_node_addresses_and_system_info_in_wide_output(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    cluster.store.create(
        "nodes",
        {"metadata": {"name": "worker-07", "labels": {"kubernetes.io/role": "gpu"}},
         "status": {"conditions": [{"type": "Ready", "status": "True"}],
                    "addresses": [{"type": "Hostname", "address": "worker-07"},
                                  {"type": "InternalIP", "address": "10.0.7.1"}],
                    "nodeInfo": {"kubeletVersion": "v1.37.1", "osImage": "Ubuntu 24.04.3 LTS",
                                 "kernelVersion": "6.8.0-85-generic",
                                 "containerRuntimeVersion": "containerd://2.1.4"}}},
    )  # fmt: skip
    header, row = (_cells(line) for line in _table(kubectl, "nodes", "-o", "wide"))
    assert header == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE",
                      "KERNEL-VERSION", "CONTAINER-RUNTIME"]  # fmt: skip
    assert row[:3] == ["worker-07", "Ready", "gpu"]
    assert row[4:] == ["v1.37.1", "10.0.7.1", "<none>", "Ubuntu 24.04.3 LTS", "6.8.0-85-generic",
                       "containerd://2.1.4"]  # fmt: skip
    assert _cells(_table(kubectl, "nodes")[0]) == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]


def test_it_shows_event_source_count_and_name_in_wide_output(kubectl: Kubectl, cluster: SimCluster) -> None:
    cluster.store.create(
        "events",
        {"metadata": {"name": "trainer.18a1b2c3d4e5f607", "namespace": "default"},
         "involvedObject": {"kind": "Pod", "name": "trainer", "namespace": "default",
                            "fieldPath": "spec.containers{trainer}"},
         "reason": "Pulled", "message": "Container image already present on machine", "type": "Normal",
         "source": {"component": "kubelet", "host": "worker-07"}, "count": 3,
         "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z"},
    )  # fmt: skip
    header, row = (_cells(line) for line in _table(kubectl, "events", "-o", "wide"))
    assert header == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST SEEN",
                      "COUNT", "NAME"]  # fmt: skip
    assert row[1:6] == ["Normal", "Pulled", "pod/trainer", "spec.containers{trainer}", "kubelet, worker-07"]
    assert row[-2:] == ["3", "trainer.18a1b2c3d4e5f607"]


def test_it_shows_containers_images_and_selector_of_replicasets_and_jobs(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    template = {"metadata": {"labels": {"app": "burn-in"}},
                "spec": {"restartPolicy": "Never",
                         "containers": [{"name": "burn", "image": "registry.example.com/gpu-burn:2"}]}}  # fmt: skip
    cluster.store.create(
        "replicasets",
        {"metadata": {"name": "serving", "namespace": "default"},
         "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "burn-in"}},
                  "template": {**template, "spec": {**template["spec"], "restartPolicy": "Always"}}}},
    )  # fmt: skip
    cluster.store.create(
        "jobs",
        {"metadata": {"name": "burn-in", "namespace": "default"},
         "spec": {"completions": 4, "manualSelector": True, "selector": {"matchExpressions": [
             {"key": "tier", "operator": "In", "values": ["gpu", "batch"]}]}, "template": template}},
    )  # fmt: skip
    cluster.store.patch(
        "jobs", "burn-in",
        {"status": {"succeeded": 4, "startTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T00:05:00Z",
                    "conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
                                   {"type": "Complete", "status": "True"}]}},
        namespace="default", subresource="status",
    )  # fmt: skip
    header, row = (_cells(line) for line in _table(kubectl, "replicasets", "-o", "wide"))
    assert header[-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert row[-3:] == ["burn", "registry.example.com/gpu-burn:2", "app=burn-in"]
    header, row = (_cells(line) for line in _table(kubectl, "jobs", "-o", "wide"))
    assert header == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert row[:4] == ["burn-in", "Complete", "4/4", "5m"]
    assert row[-3:] == ["burn", "registry.example.com/gpu-burn:2", "tier in (batch,gpu)"]
