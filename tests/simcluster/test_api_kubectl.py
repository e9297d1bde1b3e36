"""Real kubectl 1.37.1 against simcluster: discovery, the guide's commands and YAMLs, apply, get -w, delete."""

from __future__ import annotations

import json
import queue
import threading
from pathlib import Path

import pytest
import yaml

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Kubectl, kubectl_popen

pytestmark = pytest.mark.kubectl

DEVICE_CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com"
  extendedResourceName: example.com/gpu
"""
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
  - name: trainer
    image: registry.example.com/trainer:1.4
    resources:
      limits:
        example.com/gpu: 1
"""
TAINT_RULE = """\
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata:
  name: gpu-0-maintenance
spec:
  deviceSelector:
    driver: gpu.example.com
    pool: worker-07
    device: gpu-0
  taint:
    key: example.com/maintenance
    value: firmware-update
    effect: NoSchedule     # None, NoSchedule or NoExecute
"""
CLAIM_TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpu-burn-in
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
          tolerations:
          - key: example.com/maintenance
            operator: Exists
            effect: NoSchedule
"""
NUMA_CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: gpu-and-nic
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
    - name: nic
      exactly:
        deviceClassName: nic.example.com
    constraints:
    - requests: ["gpu", "nic"]
      matchAttribute: resource.kubernetes.io/numaNode
"""


def _ok(result: object) -> str:
    assert getattr(result, "returncode", 1) == 0, getattr(result, "stderr", "")
    return str(getattr(result, "stdout", ""))


def test_it_lists_api_versions(kubectl: Kubectl) -> None:
    lines = _ok(kubectl("api-versions")).splitlines()
    assert [line for line in lines if "resource.k8s.io" in line] == [
        "resource.k8s.io/v1",
        "resource.k8s.io/v1alpha3",
    ]
    assert {"v1", "policy/v1", "apps/v1"} <= set(lines)


def test_it_lists_the_dra_api_resources(kubectl: Kubectl) -> None:
    out = _ok(kubectl("api-resources", "--api-group=resource.k8s.io", "-o", "wide"))
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:]}
    assert set(rows) == {
        "deviceclasses",
        "devicetaintrules",
        "resourceclaims",
        "resourceclaimtemplates",
        "resourcepoolstatusrequests",
        "resourceslices",
    }
    assert rows["resourceclaims"][1:4] == ["resource.k8s.io/v1", "true", "ResourceClaim"]
    assert rows["devicetaintrules"][1:4] == ["resource.k8s.io/v1", "false", "DeviceTaintRule"]
    assert rows["resourcepoolstatusrequests"][1] == "resource.k8s.io/v1alpha3"
    assert "create,delete,deletecollection,get,list,patch,update,watch" in out


def test_it_knows_the_core_short_names(kubectl: Kubectl) -> None:
    out = _ok(kubectl("api-resources", "--api-group="))
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:]}
    assert {name: short for name, short in rows.items() if short != "v1"} == {
        "configmaps": "cm", "events": "ev", "namespaces": "ns", "nodes": "no", "pods": "po", "serviceaccounts": "sa",
        "services": "svc", "endpoints": "ep", "persistentvolumeclaims": "pvc", "persistentvolumes": "pv",
        "replicationcontrollers": "rc",
    }  # fmt: skip
    assert _ok(kubectl("get", "ns", "-o", "name")).split() == [
        "namespace/default",
        "namespace/kube-node-lease",
        "namespace/kube-public",
        "namespace/kube-system",
    ]


