"""kubectl 1.37.1 `get --field-selector` on the fields a registry selects by a Go value, not by the JSON:
an unset bool is "false" and an unset count "0", as strconv writes them."""

from __future__ import annotations

import pytest

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Kubectl

pytestmark = pytest.mark.kubectl


def _names(kubectl: Kubectl, *args: str) -> list[str]:
    result = kubectl("get", *args, "-o", "name")
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_it_selects_nodes_that_were_never_cordoned_as_schedulable(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    for name in ("node-a", "node-b"):
        cluster.store.create("nodes", {"metadata": {"name": name}})
    assert kubectl("cordon", "node-b").returncode == 0
    assert _names(kubectl, "nodes", "--field-selector", "spec.unschedulable=false") == ["node/node-a"]
    assert _names(kubectl, "nodes", "--field-selector", "spec.unschedulable!=true") == ["node/node-a"]
    assert _names(kubectl, "nodes", "--field-selector", "spec.unschedulable=true") == ["node/node-b"]


def test_it_selects_jobs_by_their_count_of_succeeded_pods(kubectl: Kubectl, cluster: SimCluster) -> None:
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    for name in ("fresh", "done"):
        cluster.store.create("jobs", {"metadata": {"name": name, "namespace": "default"},
                                      "spec": {"template": template}})  # fmt: skip
    cluster.store.patch(
        "jobs", "done", {"status": {"succeeded": 1}}, namespace="default", subresource="status"
    )
    assert _names(kubectl, "jobs", "--field-selector", "status.successful=0") == ["job.batch/fresh"]
    assert _names(kubectl, "jobs", "--field-selector", "status.successful=1") == ["job.batch/done"]
