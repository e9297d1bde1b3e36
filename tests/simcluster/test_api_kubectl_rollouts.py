"""kubectl 1.37.1 `rollout undo | history | pause | resume` and `scale` on a Deployment, as the deployment
controller of kube-controller-manager answers them: a rollback gives the old ReplicaSet the next revision
(its former ones in revision-history), and a paused Deployment is still observed and scaled."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from simcluster.testing import SimCluster
from tests.simcluster.conftest import kubectl_path
from tests.simcluster.sim_helpers import condition, settle

pytestmark = pytest.mark.kubectl


def _kubectl(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(kubectl_path()), "--kubeconfig", str(tmp_path / "kubeconfig"), "--cache-dir", str(tmp_path / "cache"),
         *args], capture_output=True, text=True, timeout=60, env={**os.environ, "HOME": str(tmp_path)},
    )  # fmt: skip


def _run(tmp_path: Path, *args: str) -> str:
    result = _kubectl(tmp_path, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _revisions(live: SimCluster) -> dict[str, tuple[str, str | None]]:
    """image → (revision, revision-history) of each ReplicaSet of deployment web."""
    found = {}
    for rs in live.store.list("replicasets", namespace="default"):
        annotations = rs["metadata"]["annotations"]
        image = rs["spec"]["template"]["spec"]["containers"][0]["image"]
        found[image] = (
            annotations["deployment.kubernetes.io/revision"],
            annotations.get("deployment.kubernetes.io/revision-history"),
        )
    return found


def _rolled_out(live: SimCluster, tmp_path: Path) -> None:
    _run(tmp_path, "rollout", "status", "deployment/web", "--timeout=30s")
    settle(live)


def test_it_gives_the_replica_set_rolled_back_to_the_next_revision(live: SimCluster, tmp_path: Path) -> None:
    _run(tmp_path, "create", "deployment", "web", "--image=nginx:1.27", "--replicas=2")
    _rolled_out(live, tmp_path)
    _run(tmp_path, "set", "image", "deployment/web", "nginx=nginx:1.28")
    _rolled_out(live, tmp_path)
    assert _run(tmp_path, "rollout", "undo", "deployment/web") == "deployment.apps/web rolled back\n"
    _rolled_out(live, tmp_path)
    assert _revisions(live) == {"nginx:1.27": ("3", "1"), "nginx:1.28": ("2", None)}
    history = _run(tmp_path, "rollout", "history", "deployment/web").splitlines()
    assert [line.split()[0] for line in history[2:] if line] == ["2", "3"]
    deployment = live.store.get("deployments", "web", namespace="default")
    assert deployment["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    gone = _kubectl(tmp_path, "rollout", "undo", "deployment/web", "--to-revision=1")
    assert (gone.returncode, gone.stderr) == (1, "error: unable to find specified revision 1 in history\n")

    assert _run(tmp_path, "rollout", "undo", "deployment/web") == "deployment.apps/web rolled back\n"
    _rolled_out(live, tmp_path)
    assert _revisions(live) == {"nginx:1.27": ("3", "1"), "nginx:1.28": ("4", "2")}


def test_it_observes_and_scales_a_paused_deployment(live: SimCluster, tmp_path: Path) -> None:
    _run(tmp_path, "create", "deployment", "web", "--image=nginx:1.27", "--replicas=2")
    _rolled_out(live, tmp_path)
    assert _run(tmp_path, "rollout", "pause", "deployment/web") == "deployment.apps/web paused\n"
    _run(tmp_path, "set", "image", "deployment/web", "nginx=nginx:1.28")
    _run(tmp_path, "scale", "deployment/web", "--replicas=3")
    settle(live)
    deployment = live.store.get("deployments", "web", namespace="default")
    assert deployment["status"]["observedGeneration"] == deployment["metadata"]["generation"]
    progressing = condition(deployment, "Progressing")
    assert progressing is not None
    assert (progressing["status"], progressing["reason"], progressing["message"]) == (
        "Unknown", "DeploymentPaused", "Deployment is paused",
    )  # fmt: skip
    (rs,) = live.store.list("replicasets", namespace="default")
    assert (rs["spec"]["replicas"], rs["spec"]["template"]["spec"]["containers"][0]["image"]) == (
        3,
        "nginx:1.27",
    )
    waiting = _kubectl(tmp_path, "rollout", "status", "deployment/web", "--timeout=1s")
    assert waiting.stdout.splitlines()[0] == (
        'Waiting for deployment "web" rollout to finish: 0 out of 3 new replicas have been updated...'
    )

    assert _run(tmp_path, "rollout", "resume", "deployment/web") == "deployment.apps/web resumed\n"
    _rolled_out(live, tmp_path)
    deployment = live.store.get("deployments", "web", namespace="default")
    progressing = condition(deployment, "Progressing")
    assert progressing is not None and progressing["reason"] == "NewReplicaSetAvailable"
    assert deployment["status"]["updatedReplicas"] == 3


def test_it_records_what_the_controllers_did_for_kubectl_describe_and_events(
    live: SimCluster, tmp_path: Path
) -> None:
    _run(tmp_path, "create", "deployment", "web", "--image=nginx:1.27", "--replicas=2")
    _rolled_out(live, tmp_path)
    _run(tmp_path, "scale", "deployment/web", "--replicas=1")
    _rolled_out(live, tmp_path)
    (rs,) = live.store.list("replicasets", namespace="default")
    rs_name = rs["metadata"]["name"]
    described = _run(tmp_path, "describe", "deployment", "web").split("Events:", 1)[1].splitlines()
    rows = [line.split(None, 4) for line in described[3:]]  # type, reason, age, from, message
    # kubectl sorts them by lastTimestamp, in seconds: events of one second come in any order
    assert sorted((row[1], row[3], row[4]) for row in rows) == [
        ("ScalingReplicaSet", "deployment-controller", f"Scaled down replica set {rs_name} from 2 to 1"),
        ("ScalingReplicaSet", "deployment-controller", f"Scaled up replica set {rs_name} from 0 to 2"),
    ]
    pods = {
        name
        for p in live.store.list("pods", namespace="default")
        if (name := p["metadata"]["name"]).startswith(rs_name)
    }
    events = _run(tmp_path, "events", "--for", f"replicaset/{rs_name}").splitlines()[1:]
    rows = [line.split(None, 4)[2:] for line in events]
    assert sorted(reason for reason, _, _ in rows) == [
        "SuccessfulCreate",
        "SuccessfulCreate",
        "SuccessfulDelete",
    ]
    created = [
        message.removeprefix("Created pod: ") for reason, _, message in rows if reason == "SuccessfulCreate"
    ]
    (deleted,) = [
        message.removeprefix("Deleted pod: ") for reason, _, message in rows if reason == "SuccessfulDelete"
    ]
    assert set(created) - {deleted} == pods and deleted not in pods
    assert {obj for _, obj, _ in rows} == {f"ReplicaSet/{rs_name}"}