def test_it_offers_no_deletecollection_of_namespaces(kubectl: Kubectl) -> None:
    out = _ok(kubectl("api-resources", "--api-group=", "-o", "wide"))
    verbs = {
        line.split()[0]: line.split()[-2 if line.split()[-1] == "all" else -1]
        for line in out.splitlines()[1:]
    }
    assert verbs["namespaces"] == "create,delete,get,list,patch,update,watch"
    assert verbs["nodes"] == "create,delete,deletecollection,get,list,patch,update,watch"
    refused = kubectl("delete", "--raw", "/api/v1/namespaces")
    assert refused.returncode == 1
    assert "(MethodNotAllowed)" in refused.stderr
    assert len(_ok(kubectl("get", "ns", "-o", "name")).split()) == 4


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        (DEVICE_CLASS, "deviceclass.resource.k8s.io/gpu.example.com created"),
        (POD, "pod/trainer created"),
        (TAINT_RULE, "devicetaintrule.resource.k8s.io/gpu-0-maintenance created"),
        (CLAIM_TEMPLATE, "resourceclaimtemplate.resource.k8s.io/gpu-burn-in created"),
        (NUMA_CLAIM, "resourceclaim.resource.k8s.io/gpu-and-nic created"),
    ],
)
def test_it_applies_the_guide_yamls(
    kubectl: Kubectl, cluster: SimCluster, manifest: str, expected: str
) -> None:
    assert _ok(kubectl("apply", "-f", "-", input_text=manifest)).strip() == expected
    rv = cluster.store.resource_version
    # Re-applying may send a patch (atomic lists differ from the defaulted live object) but changes nothing.
    again = _ok(kubectl("apply", "-f", "-", input_text=manifest)).strip()
    assert again in (expected.replace("created", "unchanged"), expected.replace("created", "configured"))
    assert cluster.store.resource_version == rv


def test_it_applies_server_side_and_reports_field_changes(kubectl: Kubectl, cluster: SimCluster) -> None:
    assert "serverside-applied" in _ok(kubectl("apply", "--server-side", "-f", "-", input_text=TAINT_RULE))
    changed = TAINT_RULE.replace("effect: NoSchedule ", "effect: NoExecute ")
    _ok(kubectl("apply", "--server-side", "-f", "-", input_text=changed))
    rule = cluster.store.get("devicetaintrules", "gpu-0-maintenance")
    assert rule["spec"]["taint"]["effect"] == "NoExecute"
    assert rule["metadata"]["generation"] == 2


def test_server_side_apply_over_an_object_without_managed_fields_conflicts_with_before_first_apply(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    """An object nobody's apply or update recorded (no managedFields, as the simulated controllers write them):
    upstream first gives its fields to `before-first-apply`, so changing one conflicts until forced."""
    cluster.store.create("deviceclasses", yaml_doc(DEVICE_CLASS))
    changed = DEVICE_CLASS.replace("example.com/gpu", "example.com/accelerator")
    refused = kubectl("apply", "--server-side", "-f", "-", input_text=changed)
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[0] == (
        'error: Apply failed with 1 conflict: conflict with "before-first-apply" using resource.k8s.io/v1: '
        ".spec.extendedResourceName"
    )
    assert (
        cluster.store.get("deviceclasses", "gpu.example.com")["spec"]["extendedResourceName"]
        == "example.com/gpu"
    )
    _ok(kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input_text=changed))
    entries = json.loads(
        _ok(kubectl("get", "deviceclass", "gpu.example.com", "-o", "jsonpath={.metadata.managedFields}"))
    )
    assert [(e["manager"], e["operation"], e["fieldsV1"]) for e in entries] == [
        ("before-first-apply", "Update", {"f:spec": {"f:selectors": {}}}),
        ("kubectl", "Apply", {"f:spec": {"f:extendedResourceName": {}, "f:selectors": {}}}),
    ]


def yaml_doc(text: str) -> dict:
    doc: dict = yaml.safe_load(text)
    return doc


def test_it_prints_rule_conditions_with_the_guides_jsonpath(kubectl: Kubectl, cluster: SimCluster) -> None:
    _ok(kubectl("apply", "-f", "-", input_text=TAINT_RULE))
    condition = {
        "type": "EvictionInProgress",
        "status": "False",
        "reason": "Completed",
        "message": "0 pods evicted",
        "lastTransitionTime": "2026-09-01T10:00:00Z",
        "observedGeneration": 1,
    }
    cluster.store.patch(
        "devicetaintrules", "gpu-0-maintenance", {"status": {"conditions": [condition]}}, subresource="status"
    )
    out = _ok(kubectl("get", "devicetaintrule", "gpu-0-maintenance", "-o", "jsonpath={.status.conditions}"))
    assert json.loads(out) == [condition]


