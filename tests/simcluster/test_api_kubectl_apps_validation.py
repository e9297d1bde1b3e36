"""kubectl 1.37.1 writing Deployments and ReplicaSets a real server refuses: negative replicas, a selector
missing, empty, unparsable or changed, a template its selector does not match, a pod template that is no
valid pod of a ReplicaSet. The 422 lists each cause in kube-apiserver's words, bad values in Go's `%#v`."""

from __future__ import annotations

import pytest

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Kubectl

pytestmark = pytest.mark.kubectl

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: -1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: other, tier: front}
    spec:
      restartPolicy: Never
      activeDeadlineSeconds: 60
      containers:
      - name: nginx
        image: ""
"""
REPLICA_SET = """\
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: trainer
spec:
  template:
    metadata:
      labels: {app: trainer}
    spec:
      containers:
      - name: trainer
        image: trainer:1
"""
BAD_OPERATOR = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchExpressions:
    - {key: app, operator: Equals, values: [web]}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
"""


def _refused(kubectl: Kubectl, *args: str, manifest: str | None = None) -> str:
    result = kubectl(*args, input_text=manifest)
    assert result.returncode == 1, result.stdout
    return result.stderr


def test_it_refuses_a_deployment_whose_template_is_no_pod_its_selector_matches(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    assert _refused(kubectl, "apply", "-f", "-", manifest=DEPLOYMENT) == (
        'The Deployment "web" is invalid: \n'
        "* spec.replicas: Invalid value: -1: must be greater than or equal to 0\n"
        '* spec.template.metadata.labels: Invalid value: map[string]string{"app":"other", "tier":"front"}: '
        "`selector` does not match template `labels`\n"
        "* spec.template.spec.containers[0].image: Required value\n"
        '* spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"\n'
        "* spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not "
        "Supported\n"
    )
    assert cluster.store.list("deployments", namespace="default") == []


def test_it_refuses_a_replica_set_without_a_selector(kubectl: Kubectl, cluster: SimCluster) -> None:
    assert _refused(kubectl, "create", "-f", "-", manifest=REPLICA_SET) == (
        'The ReplicaSet "trainer" is invalid: \n'
        "* spec.selector: Required value\n"
        '* spec.template.metadata.labels: Invalid value: map[string]string{"app":"trainer"}: '
        "`selector` does not match template `labels`\n"
    )


def test_it_refuses_a_selector_that_does_not_parse(kubectl: Kubectl) -> None:
    assert _refused(kubectl, "create", "-f", "-", manifest=BAD_OPERATOR) == (
        'The Deployment "web" is invalid: \n'
        '* spec.selector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator\n'
        "* spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
        'MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", '
        'Operator:"Equals", Values:[]string{"web"}}}}: invalid label selector\n'
    )


def test_it_keeps_the_selector_of_a_deployment_and_its_replicas_not_negative(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    assert kubectl("create", "deployment", "web", "--image=nginx:1.27").returncode == 0
    moved = '{"spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}}}}}'
    assert _refused(kubectl, "patch", "deployment", "web", "--type=merge", "-p", moved) == (
        'The Deployment "web" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:'
        'map[string]string{"app":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable\n'
    )
    assert _refused(
        kubectl, "patch", "deployment", "web", "--type=merge", "-p", '{"spec":{"replicas":-3}}'
    ) == (
        'The Deployment "web" is invalid: spec.replicas: Invalid value: -3: must be greater than or equal to 0\n'
    )
    stored = cluster.store.get("deployments", "web", namespace="default")["spec"]
    assert (stored["replicas"], stored["selector"]) == (1, {"matchLabels": {"app": "web"}})
    assert (
        kubectl("patch", "deployment", "web", "--type=merge", "-p", '{"spec":{"replicas":3}}').returncode == 0
    )
