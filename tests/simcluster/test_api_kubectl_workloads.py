"""kubectl 1.37.1's typed-client commands (protobuf bodies) against simcluster: `create deployment | secret |
configmap | poddisruptionbudget`, `debug node`, `scale`, `rollout status`, `wait` for a job, and `explain` of the
new kinds."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from simcluster.testing import SimCluster
from tests.simcluster.conftest import kubectl_out
from tests.simcluster.sim_helpers import settle


def test_it_creates_scales_and_rolls_out_a_deployment_from_kubectl(live: SimCluster, tmp_path: Path) -> None:
    assert kubectl_out(
        tmp_path, "create", "deployment", "web", "--image=nginx:1", "--replicas=2", "--port=80"
    ) == ("deployment.apps/web created\n")
    stored = live.store.get("deployments", "web", namespace="default")
    container = stored["spec"]["template"]["spec"]["containers"][0]
    assert (container["name"], container["image"], container["ports"]) == ("nginx", "nginx:1", [{"containerPort": 80,
                                                                                                "protocol": "TCP"}])  # fmt: skip
    assert stored["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert kubectl_out(tmp_path, "scale", "deployment/web", "--replicas=3") == "deployment.apps/web scaled\n"
    # kubectl waits for the rollout; under load it may print "Waiting for …" lines first, as on a real cluster.
    assert kubectl_out(tmp_path, "rollout", "status", "deployment/web", "--timeout=30s").endswith(
        'deployment "web" successfully rolled out\n'
    )
    settle(live)
    table = kubectl_out(tmp_path, "get", "deployment", "web").splitlines()
    assert table[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert table[1].split()[:4] == ["web", "3/3", "3", "3"]


def test_it_creates_secrets_configmaps_and_budgets_from_kubectl(live: SimCluster, tmp_path: Path) -> None:
    kubectl_out(tmp_path, "create", "secret", "generic", "db", "--from-literal=password=s3cret")
    assert (
        base64.b64decode(live.store.get("secrets", "db", namespace="default")["data"]["password"])
        == b"s3cret"
    )
    kubectl_out(tmp_path, "create", "configmap", "settings", "--from-literal=mode=fast")
    assert live.store.get("configmaps", "settings", namespace="default")["data"] == {"mode": "fast"}
    kubectl_out(tmp_path, "create", "poddisruptionbudget", "web", "--selector=app=web", "--min-available=50%")
    spec = live.store.get("poddisruptionbudgets", "web", namespace="default")["spec"]
    assert spec == {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}


@pytest.mark.parametrize("field", ["deployments.spec.strategy", "leases.spec", "clusterroles.rules",
                                   "serviceaccounts", "rolebindings.subjects"])  # fmt: skip
def test_it_explains_the_new_kinds(live: SimCluster, tmp_path: Path, field: str) -> None:
    out = kubectl_out(tmp_path, "explain", field)
    assert out.splitlines()[0].split()[0] in ("KIND:", "GROUP:")
    assert "FIELD" in out or "DESCRIPTION" in out


JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: burn-in
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: burn
        image: registry.example.com/gpu-burn:2
"""


