"""managedFields as kubectl 1.37 shows them from a real kube-apiserver (`--show-managed-fields`).

An object, map entry or list item a non-apply write added is owned itself too (``.``); an atomic struct is
one field. The expected trees are what a 1.37 server records.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Kubectl

pytestmark = pytest.mark.kubectl


def _ok(result: Any) -> str:
    assert result.returncode == 0, result.stderr
    return str(result.stdout)


def _entries(kubectl: Kubectl, *target: str) -> list[tuple[str, str, dict[str, Any]]]:
    raw = _ok(kubectl("get", *target, "-o", "jsonpath={.metadata.managedFields}"))
    return [(e["manager"], e["operation"], e["fieldsV1"]) for e in json.loads(raw)]


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


def test_a_label_on_an_object_nobody_recorded_is_recorded_alone(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    """An Update to an object without managedFields (as a controller wrote it) records only what it changed:
    upstream tracks it (track-on-create probability 1) but has no `before-first-apply` for an Update."""
    cluster.store.create(
        "configmaps", {"metadata": {"name": "settings"}, "data": {"mode": "fast"}}, namespace="default"
    )
    _ok(kubectl("label", "configmap", "settings", "tier=gold"))
    assert _entries(kubectl, "configmap", "settings") == [
        ("kubectl-label", "Update", {"f:metadata": {"f:labels": {".": {}, "f:tier": {}}}})
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
