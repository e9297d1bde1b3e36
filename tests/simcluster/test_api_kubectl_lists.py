"""kubectl 1.37.1 writing a `kind: List` (what `kubectl get -o yaml` of several objects prints): kubectl
validates a List itself against /openapi/v2, which it reads in protobuf."""

from __future__ import annotations

import pytest

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Http, Kubectl

pytestmark = pytest.mark.kubectl

LIST = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: first}
  data: {mode: fast}
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.example.com}
  spec:
    selectors:
    - cel: {expression: device.driver == "gpu.example.com"}
"""


def test_it_creates_applies_and_replaces_the_items_of_a_list(kubectl: Kubectl, cluster: SimCluster) -> None:
    created = kubectl("create", "-f", "-", input_text=LIST)
    assert (created.returncode, created.stdout, created.stderr) == (
        0, "configmap/first created\ndeviceclass.resource.k8s.io/gpu.example.com created\n", "",
    )  # fmt: skip
    exported = kubectl("get", "configmap/first", "deviceclass/gpu.example.com", "-o", "yaml").stdout
    assert exported.startswith("apiVersion: v1\nitems:\n")
    replaced = kubectl("replace", "-f", "-", input_text=exported)
    assert (replaced.returncode, replaced.stderr) == (0, "")
    applied = kubectl("apply", "-f", "-", input_text=LIST.replace("fast", "safe"))
    assert applied.returncode == 0, applied.stderr
    assert cluster.store.get("configmaps", "first", namespace="default")["data"] == {"mode": "safe"}


def test_it_serves_the_openapi_v2_document_in_protobuf(http: Http) -> None:
    asked = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
    status, headers, body = http.get("/openapi/v2", headers={"Accept": asked})
    assert (status, headers["Content-Type"]) == (
        200,
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
    )
    # swagger "2.0", info {title "Kubernetes", version "v1.37.1"}, paths {}, definitions {}
    assert body.encode() == b"\n\x032.0\x12\x15\n\nKubernetes\x12\x07v1.37.1B\x00J\x00"
