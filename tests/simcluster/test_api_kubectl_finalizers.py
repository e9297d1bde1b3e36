"""Real kubectl 1.37.1 against an object held by a finalizer while it is being deleted."""

from __future__ import annotations

import pytest

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Kubectl

pytestmark = pytest.mark.kubectl

HELD_CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
  finalizers: ["example.com/drain"]
spec: {}
"""


def test_it_refuses_new_finalizers_on_an_object_being_deleted(kubectl: Kubectl, cluster: SimCluster) -> None:
    assert kubectl("apply", "-f", "-", input_text=HELD_CLASS).returncode == 0
    deleted = kubectl("delete", "deviceclass", "gpu.example.com", "--wait=false")
    assert deleted.stdout == 'deviceclass.resource.k8s.io "gpu.example.com" deleted\n'
    added = kubectl(
        "patch", "deviceclass", "gpu.example.com", "--type=merge",
        "-p", '{"metadata":{"finalizers":["example.com/drain","example.com/audit"]}}',
    )  # fmt: skip
    assert added.returncode == 1
    assert added.stderr == (
        'The DeviceClass "gpu.example.com" is invalid: metadata.finalizers: Forbidden: no new finalizers can be '
        'added if the object is being deleted, found new finalizers []string{"example.com/audit"}\n'
    )
    # labels may still change, and removing the finalizer lets the deletion finish
    assert kubectl("label", "deviceclass", "gpu.example.com", "tier=gold").returncode == 0
    removed = kubectl("patch", "deviceclass", "gpu.example.com", "--type=json",
                      "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')  # fmt: skip
    assert removed.returncode == 0, removed.stderr
    assert cluster.store.list("deviceclasses") == []
