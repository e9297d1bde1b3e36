"""kubectl 1.37.1 reading what a pod's kubelet recorded: `kubectl describe pod` on a real cluster lists, after the
scheduler's Scheduled, the kubelet's Pulled, Created and Started for each container (Pulling first when the
image is pulled again), and `kubectl get events` shows its Killing when the pod is deleted, each from
"kubelet, <node>" about `spec.containers{<name>}` (pkg/kubelet/images/image_manager.go and
pkg/kubelet/kuberuntime/kuberuntime_container.go)."""

from __future__ import annotations

from pathlib import Path

from simcluster.testing import SimCluster
from tests.simcluster.conftest import kubectl_out
from tests.simcluster.sim_helpers import settle


def _events_section(described: str) -> list[list[str]]:
    """The rows of `kubectl describe`'s Events table: [type, reason, age, from, message]."""
    lines = described.split("\nEvents:\n", 1)[1].splitlines()[2:]
    return [line.split(None, 4) for line in lines if line.strip()]


def test_kubectl_describe_pod_lists_the_kubelets_pulled_created_and_started(
    live: SimCluster, tmp_path: Path
) -> None:
    kubectl_out(tmp_path, "run", "app", "--image=registry.example.com/app:1.2")
    kubectl_out(tmp_path, "wait", "--for=condition=Ready", "pod/app", "--timeout=30s")
    settle(live)
    node = live.store.get("pods", "app", namespace="default")["spec"]["nodeName"]
    rows = _events_section(kubectl_out(tmp_path, "describe", "pod", "app"))
    assert [(row[1], row[3], row[4]) for row in rows] == [
        ("Scheduled", "default-scheduler", f"Successfully assigned default/app to {node}"),
        ("Pulled", "kubelet", 'spec.containers{app}: Container image "registry.example.com/app:1.2" already '
                              "present on machine and can be accessed by the pod"),
        ("Created", "kubelet", "spec.containers{app}: Container created"),
        ("Started", "kubelet", "spec.containers{app}: Container started"),
    ]  # fmt: skip
    wide = kubectl_out(
        tmp_path, "get", "events", "-o", "wide", "--field-selector", "reason=Started"
    ).splitlines()
    header = wide[0].split()
    assert header[:6] == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT"]
    assert wide[1].split()[3:7] == ["pod/app", "spec.containers{app}", "kubelet,", node]


def test_kubectl_shows_an_image_pulled_again_and_the_container_stopped_on_deletion(
    live: SimCluster, tmp_path: Path
) -> None:
    kubectl_out(
        tmp_path, "run", "web", "--image=nginx"
    )  # :latest, so imagePullPolicy Always: pulled every start
    kubectl_out(tmp_path, "wait", "--for=condition=Ready", "pod/web", "--timeout=30s")
    settle(live)
    rows = _events_section(kubectl_out(tmp_path, "describe", "pod", "web"))
    reasons = [row[1] for row in rows]
    assert reasons == ["Scheduled", "Pulling", "Pulled", "Created", "Started"]
    assert rows[1][4] == 'spec.containers{web}: Pulling image "nginx"'
    assert rows[2][4].startswith('spec.containers{web}: Successfully pulled image "nginx" in ')
    assert " including waiting). Image size: " in rows[2][4] and rows[2][4].endswith(" bytes.")
    kubectl_out(tmp_path, "delete", "pod", "web")
    killing = kubectl_out(
        tmp_path, "get", "events", "--field-selector", "involvedObject.name=web,reason=Killing",
        "-o", "custom-columns=FROM:.source.component,PART:.involvedObject.fieldPath,MESSAGE:.message",
        "--no-headers",
    )  # fmt: skip
    assert killing.split(None, 2) == ["kubelet", "spec.containers{web}", "Stopping container web\n"]
