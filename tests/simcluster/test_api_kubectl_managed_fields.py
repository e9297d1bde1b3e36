"""managedFields as kubectl 1.37 shows them from a real kube-apiserver (`--show-managed-fields`).

A non-apply write is recorded on the object the request decoded to, the scheme's defaults included, before
mutating admission and the registry's strategy: what those add (a pod's service account, tolerations, token
volume and priority, a taint's timeAdded, a service's cluster IP) is nobody's. An object, map entry or list
item the write added is owned itself too (``.``). The expected trees are what a 1.37 server records.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simcluster.testing import SimCluster, run_simcluster
from tests.simcluster.conftest import Kubectl, kubectl_path
from tests.simcluster.sim_helpers import claim_template, claims_of, pods, settle, template_pod
from tests.simcluster.test_api_kubectl import TAINT_RULE

pytestmark = pytest.mark.kubectl

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: gpu-and-nic
  labels:
    team: ml
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
    constraints:
    - requests: ["gpu"]
      matchAttribute: resource.kubernetes.io/numaNode
"""


def _ok(result: Any) -> str:
    assert result.returncode == 0, result.stderr
    return str(result.stdout)


def _entries(kubectl: Kubectl, *target: str) -> list[tuple[str, str, dict[str, Any]]]:
    raw = _ok(kubectl("get", *target, "-o", "jsonpath={.metadata.managedFields}"))
    return [(e["manager"], e["operation"], e["fieldsV1"]) for e in json.loads(raw)]


def test_kubectl_run_owns_what_it_sent_and_the_defaults_not_what_admission_added(kubectl: Kubectl) -> None:
    _ok(kubectl("run", "p", "--image=nginx"))
    assert _entries(kubectl, "pod", "p") == [
        (
            "kubectl-run",
            "Update",
            {
                "f:metadata": {"f:labels": {".": {}, "f:run": {}}},
                "f:spec": {
                    "f:containers": {
                        'k:{"name":"p"}': {
                            ".": {},
                            "f:image": {},
                            "f:imagePullPolicy": {},
                            "f:name": {},
                            "f:resources": {},
                            "f:terminationMessagePath": {},
                            "f:terminationMessagePolicy": {},
                        }
                    },
                    "f:dnsPolicy": {},
                    "f:enableServiceLinks": {},
                    "f:restartPolicy": {},
                    "f:schedulerName": {},
                    "f:securityContext": {},
                    "f:terminationGracePeriodSeconds": {},
                },
            },
        )
    ]
    pod = json.loads(_ok(kubectl("get", "pod", "p", "-o", "json")))
    # what admission added is there all the same
    assert pod["spec"]["serviceAccountName"] == "default"
    assert pod["spec"]["priority"] == 0
    assert [v["name"][: len("kube-api-access-")] for v in pod["spec"]["volumes"]] == ["kube-api-access-"]


def test_kubectl_create_deployment_marks_the_maps_and_list_items_it_added_with_a_dot(
    kubectl: Kubectl,
) -> None:
    _ok(kubectl("create", "deployment", "web", "--image=nginx", "--port=80"))
    ((manager, operation, fields),) = _entries(kubectl, "deployment", "web")
    assert (manager, operation) == ("kubectl-create", "Update")
    assert fields == {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {
            "f:progressDeadlineSeconds": {},
            "f:replicas": {},
            "f:revisionHistoryLimit": {},
            "f:selector": {},
            "f:strategy": {
                "f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}},
                "f:type": {},
            },
            "f:template": {
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {
                    "f:containers": {
                        'k:{"name":"nginx"}': {
                            ".": {},
                            "f:image": {},
                            "f:imagePullPolicy": {},
                            "f:name": {},
                            "f:ports": {
                                ".": {},
                                'k:{"containerPort":80,"protocol":"TCP"}': {
                                    ".": {},
                                    "f:containerPort": {},
                                    "f:protocol": {},
                                },
                            },
                            "f:resources": {},
                            "f:terminationMessagePath": {},
                            "f:terminationMessagePolicy": {},
                        }
                    },
                    "f:dnsPolicy": {},
                    "f:restartPolicy": {},
                    "f:schedulerName": {},
                    "f:securityContext": {},
                    "f:terminationGracePeriodSeconds": {},
                },
            },
        },
    }