def test_it_marks_a_finished_job_complete_for_kubectl_wait(live: SimCluster, tmp_path: Path) -> None:
    assert (
        kubectl_out(tmp_path, "apply", "-f", str(_write(tmp_path, "job.yaml", JOB)))
        == "job.batch/burn-in created\n"
    )
    settle(live)
    (pod,) = [
        p
        for p in live.store.list("pods", namespace="default")
        if p["metadata"]["name"].startswith("burn-in-")
    ]
    live.controllers.pods.complete("default", pod["metadata"]["name"])
    assert kubectl_out(tmp_path, "wait", "--for=condition=complete", "job/burn-in", "--timeout=30s") == (
        "job.batch/burn-in condition met\n"
    )
    conditions = live.store.get("jobs", "burn-in", namespace="default")["status"]["conditions"]
    assert [(c["type"], c["status"], c["reason"]) for c in conditions] == [
        ("SuccessCriteriaMet", "True", "CompletionsReached"),
        ("Complete", "True", "CompletionsReached"),
    ]
    assert kubectl_out(tmp_path, "get", "job", "burn-in").splitlines()[1].split()[:3] == [
        "burn-in",
        "Complete",
        "1/1",
    ]
    events = [
        line.split(None, 4)[2:]
        for line in kubectl_out(tmp_path, "events", "--for", "job/burn-in").splitlines()[1:]
    ]
    assert sorted((reason, message) for reason, _, message in events) == [
        ("Completed", "Job completed"),
        ("SuccessfulCreate", f"Created pod: {pod['metadata']['name']}"),
    ]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_it_creates_a_job_from_kubectl_with_a_real_servers_defaults(live: SimCluster, tmp_path: Path) -> None:
    assert kubectl_out(tmp_path, "create", "job", "burn-in", "--image=registry.example.com/gpu-burn:2", "--", "burn",
                "--minutes=5") == "job.batch/burn-in created\n"  # fmt: skip
    job = live.store.get("jobs", "burn-in", namespace="default")
    uid, spec = job["metadata"]["uid"], job["spec"]
    assert {k: v for k, v in spec.items() if k not in ("selector", "template")} == {
        "backoffLimit": 6, "completionMode": "NonIndexed", "completions": 1, "manualSelector": False,
        "parallelism": 1, "podReplacementPolicy": "TerminatingOrFailed", "suspend": False,
    }  # fmt: skip
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert spec["template"]["metadata"] == {"labels": {
        "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "burn-in",
        "controller-uid": uid, "job-name": "burn-in",
    }}  # fmt: skip
    pod_spec = spec["template"]["spec"]
    assert (pod_spec["restartPolicy"], pod_spec["containers"][0]["command"]) == (
        "Never",
        ["burn", "--minutes=5"],
    )
    assert "enableServiceLinks" not in pod_spec  # defaulted on pods, not on templates


def test_it_keeps_the_pods_of_a_replicaset_deleted_with_cascade_orphan(
    live: SimCluster, tmp_path: Path
) -> None:
    kubectl_out(tmp_path, "create", "deployment", "web", "--image=nginx:1", "--replicas=2")
    settle(live)
    (rs,) = live.store.list("replicasets", namespace="default")
    rs_name = rs["metadata"]["name"]
    pods = [
        p["metadata"]["name"]
        for p in live.store.list("pods", namespace="default")
        if any(ref["uid"] == rs["metadata"]["uid"] for ref in p["metadata"].get("ownerReferences", []))
    ]
    assert len(pods) == 2
    kubectl_out(tmp_path, "delete", "deployment", "web", "--cascade=orphan")
    assert kubectl_out(tmp_path, "delete", "replicaset", rs_name, "--cascade=orphan") == (
        f'replicaset.apps "{rs_name}" deleted from default namespace\n'
    )
    settle(live)
    left = {p["metadata"]["name"]: p for p in live.store.list("pods", namespace="default")}
    assert set(pods) <= set(left)
    assert all("ownerReferences" not in left[name]["metadata"] for name in pods)


