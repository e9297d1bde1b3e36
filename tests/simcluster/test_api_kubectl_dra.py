"""Real kubectl 1.37.1 on the DRA kinds: what an operator sees from the commands a real v1.37 server answers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Http, Kubectl, kubectl_path
from tests.simcluster.samples import sample
from tests.simcluster.sim_helpers import running, settle

pytestmark = pytest.mark.kubectl

SLICES = '"resource.k8s.io/v1, Resource=resourceslices"'


def _slices(cluster: SimCluster) -> None:
    for name, node in (("node-a-gpu", "node-a"), ("node-b-gpu", "node-b")):
        obj = sample("resourceslices", name=name)
        obj["spec"]["nodeName"] = node
        obj["spec"]["pool"]["name"] = node
        cluster.store.create("resourceslices", obj)


def test_it_selects_resource_slices_only_by_node_driver_and_name(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    _slices(cluster)
    by_node = kubectl("get", "resourceslices", "--field-selector", "spec.nodeName=node-b", "-o", "name")
    assert (by_node.returncode, by_node.stdout) == (0, "resourceslice.resource.k8s.io/node-b-gpu\n")
    # ResourceSlice's conversion knows metadata.name, spec.nodeName and spec.driver, no other field
    for selector, label in (
        ("spec.pool.name=node-a", "spec.pool.name"),
        ("metadata.namespace=x", "metadata.namespace"),
    ):
        refused = kubectl("get", "resourceslices", "--field-selector", selector)
        assert refused.returncode == 1
        assert refused.stderr == (
            f'Error from server (BadRequest): Unable to find {SLICES} that match label selector "", field selector '
            f'"{selector}": field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: {label}\n'
        )


def test_it_words_an_unknown_field_label_of_the_other_dra_kinds_as_the_generic_conversion(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    cluster.store.create("resourceclaims", sample("resourceclaims", namespace="default"))
    refused = kubectl("get", "resourceclaims", "--field-selector", "spec.devices=x")
    assert refused.returncode == 1
    assert refused.stderr.endswith(
        ': "spec.devices" is not a known field selector: only "metadata.name", "metadata.namespace"\n'
    )
    named = kubectl(
        "get", "resourceclaims", "-A", "--field-selector", "metadata.namespace=default", "-o", "name"
    )
    assert (named.returncode, named.stdout) == (0, "resourceclaim.resource.k8s.io/gpu-claim\n")


def test_it_takes_metadata_namespace_on_a_cluster_scoped_dra_kind_as_the_empty_string(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    cluster.store.create("deviceclasses", sample("deviceclasses"))
    none = kubectl("get", "deviceclasses", "--field-selector", "metadata.namespace=default")
    assert (none.returncode, none.stdout, none.stderr) == (0, "", "No resources found\n")
    every = kubectl("get", "deviceclasses", "--field-selector", "metadata.namespace=", "-o", "name")
    assert (every.returncode, every.stdout) == (0, "deviceclass.resource.k8s.io/gpu.example.com\n")


def test_it_shows_a_deleted_allocated_claim_without_a_deallocating_state(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    allocation = {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "node-a", "device": "gpu-0"}]}}  # fmt: skip
    for name, reserved in (("held", True), ("released", False)):
        claim = sample("resourceclaims", name=name, namespace="default", finalizers=["example.com/hold"])
        cluster.store.create("resourceclaims", claim)
        status: dict[str, object] = {"allocation": allocation}
        if reserved:
            status["reservedFor"] = [{"resource": "pods", "name": "trainer", "uid": "0000-1"}]
        cluster.store.patch(
            "resourceclaims", name, {"status": status}, namespace="default", subresource="status"
        )
        cluster.store.delete("resourceclaims", name, namespace="default")
    states = kubectl("get", "resourceclaims", "--no-headers")
    assert [line.split()[:2] for line in states.stdout.splitlines()] == [
        ["held", "deleted,allocated,reserved"],
        ["released", "deleted,allocated"],
    ]


def test_it_drops_the_device_status_of_devices_a_status_update_deallocates(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    results = [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "node-a", "device": f"gpu-{i}"}
        for i in (0, 1)
    ]
    devices = [{"driver": "gpu.example.com", "pool": "node-a", "device": f"gpu-{i}"} for i in (0, 1)]
    claim = sample("resourceclaims", name="trained", namespace="default")
    claim["spec"]["devices"]["requests"][0]["exactly"].update({"allocationMode": "ExactCount", "count": 2})
    cluster.store.create("resourceclaims", claim)
    status = {"allocation": {"devices": {"results": results}}, "devices": devices}
    cluster.store.patch(
        "resourceclaims", "trained", {"status": status}, namespace="default", subresource="status"
    )
    # a deallocation that leaves the drivers' device status behind: the status strategy drops it, no 422
    cleared = kubectl("patch", "resourceclaim", "trained", "--subresource=status", "--type=merge",
                      "-p", '{"status":{"allocation":null}}', "-o", "jsonpath={.status}")  # fmt: skip
    assert (cleared.returncode, cleared.stderr, cleared.stdout) == (0, "", "{}")
    # only the status of a device still allocated stays; one of a device never allocated is still refused
    cluster.store.patch(
        "resourceclaims", "trained", {"status": status}, namespace="default", subresource="status"
    )
    shrunk = {"status": {"allocation": {"devices": {"results": results[:1]}}}}
    refused = kubectl("patch", "resourceclaim", "trained", "--subresource=status", "--type=merge",
                      "-p", json.dumps(shrunk))  # fmt: skip
    assert refused.returncode == 1
    assert refused.stderr == (
        'The ResourceClaim "trained" is invalid: status.allocation: Invalid value: "object": field is immutable\n'
    )
    stray = {
        "status": {"devices": [*devices, {"driver": "gpu.example.com", "pool": "node-a", "device": "gpu-9"}]}
    }
    refused = kubectl("patch", "resourceclaim", "trained", "--subresource=status", "--type=merge",
                      "-p", json.dumps(stray))  # fmt: skip
    assert (
        'status.devices[2]: Invalid value: "gpu.example.com/node-a/gpu-9": must be an allocated device'
        in (refused.stderr)
    )


def test_it_keeps_a_claim_allocated_through_its_status_until_a_consumer_releases_it(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    with running(kubeconfig_path=kubeconfig) as (cluster, _, _):

        def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
            command = [
                str(kubectl_path()),
                "--kubeconfig",
                str(kubeconfig),
                "--cache-dir",
                str(tmp_path),
                *args,
            ]
            return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)

        claim = sample("resourceclaims", name="driver-allocated", namespace="ml")
        cluster.store.create("resourceclaims", claim)
        allocation = {"devices": {"results": [
            {"request": "gpu", "driver": "gpu.example.com", "pool": "worker-00", "device": "gpu-7"}]}}  # fmt: skip
        patched = kubectl("patch", "resourceclaim", "driver-allocated", "-n", "ml", "--subresource=status",
                          "--type=merge", "-p", json.dumps({"status": {"allocation": allocation}}))  # fmt: skip
        assert patched.returncode == 0, patched.stderr
        settle(cluster)
        shown = kubectl("get", "resourceclaim", "driver-allocated", "-n", "ml", "--no-headers")
        assert shown.stdout.split()[:2] == ["driver-allocated", "allocated"]


def test_it_returns_and_stores_no_empty_optional_lists_or_maps(kubectl: Kubectl) -> None:
    manifest = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "empty.example.com", "labels": {}, "annotations": {}, "finalizers": []},
        "spec": {"selectors": [], "config": []},
    }
    created = kubectl("create", "-f", "-", "-o", "json", input_text=json.dumps(manifest))
    assert created.returncode == 0, created.stderr
    body = json.loads(created.stdout)
    assert set(body["metadata"]) == {"name", "uid", "resourceVersion", "generation", "creationTimestamp"}
    assert body["spec"] == {}
    manifest["metadata"]["name"] = "selecting.example.com"
    manifest["spec"]["selectors"] = [{"cel": {"expression": "true"}}]
    assert kubectl("create", "-f", "-", input_text=json.dumps(manifest)).returncode == 0
    patched = kubectl(
        "patch", "deviceclass", "selecting.example.com", "--type=merge", "-p", '{"spec":{"selectors":[]}}'
    )
    assert patched.stdout == "deviceclass.resource.k8s.io/selecting.example.com patched\n"
    stored = kubectl("get", "deviceclass", "selecting.example.com", "-o", "jsonpath={.spec}")
    assert stored.stdout == "{}"


def test_it_refuses_an_update_of_a_device_taint_rule_without_its_resource_version(
    http: Http, cluster: SimCluster
) -> None:
    cluster.store.create("devicetaintrules", sample("devicetaintrules"))
    path = "/apis/resource.k8s.io/v1/devicetaintrules/drain-node-a"
    unconditional = sample("devicetaintrules")
    status, _, body = http.request("PUT", path, unconditional)
    assert (status, body["reason"], body["message"]) == (
        422,
        "Invalid",
        'devicetaintrules.resource.k8s.io "drain-node-a" is invalid: metadata.resourceVersion: '
        "Invalid value: 0x0: must be specified for an update",
    )
    assert body["details"]["kind"] == "devicetaintrules"
    _, _, live = http.get(path)
    unconditional["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"]
    assert http.request("PUT", path, unconditional)[0] == 200
    # the other DRA kinds take an unconditional update, as their strategies allow
    cluster.store.create("deviceclasses", sample("deviceclasses"))
    status, _, _ = http.request(
        "PUT", "/apis/resource.k8s.io/v1/deviceclasses/gpu.example.com", sample("deviceclasses")
    )
    assert status == 200


def test_it_answers_the_deletion_of_a_device_taint_rule_with_a_status(
    http: Http, cluster: SimCluster, kubectl: Kubectl
) -> None:
    rule = cluster.store.create("devicetaintrules", sample("devicetaintrules"))
    status, _, body = http.request("DELETE", "/apis/resource.k8s.io/v1/devicetaintrules/drain-node-a")
    assert (status, body) == (200, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
        "details": {"name": "drain-node-a", "group": "resource.k8s.io", "kind": "devicetaintrules",
                    "uid": rule["metadata"]["uid"]}})  # fmt: skip
    # a device class comes back whole, as its registry returns the deleted object
    cluster.store.create("deviceclasses", sample("deviceclasses"))
    status, _, body = http.request("DELETE", "/apis/resource.k8s.io/v1/deviceclasses/gpu.example.com")
    assert (status, body["kind"]) == (200, "DeviceClass")
    cluster.store.create("devicetaintrules", sample("devicetaintrules"))
    deleted = kubectl("delete", "devicetaintrule", "drain-node-a")
    assert deleted.stdout == 'devicetaintrule.resource.k8s.io "drain-node-a" deleted\n'


def test_it_takes_an_uppercase_driver_name_with_the_registrys_warning(kubectl: Kubectl) -> None:
    upper = sample("resourceslices", name="upper")
    upper["spec"]["driver"] = "GPU.Example.com"
    upper["spec"]["devices"][0]["attributes"] = {"GPU.Example.com/model": {"string": "h200"}}
    created = kubectl("create", "-f", "-", input_text=json.dumps(upper))
    assert (created.returncode, created.stdout) == (0, "resourceslice.resource.k8s.io/upper created\n")
    assert created.stderr == (
        'Warning: spec.driver: driver names should be lowercase; "GPU.Example.com" contains uppercase characters\n'
    )
    bad = sample("resourceslices", name="bad")
    bad["spec"]["driver"] = "GPU_Example.com"
    refused = kubectl("create", "-f", "-", input_text=json.dumps(bad))
    assert refused.returncode == 1
    assert 'spec.driver: Invalid value: "GPU_Example.com": a lowercase RFC 1123 subdomain' in refused.stderr


def test_it_shows_the_empty_status_of_a_fresh_claim_and_rule(kubectl: Kubectl) -> None:
    claim = json.dumps(sample("resourceclaims", namespace="default"))
    for dry_run in ("--dry-run=server", "--dry-run=none"):
        created = kubectl("create", "-f", "-", "-o", "json", dry_run, input_text=claim)
        assert json.loads(created.stdout)["status"] == {}, created.stderr
    assert kubectl("get", "resourceclaim", "gpu-claim", "-o", "jsonpath={.status}").stdout == "{}"
    assert kubectl("create", "-f", "-", input_text=json.dumps(sample("devicetaintrules"))).returncode == 0
    rule = json.loads(kubectl("get", "devicetaintrule", "drain-node-a", "-o", "json").stdout)
    assert rule["status"] == {}


def test_it_grants_admin_access_only_in_a_namespace_labelled_for_it(kubectl: Kubectl) -> None:
    devices = {
        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "adminAccess": True}}]
    }
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "monitor"},
             "spec": {"devices": devices}}  # fmt: skip
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "monitor"},
                "spec": {"spec": {"devices": devices}}}  # fmt: skip
    refused = kubectl("create", "-f", "-", "-n", "default", input_text=json.dumps(claim))
    assert (refused.returncode, refused.stderr) == (
        1,
        'The ResourceClaim "monitor" is invalid: spec.devices.requests[0].adminAccess: Forbidden: admin access to '
        "devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace\n",
    )
    # a template's request is named as a claim's, as upstream's shared check does
    refused = kubectl("create", "-f", "-", "-n", "default", input_text=json.dumps(template))
    assert (
        'The ResourceClaimTemplate "monitor" is invalid: spec.devices.requests[0].adminAccess: Forbidden'
        in (refused.stderr)
    )
    assert kubectl("create", "namespace", "monitoring").returncode == 0
    assert (
        kubectl("label", "namespace", "monitoring", "resource.kubernetes.io/admin-access=true").returncode
        == 0
    )
    for obj in (claim, template):
        created = kubectl("create", "-f", "-", "-n", "monitoring", input_text=json.dumps(obj))
        assert created.returncode == 0, created.stderr


def test_it_writes_back_device_capacities_in_their_canonical_form(kubectl: Kubectl) -> None:
    manifest = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-a-gpu
spec:
  driver: gpu.example.com
  nodeName: node-a
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    capacity:
      memory: {value: 1024Mi}
      cores: {value: "0.5"}
      slots: {value: 2000m}
      bandwidth: {value: 1e3}
"""
    created = kubectl("create", "-f", "-", "-o", "jsonpath={.spec.devices[0].capacity}", input_text=manifest)
    assert json.loads(created.stdout) == {
        "memory": {"value": "1Gi"}, "cores": {"value": "500m"}, "slots": {"value": "2"}, "bandwidth": {"value": "1k"},
    }  # fmt: skip