def test_a_created_services_allocated_cluster_ip_is_nobodys(kubectl: Kubectl) -> None:
    _ok(kubectl("create", "service", "clusterip", "db", "--tcp=5432:5432"))
    ((_, _, fields),) = _entries(kubectl, "service", "db")
    assert fields == {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {
            "f:internalTrafficPolicy": {},
            "f:ports": {
                ".": {},
                'k:{"port":5432,"protocol":"TCP"}': {
                    ".": {},
                    "f:name": {},
                    "f:port": {},
                    "f:protocol": {},
                    "f:targetPort": {},
                },
            },
            "f:selector": {},
            "f:sessionAffinity": {},
            "f:type": {},
        },
    }


def test_kubectl_create_of_a_claim_and_a_taint_rule_leaves_the_taints_time_added_to_nobody(
    kubectl: Kubectl,
) -> None:
    _ok(kubectl("create", "-f", "-", input_text=CLAIM))
    assert _entries(kubectl, "resourceclaim", "gpu-and-nic") == [
        (
            "kubectl-create",
            "Update",
            {
                "f:metadata": {"f:labels": {".": {}, "f:team": {}}},
                "f:spec": {"f:devices": {"f:constraints": {}, "f:requests": {}}},
            },
        )
    ]
    _ok(kubectl("create", "-f", "-", input_text=TAINT_RULE))
    assert _entries(kubectl, "devicetaintrule", "gpu-0-maintenance") == [
        (
            "kubectl-create",
            "Update",
            {
                "f:spec": {
                    "f:deviceSelector": {".": {}, "f:device": {}, "f:driver": {}, "f:pool": {}},
                    "f:taint": {"f:effect": {}, "f:key": {}, "f:value": {}},
                }
            },
        )
    ]


def test_a_second_managers_apply_of_an_admission_added_field_does_not_conflict_but_a_defaulted_one_does(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    """The default tolerations are DefaultTolerationSeconds admission's, owned by nobody: another manager may
    apply them (with one more); a container's imagePullPolicy was defaulted at decode, so kubectl run owns it."""
    _ok(kubectl("run", "p", "--image=nginx"))
    defaults = "".join(
        f"  - key: node.kubernetes.io/{key}\n    operator: Exists\n    effect: NoExecute\n"
        "    tolerationSeconds: 300\n"
        for key in ("not-ready", "unreachable")
    )
    applied = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: p\n    image: nginx\n"
        f"  tolerations:\n{defaults}  - key: example.com/gpu\n    operator: Exists\n    effect: NoSchedule\n"
    )
    _ok(kubectl("apply", "--server-side", "--field-manager=gpu-tuner", "-f", "-", input_text=applied))
    tolerations = cluster.store.get("pods", "p", namespace="default")["spec"]["tolerations"]
    assert [t["key"] for t in tolerations] == [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "example.com/gpu",
    ]
    pull = applied.replace("    image: nginx\n", "    image: nginx\n    imagePullPolicy: IfNotPresent\n")
    refused = kubectl("apply", "--server-side", "--field-manager=gpu-tuner", "-f", "-", input_text=pull)
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[0] == (
        'error: Apply failed with 1 conflict: conflict with "kubectl-run" using v1: '
        '.spec.containers[name="p"].imagePullPolicy'
    )


