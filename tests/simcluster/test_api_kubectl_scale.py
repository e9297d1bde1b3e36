"""kubectl 1.37.1 `scale` through the autoscaling/v1 Scale subresource, which kube-apiserver serves for
Deployments and ReplicaSets alike."""

from __future__ import annotations

import json

import pytest

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Kubectl

pytestmark = pytest.mark.kubectl

LABELS = {"app": "trainer"}


def _replica_set(cluster: SimCluster) -> None:
    template = {"metadata": {"labels": LABELS}, "spec": {"containers": [{"name": "c", "image": "trainer:1"}]}}
    cluster.store.create("replicasets", {"metadata": {"name": "trainer", "namespace": "default"},
                                         "spec": {"replicas": 2, "selector": {"matchLabels": LABELS},
                                                  "template": template}})  # fmt: skip


def test_it_scales_a_replica_set_through_its_scale_subresource(kubectl: Kubectl, cluster: SimCluster) -> None:
    _replica_set(cluster)
    scaled = kubectl("scale", "replicaset/trainer", "--replicas=5")
    assert (scaled.returncode, scaled.stdout, scaled.stderr) == (0, "replicaset.apps/trainer scaled\n", "")
    assert cluster.store.get("replicasets", "trainer", namespace="default")["spec"]["replicas"] == 5
    refused = kubectl("scale", "replicaset/trainer", "--replicas=1", "--current-replicas=2")
    assert (refused.returncode, refused.stderr) == (1, "error: Expected replicas to be 2, was 5\n")
    scale = json.loads(
        kubectl("get", "--raw", "/apis/apps/v1/namespaces/default/replicasets/trainer/scale").stdout
    )
    assert (scale["kind"], scale["apiVersion"], scale["spec"], scale["status"]) == (
        "Scale", "autoscaling/v1", {"replicas": 5}, {"replicas": 0, "selector": "app=trainer"},
    )  # fmt: skip


def test_it_lists_the_scale_subresource_of_replica_sets_in_discovery(kubectl: Kubectl) -> None:
    resources = json.loads(kubectl("get", "--raw", "/apis/apps/v1").stdout)["resources"]
    scale = next(r for r in resources if r["name"] == "replicasets/scale")
    assert (scale["group"], scale["version"], scale["kind"], scale["verbs"]) == (
        "autoscaling", "v1", "Scale", ["get", "patch", "update"],
    )  # fmt: skip
    assert kubectl("auth", "can-i", "patch", "replicasets", "--subresource=scale").stdout == "yes\n"


def test_it_lets_the_view_role_read_the_scale_of_replica_sets(kubectl: Kubectl) -> None:
    assert kubectl("create", "rolebinding", "viewer", "--clusterrole=view", "--user=jane").returncode == 0
    for verb, answer in (("get", "yes\n"), ("patch", "no\n")):
        asked = kubectl("auth", "can-i", verb, "replicasets", "--subresource=scale", "--as=jane")
        assert asked.stdout == answer