def test_it_prints_claim_device_status_with_the_guides_jsonpath(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    cluster.store.create("namespaces", {"metadata": {"name": "ml"}})
    cluster.store.create("resourceclaims", json_claim("trainer-gpu-abc12"), namespace="ml")
    result = {"request": "nic", "driver": "nic.example.com", "pool": "worker-07", "device": "nic-0"}
    status = {
        "allocation": {"devices": {"results": [result]}},
        "devices": [
            {
                "driver": "nic.example.com",
                "pool": "worker-07",
                "device": "nic-0",
                "networkData": {"interfaceName": "net1", "ips": ["10.9.8.7/24"]},
            }
        ],
    }
    cluster.store.patch(
        "resourceclaims", "trainer-gpu-abc12", {"status": status}, namespace="ml", subresource="status"
    )
    template = '{range .status.devices[*]}{.device}{"\\t"}{.networkData.interfaceName}{"\\t"}{.networkData.ips}{"\\n"}{end}'
    out = _ok(kubectl("get", "resourceclaim", "-n", "ml", "trainer-gpu-abc12", "-o", f"jsonpath={template}"))
    assert out == 'nic-0\tnet1\t["10.9.8.7/24"]\n'


def json_claim(name: str) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {
            "devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": "nic.example.com"}}]}
        },
    }