def test_a_second_managers_apply_of_a_taint_rules_time_added_does_not_conflict_with_its_creator(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    _ok(kubectl("create", "-f", "-", input_text=TAINT_RULE))
    stamped = TAINT_RULE + "    timeAdded: 2026-01-01T00:00:00Z\n"
    _ok(kubectl("apply", "--server-side", "--field-manager=maintenance-bot", "-f", "-", input_text=stamped))
    rule = cluster.store.get("devicetaintrules", "gpu-0-maintenance")
    assert rule["spec"]["taint"]["timeAdded"] == "2026-01-01T00:00:00Z"
    changed = stamped.replace("effect: NoSchedule", "effect: NoExecute")
    refused = kubectl(
        "apply", "--server-side", "--field-manager=maintenance-bot", "-f", "-", input_text=changed
    )
    assert refused.stderr.splitlines()[0] == (
        'error: Apply failed with 1 conflict: conflict with "kubectl-create" using resource.k8s.io/v1: '
        ".spec.taint.effect"
    )


def test_a_label_on_an_object_nobody_recorded_leaves_it_unrecorded(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    """An Update of an object without managedFields is not tracked (upstream's skipNonAppliedManager tracks
    from a create or the first apply only); kubectl's edit of one recorded adds its entry."""
    cluster.store.create(
        "configmaps", {"metadata": {"name": "settings"}, "data": {"mode": "fast"}}, namespace="default"
    )
    _ok(kubectl("label", "configmap", "settings", "tier=gold"))
    settings = json.loads(_ok(kubectl("get", "configmap", "settings", "-o", "json")))
    assert settings["metadata"]["labels"] == {"tier": "gold"}
    assert "managedFields" not in settings["metadata"]
    _ok(kubectl("create", "configmap", "limits", "--from-literal=max=4"))
    _ok(kubectl("label", "configmap", "limits", "tier=gold"))
    assert _entries(kubectl, "configmap", "limits") == [
        ("kubectl-create", "Update", {"f:data": {".": {}, "f:max": {}}}),
        ("kubectl-label", "Update", {"f:metadata": {"f:labels": {".": {}, "f:tier": {}}}}),
    ]


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx
"""


def test_a_server_side_apply_owns_a_label_selector_whole(kubectl: Kubectl) -> None:
    """LabelSelector is an atomic struct: owned as one field, as a list item's own entry is its `.`."""
    _ok(kubectl("apply", "--server-side", "-f", "-", input_text=DEPLOYMENT))
    assert _entries(kubectl, "deployment", "web") == [
        (
            "kubectl",
            "Apply",
            {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:selector": {},
                    "f:template": {
                        "f:metadata": {"f:labels": {"f:app": {}}},
                        "f:spec": {
                            "f:containers": {'k:{"name":"nginx"}': {".": {}, "f:image": {}, "f:name": {}}}
                        },
                    },
                },
            },
        )
    ]


def test_a_patch_of_a_taint_rules_effect_owns_the_effect_not_the_time_added_the_strategy_restarted(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    """The strategy restarts the toleration clock when only the effect changes (after the field manager)."""
    _ok(kubectl("create", "-f", "-", input_text=TAINT_RULE + "    timeAdded: 2026-01-01T00:00:00Z\n"))
    patch = '{"spec":{"taint":{"effect":"NoExecute"}}}'
    _ok(kubectl("patch", "devicetaintrule", "gpu-0-maintenance", "--type=merge", "-p", patch))
    taint = cluster.store.get("devicetaintrules", "gpu-0-maintenance")["spec"]["taint"]
    assert taint["timeAdded"] != "2026-01-01T00:00:00Z"
    assert _entries(kubectl, "devicetaintrule", "gpu-0-maintenance") == [
        (
            "kubectl-create",
            "Update",
            {
                "f:spec": {
                    "f:deviceSelector": {".": {}, "f:device": {}, "f:driver": {}, "f:pool": {}},
                    "f:taint": {"f:key": {}, "f:timeAdded": {}, "f:value": {}},
                }
            },
        ),
        ("kubectl-patch", "Update", {"f:spec": {"f:taint": {"f:effect": {}}}}),
    ]


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[SimCluster, Kubectl]]:
    """The tiny topology with its controllers running, and kubectl against it."""
    with run_simcluster(topology="tiny", kubeconfig_path=tmp_path / "kubeconfig") as cluster:
        settle(cluster)

        def run(*args: str, input_text: str | None = None) -> subprocess.CompletedProcess[str]:
            command = [str(kubectl_path()), "--kubeconfig", str(tmp_path / "kubeconfig"),
                       "--cache-dir", str(tmp_path / "cache"), *args]  # fmt: skip
            return subprocess.run(command, input=input_text, capture_output=True, text=True, timeout=60,
                                  env={**os.environ, "HOME": str(tmp_path)})  # fmt: skip

        yield cluster, run


def _managers(kubectl: Kubectl, *target: str) -> list[tuple[str, str, str]]:
    raw = _ok(kubectl("get", *target, "-o", "jsonpath={.metadata.managedFields}"))
    return [(e["manager"], e["operation"], e.get("subresource", "")) for e in json.loads(raw)]


def test_what_the_controllers_wrote_is_recorded_under_their_components_names(
    live: tuple[SimCluster, Kubectl],
) -> None:
    cluster, kubectl = live
    _ok(kubectl("create", "deployment", "web", "--image=nginx"))
    template = claim_template("one-gpu", [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}])
    _ok(kubectl("create", "-f", "-", input_text=json.dumps(template)))
    _ok(kubectl("create", "-f", "-", input_text=json.dumps(template_pod("trainer", "one-gpu"))))
    settle(cluster)
    assert _managers(kubectl, "deployment", "web") == [
        ("kubectl-create", "Update", ""),
        ("kube-controller-manager", "Update", ""),  # the revision annotation
        ("kube-controller-manager", "Update", "status"),
    ]
    ((replica_set,),) = [[r for r in cluster.store.list("replicasets", namespace="default")
                          if r["metadata"]["labels"].get("app") == "web"]]  # fmt: skip
    name, owner = replica_set["metadata"]["name"], replica_set["metadata"]["ownerReferences"][0]["uid"]
    assert _managers(kubectl, "replicaset", name) == [
        ("kube-controller-manager", "Update", ""),
        ("kube-controller-manager", "Update", "status"),
    ]
    ((_, _, created),) = [
        e for e in _entries(kubectl, "replicaset", name) if e[0] == "kube-controller-manager"
    ][:1]
    assert created["f:metadata"]["f:ownerReferences"] == {".": {}, f'k:{{"uid":"{owner}"}}': {}}
    ((web_pod,),) = [[p["metadata"]["name"] for p in pods(cluster, app="web", namespace="default")]]
    assert _managers(kubectl, "pod", web_pod) == [
        ("kube-controller-manager", "Update", ""),
        ("kubelet", "Update", "status"),  # the started pod's conditions, IPs and container statuses
    ]
    assert _managers(kubectl, "pod", "trainer", "-n", "ml") == [
        ("kubectl-create", "Update", ""),
        ("kube-controller-manager", "Update", "status"),  # the claim made for it: resourceClaimStatuses
        ("kubelet", "Update", "status"),
    ]
    (claim,) = claims_of(cluster, cluster.store.get("pods", "trainer", namespace="ml"))
    assert _managers(kubectl, "resourceclaim", claim["metadata"]["name"], "-n", "ml") == [
        ("kube-controller-manager", "Update", ""),  # made from its template
        ("kube-scheduler", "Update", ""),  # the delete-protection finalizer
        ("kube-scheduler", "Update", "status"),  # the allocation and reservation
        ("gpu.example.com", "Update", "status"),  # the driver's device status
    ]
    slices = [s for s in cluster.store.list("resourceslices") if s["spec"]["driver"] == "gpu.example.com"]
    assert _managers(kubectl, "resourceslice", slices[0]["metadata"]["name"]) == [
        ("gpu.example.com", "Update", "")
    ]