def test_it_creates_services_from_kubectl_with_allocated_addresses(live: SimCluster, tmp_path: Path) -> None:
    assert kubectl_out(tmp_path, "create", "service", "clusterip", "trainer", "--tcp=80:8080") == (
        "service/trainer created\n"
    )
    kubectl_out(tmp_path, "create", "service", "nodeport", "metrics", "--tcp=9400")
    kubectl_out(
        tmp_path, "create", "service", "externalname", "registry", "--external-name=registry.example.com"
    )
    spec = live.store.get("services", "trainer", namespace="default")["spec"]
    assert spec["ports"] == [{"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}]
    assert spec["clusterIPs"] == [spec["clusterIP"]] and spec["clusterIP"].startswith("10.")
    assert (spec["type"], spec["sessionAffinity"], spec["ipFamilies"], spec["ipFamilyPolicy"]) == (
        "ClusterIP", "None", ["IPv4"], "SingleStack",
    )  # fmt: skip
    rows = {
        line.split()[0]: line.split() for line in kubectl_out(tmp_path, "get", "services").splitlines()[1:]
    }
    node_port = live.store.get("services", "metrics", namespace="default")["spec"]["ports"][0]["nodePort"]
    assert 30000 <= node_port <= 32767
    assert rows["metrics"][1:5] == ["NodePort", rows["metrics"][2], "<none>", f"9400:{node_port}/TCP"]
    assert rows["registry"][1:5] == ["ExternalName", "<none>", "registry.example.com", "<none>"]
    assert rows["trainer"][2] == spec["clusterIP"]


def test_it_describes_a_topology_node_as_its_kubelet_registered_it(live: SimCluster, tmp_path: Path) -> None:
    node = live.store.list("nodes")[0]["metadata"]["name"]
    out = kubectl_out(tmp_path, "describe", "node", node)
    lease = out.split("Lease:\n", 1)[1].splitlines()
    assert lease[0].split() == ["HolderIdentity:", node]
    assert lease[2].split()[0] == "RenewTime:" and "0001" not in lease[2]
    conditions = out.split("Conditions:\n", 1)[1].split("Addresses:", 1)[0].splitlines()[2:]
    assert [line.split()[:2] for line in conditions] == [
        ["MemoryPressure", "False"], ["DiskPressure", "False"], ["PIDPressure", "False"], ["Ready", "True"],
    ]  # fmt: skip
    assert "0001" not in "".join(conditions)
    assert "ephemeral-storage:" in out.split("Allocatable:", 1)[1]


def test_it_reports_container_and_image_ids_of_a_started_pod(live: SimCluster, tmp_path: Path) -> None:
    kubectl_out(tmp_path, "create", "deployment", "web", "--image=nginx:1.27")
    settle(live)
    pod = next(
        p for p in live.store.list("pods", namespace="default") if p["metadata"]["name"].startswith("web-")
    )
    out = kubectl_out(tmp_path, "describe", "pod", pod["metadata"]["name"])
    fields = dict(
        line.strip().split(":", 1) for line in out.splitlines() if line.startswith("    ") and ":" in line
    )
    assert fields["Container ID"].strip().startswith("containerd://")
    assert len(fields["Container ID"].strip()) == len("containerd://") + 64
    assert fields["Image ID"].strip().startswith("docker.io/library/nginx@sha256:")


def test_it_drops_the_unavailable_count_of_a_deployment_once_every_replica_is_available(
    live: SimCluster, tmp_path: Path
) -> None:
    kubectl_out(tmp_path, "create", "deployment", "web", "--image=nginx:1", "--replicas=2")
    kubectl_out(tmp_path, "rollout", "status", "deployment/web", "--timeout=30s")
    kubectl_out(tmp_path, "rollout", "restart", "deployment/web")
    kubectl_out(tmp_path, "rollout", "status", "deployment/web", "--timeout=30s")
    settle(live)
    status = live.store.get("deployments", "web", namespace="default")["status"]
    assert (status["replicas"], status["availableReplicas"], status["updatedReplicas"]) == (2, 2, 2)
    assert "unavailableReplicas" not in status
    described = kubectl_out(tmp_path, "describe", "deployment", "web")
    assert (
        "Replicas:               2 desired | 2 updated | 2 total | 2 available | 0 unavailable" in described
    )


def test_it_leaves_the_zero_counts_out_of_a_scaled_down_replica_sets_status(
    live: SimCluster, tmp_path: Path
) -> None:
    kubectl_out(tmp_path, "create", "deployment", "web", "--image=nginx:1", "--replicas=1")
    kubectl_out(tmp_path, "rollout", "status", "deployment/web", "--timeout=30s")
    kubectl_out(tmp_path, "scale", "deployment/web", "--replicas=0")
    kubectl_out(tmp_path, "rollout", "status", "deployment/web", "--timeout=30s")
    settle(live)
    (rs,) = live.store.list("replicasets", namespace="default")
    assert rs["status"] == {"replicas": 0, "observedGeneration": rs["metadata"]["generation"]}


def test_it_creates_the_debugging_pod_of_kubectl_debug_node(live: SimCluster, tmp_path: Path) -> None:
    node = live.store.list("nodes")[0]["metadata"]["name"]
    out = kubectl_out(tmp_path, "debug", f"node/{node}", "--image=busybox:1.37", "--", "sleep", "60")
    (pod,) = [
        p
        for p in live.store.list("pods", namespace="default")
        if p["metadata"]["name"].startswith("node-debugger-")
    ]
    name = pod["metadata"]["name"]
    assert out == f"Creating debugging pod {name} with container debugger on node {node}.\n"
    assert pod["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "kubectl-debug"}
    spec = pod["spec"]
    assert (spec["nodeName"], spec["restartPolicy"], spec["hostNetwork"], spec["hostPID"], spec["hostIPC"]) == (
        node, "Never", True, True, True,
    )  # fmt: skip
    assert spec["volumes"][0] == {"name": "host-root", "hostPath": {"path": "/", "type": ""}}
    (container,) = spec["containers"]
    assert (container["image"], container["command"], container["volumeMounts"][0]) == (
        "busybox:1.37", ["sleep", "60"], {"name": "host-root", "mountPath": "/host"},
    )  # fmt: skip
    assert {"operator": "Exists"} in spec["tolerations"]