def test_it_prints_tables_like_a_real_server(kubectl: Kubectl, cluster: SimCluster) -> None:
    cluster.store.create(
        "nodes",
        {"metadata": {"name": "worker-07", "labels": {"node-role.kubernetes.io/gpu": ""}},
         "status": {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.37.1"}}},
    )  # fmt: skip
    _ok(kubectl("apply", "-f", "-", input_text=POD))
    _ok(kubectl("apply", "-f", "-", input_text=NUMA_CLAIM))
    nodes = _ok(kubectl("get", "nodes")).splitlines()
    assert nodes[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert nodes[1].split()[:3] == ["worker-07", "Ready", "gpu"]
    assert nodes[1].split()[-1] == "v1.37.1"
    pods = _ok(kubectl("get", "pods")).splitlines()
    assert pods[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert pods[1].split()[:4] == ["trainer", "0/1", "Pending", "0"]
    claims = _ok(kubectl("get", "resourceclaims")).splitlines()
    assert claims[0].split() == ["NAME", "STATE", "AGE"]
    assert claims[1].split()[:2] == ["gpu-and-nic", "pending"]


def test_kubectl_get_pods_reads_init_containers_crashes_and_restarts_as_dradash_does(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    """STATUS, READY and RESTARTS come from dra.pods.pod_status, the rule dradash's Pods list shows."""

    def pod(name: str, spec: dict, status: dict) -> None:
        scheduled = [{"type": "PodScheduled", "status": "True"}]
        meta = {"name": name, "namespace": "default"}
        cluster.store.create(
            "pods", {"metadata": meta, "spec": {"nodeName": "worker-07", **spec}}, namespace="default"
        )
        cluster.store.patch(
            "pods",
            name,
            {"status": {"conditions": scheduled, **status}},
            namespace="default",
            subresource="status",
        )

    main = [{"name": "main", "image": "registry.example.com/app:1"}]
    pod(
        "warming-up",
        {"initContainers": [{"name": "fetch", "image": "registry.example.com/fetch:1"}], "containers": main},
        {
            "phase": "Pending",
            "initContainerStatuses": [
                {"name": "fetch", "ready": False, "restartCount": 0, "state": {"running": {}}}
            ],
        },
    )
    pod("crashing", {"containers": main},
        {"phase": "Running", "containerStatuses": [{"name": "main", "ready": False, "restartCount": 6,
                                                    "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]})  # fmt: skip
    rows = {line.split()[0]: line.split()[1:4] for line in _ok(kubectl("get", "pods")).splitlines()[1:]}
    assert rows["warming-up"] == ["0/1", "Init:0/1", "0"]
    assert rows["crashing"] == ["0/1", "CrashLoopBackOff", "6"]


def test_it_streams_changes_to_kubectl_get_watch(
    cluster: SimCluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    _ok(kubectl("apply", "-f", "-", input_text=TAINT_RULE))
    process = kubectl_popen(cluster, tmp_path, "get", "devicetaintrules", "-w", "-o", "name")
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout or []], daemon=True).start()
    try:
        assert lines.get(timeout=30).strip() == "devicetaintrule.resource.k8s.io/gpu-0-maintenance"
        cluster.store.create(
            "devicetaintrules",
            {"metadata": {"name": "second"},
             "spec": {"deviceSelector": {"driver": "gpu.example.com"}, "taint": {"key": "example.com/x", "effect": "None"}}},
        )  # fmt: skip
        assert lines.get(timeout=30).strip() == "devicetaintrule.resource.k8s.io/second"
    finally:
        process.terminate()
        process.wait(10)


def test_it_streams_table_rows_to_kubectl_get_watch(
    cluster: SimCluster, kubectl: Kubectl, tmp_path: Path
) -> None:
    process = kubectl_popen(cluster, tmp_path, "get", "namespaces", "-w")
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout or []], daemon=True).start()
    try:
        assert lines.get(timeout=30).split() == ["NAME", "STATUS", "AGE"]
        for _ in range(4):
            lines.get(timeout=30)
        cluster.store.create("namespaces", {"metadata": {"name": "team-b"}})
        assert lines.get(timeout=30).split()[:2] == ["team-b", "Active"]
    finally:
        process.terminate()
        process.wait(10)


def test_it_deletes_with_kubectl(kubectl: Kubectl, cluster: SimCluster) -> None:
    _ok(kubectl("apply", "-f", "-", input_text=TAINT_RULE))
    _ok(kubectl("apply", "-f", "-", input_text=POD))
    assert _ok(kubectl("delete", "-f", "-", input_text=TAINT_RULE)).strip() == (
        'devicetaintrule.resource.k8s.io "gpu-0-maintenance" deleted'
    )
    assert "deleted" in _ok(kubectl("delete", "pod", "trainer"))
    assert cluster.store.list("devicetaintrules") == []
    assert cluster.store.list("pods") == []


def test_it_reports_validation_errors_through_kubectl(kubectl: Kubectl, cluster: SimCluster) -> None:
    bad = TAINT_RULE.replace("effect: NoSchedule ", "effect: PreferNoSchedule ")
    result = kubectl("apply", "-f", "-", input_text=bad)
    assert result.returncode != 0
    assert (
        'DeviceTaintRule "gpu-0-maintenance" is invalid: spec.taint.effect: Unsupported value: "PreferNoSchedule"'
        in result.stderr
    )
    assert cluster.store.list("devicetaintrules") == []


def test_it_explains_dra_fields(kubectl: Kubectl) -> None:
    out = _ok(kubectl("explain", "devicetaintrule.spec.taint.effect"))
    assert "KIND:       DeviceTaintRule" in out
    assert "effect" in out


def test_it_explains_kinds_without_pinning_api_version_and_kind(kubectl: Kubectl) -> None:
    out = _ok(kubectl("explain", "deviceclass"))
    fields = out.split("FIELDS:\n", 1)[1].splitlines()
    assert fields[0] == "  apiVersion\t<string>"
    assert fields[1].startswith("    APIVersion defines the versioned schema")
    assert "enum:" not in out


def test_kubectl_explain_names_quantities_and_int_or_strings_and_describes_them(kubectl: Kubectl) -> None:
    """As against a real server: a Quantity is `<Quantity>`, not `<string>`, and its description follows the
    field's."""
    resources = _ok(kubectl("explain", "pods.spec.containers.resources"))
    assert "  limits\t<map[string]Quantity>" in resources.splitlines()
    assert "  requests\t<map[string]Quantity>" in resources.splitlines()
    requests = _ok(kubectl("explain", "resourceclaims.spec.devices.requests.exactly.capacity", "--recursive"))
    assert "  requests\t<map[string]Quantity>" in requests.splitlines()
    value = _ok(kubectl("explain", "resourceslices.spec.devices.capacity.value"))
    assert "FIELD: value <Quantity>" in value
    assert "Quantity is a fixed-point representation of a number." in value
    max_surge = _ok(kubectl("explain", "deployments.spec.strategy.rollingUpdate.maxSurge"))
    assert "FIELD: maxSurge <IntOrString>" in max_surge
    assert "IntOrString is a type that can hold an int32 or a string." in max_surge


def test_it_shows_the_empty_selector_warning_in_kubectl(kubectl: Kubectl) -> None:
    everything = TAINT_RULE.replace(
        "  deviceSelector:\n    driver: gpu.example.com\n    pool: worker-07\n    device: gpu-0\n",
        "  deviceSelector: {}\n",
    )
    result = kubectl("apply", "-f", "-", input_text=everything)
    assert result.returncode == 0, result.stderr
    warning = result.stderr.splitlines()[0]
    assert warning.startswith("Warning: ") and "deviceSelector" in warning


def test_it_refuses_unknown_fields_from_kubectl_as_strict_decoding_errors(kubectl: Kubectl) -> None:
    result = kubectl(
        "apply",
        "-f",
        "-",
        input_text=TAINT_RULE.replace("    key: example", "    colour: red\n    key: example"),
    )
    assert result.returncode != 0
    assert 'strict decoding error: unknown field "spec.taint.colour"' in result.stderr


def test_it_answers_kubectl_cluster_info(kubectl: Kubectl, cluster: SimCluster) -> None:
    out = _ok(kubectl("cluster-info"))
    assert f"Kubernetes control plane is running at {cluster.url}" in out
    services = _ok(kubectl("get", "svc")).splitlines()
    assert services[0].split() == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert services[1].split()[:5] == ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]


def test_it_lists_the_health_checks_for_kubectl_get_raw_verbose(kubectl: Kubectl) -> None:
    ready = _ok(kubectl("get", "--raw", "/readyz?verbose")).splitlines()
    assert ready[:5] == [
        "[+]ping ok",
        "[+]log ok",
        "[+]etcd ok",
        "[+]etcd-readiness ok",
        "[+]informer-sync ok",
    ]
    assert ready[-2:] == ["[+]shutdown ok", "readyz check passed"]
    live = _ok(kubectl("get", "--raw", "/livez?verbose&exclude=etcd&exclude=nope")).splitlines()
    assert "[+]etcd excluded: ok" in live and "[+]shutdown ok" not in live
    assert live[-2:] == [
        'warn: some health checks cannot be excluded: no matches for "nope"',
        "livez check passed",
    ]
    assert _ok(kubectl("get", "--raw", "/readyz/poststarthook/rbac/bootstrap-roles")) == "ok"
    assert _ok(kubectl("get", "--raw", "/healthz")) == "ok"
    missing = kubectl("get", "--raw", "/readyz/no-such-check")
    assert missing.returncode == 1
    assert "(NotFound)" in missing.stderr


def test_it_words_a_mistyped_label_selector_as_labels_parse_does(kubectl: Kubectl) -> None:
    missing_comma = kubectl("get", "resourceslices", "-l", "driver=gpu.example.com pool=worker-07")
    assert missing_comma.returncode == 1
    assert missing_comma.stderr.strip().endswith("found 'pool', expected: ',' or 'end of string'")
    bad_key = kubectl("get", "resourceslices", "-l", "-driver=x")
    assert 'unable to parse requirement: <nil>: Invalid value: "-driver": name part must' in bad_key.stderr


def test_it_refuses_a_json_patch_that_does_not_apply_in_a_real_servers_words(kubectl: Kubectl) -> None:
    _ok(kubectl("apply", "-f", "-", input_text=TAINT_RULE))
    for operation in (
        '[{"op":"remove","path":"/metadata/labels/team"}]',
        '[{"op":"test","path":"/spec/taint/value","value":"drain"}]',
    ):
        refused = kubectl("patch", "devicetaintrule", "gpu-0-maintenance", "--type=json", "-p", operation)
        assert (refused.returncode, refused.stderr) == (
            1,
            "The request is invalid: the server rejected our request due to an error in our request\n",
        )


def test_it_admits_pods_as_the_default_admission_plugins_do(kubectl: Kubectl, cluster: SimCluster) -> None:
    _ok(kubectl("apply", "-f", "-", input_text=POD))
    pod = json.loads(_ok(kubectl("get", "pod", "trainer", "-o", "json")))
    spec = pod["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("default", "default")
    assert spec["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
    ]  # fmt: skip
    (volume,) = spec["volumes"]
    assert (
        volume["name"].startswith("kube-api-access-") and len(volume["name"]) == len("kube-api-access-") + 5
    )
    assert [next(iter(source)) for source in volume["projected"]["sources"]] == [
        "serviceAccountToken", "configMap", "downwardAPI",
    ]  # fmt: skip
    assert spec["containers"][0]["volumeMounts"] == [
        {
            "name": volume["name"],
            "readOnly": True,
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
        }
    ]
    described = _ok(kubectl("describe", "pod", "trainer"))
    assert "node.kubernetes.io/not-ready:NoExecute op=Exists for 300s" in described


def test_it_refuses_a_pod_whose_service_account_does_not_exist_as_the_admission_plugin_does(
    kubectl: Kubectl,
) -> None:
    named = kubectl("run", "x", "--image=y", '--overrides={"spec":{"serviceAccountName":"nope"}}')
    assert (named.returncode, named.stderr) == (
        1,
        'Error from server (Forbidden): pods "x" is forbidden: error looking up service account '
        'default/nope: serviceaccount "nope" not found\n',
    )
    # admission sees the request's generateName (the name is generated later), and runs before validation
    generated = kubectl("create", "-f", "-", input_text=(
        "apiVersion: v1\nkind: Pod\nmetadata: {generateName: gen-}\n"
        "spec: {serviceAccountName: nope, containers: [{name: c, image: x, ports: [{containerPort: -1}]}]}\n"
    ))  # fmt: skip
    assert generated.returncode == 1
    assert 'pods "gen-" is forbidden: error looking up service account default/nope' in generated.stderr
    # a namespace that does not exist is its own 404, first
    missing = kubectl(
        "run", "y", "--image=y", "-n", "nosuch", '--overrides={"spec":{"serviceAccountName":"nope"}}'
    )
    assert missing.stderr == 'Error from server (NotFound): namespaces "nosuch" not found\n'
    assert kubectl("get", "pods", "x").returncode == 1
    _ok(kubectl("create", "serviceaccount", "nope"))
    _ok(kubectl("run", "x", "--image=y", '--overrides={"spec":{"serviceAccountName":"nope"}}'))


def test_it_sets_generation_only_where_the_registry_does(kubectl: Kubectl, cluster: SimCluster) -> None:
    _ok(kubectl("create", "configmap", "settings", "--from-literal=mode=fast"))
    _ok(kubectl("create", "namespace", "team"))
    _ok(kubectl("apply", "-f", "-", input_text=DEVICE_CLASS))

    def meta(*args: str) -> dict[str, object]:
        return dict(json.loads(_ok(kubectl("get", *args, "-o", "json")))["metadata"])

    assert "generation" not in meta("configmap", "settings")
    assert "generation" not in meta("namespace", "team")
    assert meta("deviceclass", "gpu.example.com")["generation"] == 1
    _ok(kubectl("label", "configmap", "settings", "tier=gold"))
    assert "generation" not in meta("configmap", "settings")
    # of the DRA kinds the claim and template strategies set none (their spec is immutable anyway)
    _ok(kubectl("apply", "-f", "-", input_text=CLAIM_TEMPLATE))
    _ok(kubectl("apply", "-f", "-", input_text=NUMA_CLAIM))
    _ok(kubectl("apply", "-f", "-", input_text=TAINT_RULE))
    assert "generation" not in meta("resourceclaimtemplate", "gpu-burn-in")
    assert "generation" not in meta("resourceclaim", "gpu-and-nic")
    _ok(kubectl("label", "resourceclaim", "gpu-and-nic", "tier=gold"))
    assert "generation" not in meta("resourceclaim", "gpu-and-nic")
    assert meta("devicetaintrule", "gpu-0-maintenance")["generation"] == 1


def test_it_publishes_the_root_ca_in_every_namespace(kubectl: Kubectl, cluster: SimCluster) -> None:
    _ok(kubectl("create", "namespace", "team"))
    names = _ok(
        kubectl("get", "configmaps", "-A", "-o", "custom-columns=NS:.metadata.namespace,N:.metadata.name")
    )
    rows = {tuple(line.split()) for line in names.splitlines()[1:]}
    assert {
        ("default", "kube-root-ca.crt"),
        ("kube-system", "kube-root-ca.crt"),
        ("team", "kube-root-ca.crt"),
    } <= rows
    ca = _ok(kubectl("get", "configmap", "kube-root-ca.crt", "-n", "team", "-o", "jsonpath={.data.ca\\.crt}"))
    assert ca.startswith("-----BEGIN CERTIFICATE-----")
