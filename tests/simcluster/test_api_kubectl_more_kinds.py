"""The workload, networking and storage kinds beyond DRA's as kubectl 1.37 sees them: api-resources rows,
`kubectl get` columns (upstream's printers), describe, scale, chunked lists and watches, Endpoints'
deprecation warning, and what the default view and edit ClusterRoles grant on them."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from kubernetes import client, watch

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Http, Kubectl
from tests.simcluster.kinds_manifests import DAEMON_SET, EVERY_KIND, NAMESPACE, STATEFUL_SET

#: `kubectl api-resources -o wide` of a v1.37 cluster, for the kinds beyond DRA's (NAME SHORTNAMES APIVERSION
#: NAMESPACED KIND VERBS CATEGORIES).
UPSTREAM_ROWS = {
    "endpoints": "endpoints ep v1 true Endpoints create,delete,deletecollection,get,list,patch,update,watch",
    "persistentvolumeclaims": "persistentvolumeclaims pvc v1 true PersistentVolumeClaim "
    "create,delete,deletecollection,get,list,patch,update,watch",
    "persistentvolumes": "persistentvolumes pv v1 false PersistentVolume "
    "create,delete,deletecollection,get,list,patch,update,watch",
    "replicationcontrollers": "replicationcontrollers rc v1 true ReplicationController "
    "create,delete,deletecollection,get,list,patch,update,watch all",
    "daemonsets": "daemonsets ds apps/v1 true DaemonSet create,delete,deletecollection,get,list,patch,update,watch all",
    "statefulsets": "statefulsets sts apps/v1 true StatefulSet "
    "create,delete,deletecollection,get,list,patch,update,watch all",
    "controllerrevisions": "controllerrevisions apps/v1 true ControllerRevision "
    "create,delete,deletecollection,get,list,patch,update,watch",
    "cronjobs": "cronjobs cj batch/v1 true CronJob create,delete,deletecollection,get,list,patch,update,watch all",
    "ingresses": "ingresses ing networking.k8s.io/v1 true Ingress "
    "create,delete,deletecollection,get,list,patch,update,watch",
    "endpointslices": "endpointslices discovery.k8s.io/v1 true EndpointSlice "
    "create,delete,deletecollection,get,list,patch,update,watch",
}


def _applied(kubectl: Kubectl, manifest: str = EVERY_KIND) -> None:
    result = kubectl("apply", "-f", "-", input_text=manifest)
    assert result.returncode == 0, result.stderr


def test_it_lists_each_kind_in_api_resources_as_upstream(kubectl: Kubectl) -> None:
    listed = kubectl("api-resources", "-o", "wide")
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: " ".join(line.split()) for line in listed.stdout.splitlines()[1:]}
    for plural, row in UPSTREAM_ROWS.items():
        assert rows.get(plural) == row
    subresources = {
        r["name"] for r in json.loads(kubectl("get", "--raw", "/apis/apps/v1").stdout)["resources"]
    }
    assert {"daemonsets/status", "statefulsets/status", "statefulsets/scale"} <= subresources
    core = {r["name"] for r in json.loads(kubectl("get", "--raw", "/api/v1").stdout)["resources"]}
    assert {"replicationcontrollers/scale", "replicationcontrollers/status", "persistentvolumeclaims/status",
            "persistentvolumes/status"} <= core  # fmt: skip


def test_it_prints_upstreams_columns_for_each_kind(kubectl: Kubectl) -> None:
    _applied(kubectl)
    expected = {
        "daemonsets": ("NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE CONTAINERS IMAGES SELECTOR",
                       "agent 0 0 0 0 0 kubernetes.io/os=linux"),
        "statefulsets": ("NAME READY AGE CONTAINERS IMAGES", "db 0/2"),
        "cronjobs": ("NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE CONTAINERS IMAGES SELECTOR",
                     "nightly 0 3 * * * <none> False 0 <none>"),
        "replicationcontrollers": ("NAME DESIRED CURRENT READY AGE CONTAINERS IMAGES SELECTOR", "legacy 1 0 0"),
        "ingresses": ("NAME CLASS HOSTS ADDRESS PORTS AGE", "web <none> web.example.com 80, 443"),
        "persistentvolumeclaims": (
            "NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE VOLUMEMODE",
            "scratch Pending <unset>"),
        "persistentvolumes": (
            "NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE "
            "VOLUMEMODE", "pv-a 5Gi RWO,ROX Retain Pending <unset>"),
        "endpoints": ("NAME ENDPOINTS AGE", "ext 10.0.0.1:8080,10.0.0.2:8080"),
        "endpointslices": ("NAME ADDRESSTYPE PORTS ENDPOINTS AGE", "ext-abcde IPv4 8080 10.0.0.1,10.0.0.2"),
    }  # fmt: skip
    for plural, (header, row) in expected.items():
        table = kubectl("get", plural, "-n", "ops", "-o", "wide").stdout.splitlines()
        assert " ".join(table[0].split()) == header, plural
        assert " ".join(table[1].split()).startswith(row), (plural, table[1])


def test_it_describes_each_kind(kubectl: Kubectl) -> None:
    _applied(kubectl)
    for target, line in (
        ("daemonset/agent", "Annotations:    deprecated.daemonset.template.generation: 1"),
        ("statefulset/db", "Pod Management Policy:  OrderedReady"),
        ("cronjob/nightly", "Concurrency Policy:            Allow"),
        ("replicationcontroller/legacy", "Replicas:     0 current / 1 desired"),
        ("ingress/web", "web.example.com"),
        ("persistentvolumeclaim/scratch", "Status:        Pending"),
        ("persistentvolume/pv-a", "Reclaim Policy:  Retain"),
        ("endpoints/ext", "Addresses:          10.0.0.1,10.0.0.2"),
    ):
        described = kubectl("describe", "-n", "ops", target)
        assert described.returncode == 0, (target, described.stderr)
        assert line in described.stdout, (target, described.stdout)
    ingress = kubectl("describe", "-n", "ops", "ingress/web").stdout
    assert 'web:80 (<error: services "web" not found>)' in ingress


def test_it_warns_of_endpoints_deprecation_on_every_request(kubectl: Kubectl, http: Http) -> None:
    _applied(kubectl, NAMESPACE)
    listed = kubectl("get", "endpoints", "-n", "ops")
    assert (
        "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
        in listed.stderr
    )
    _, headers, _ = http.get("/api/v1/namespaces/ops/endpoints/missing")
    assert headers.getlist("Warning") == [
        '299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"'
    ]
    _, headers, _ = http.get("/api/v1/namespaces/ops/services")
    assert not headers.getlist("Warning")


def test_it_scales_a_statefulset_and_a_replication_controller(kubectl: Kubectl, cluster: SimCluster) -> None:
    _applied(kubectl)
    for target in ("statefulset/db", "replicationcontroller/legacy"):
        scaled = kubectl("scale", "-n", "ops", target, "--replicas=4")
        assert scaled.returncode == 0, scaled.stderr
    assert cluster.store.get("statefulsets", "db", namespace="ops")["spec"]["replicas"] == 4
    assert cluster.store.get("replicationcontrollers", "legacy", namespace="ops")["spec"]["replicas"] == 4
    scale = json.loads(
        kubectl("get", "--raw", "/api/v1/namespaces/ops/replicationcontrollers/legacy/scale").stdout
    )
    assert (scale["spec"]["replicas"], scale["status"]["selector"]) == (4, "app=legacy")


def test_it_bumps_a_daemonsets_template_generation_only_when_its_template_changes(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    _applied(kubectl, NAMESPACE + "---\n" + DAEMON_SET)
    kubectl("patch", "-n", "ops", "daemonset/agent", "-p", '{"spec":{"minReadySeconds":5}}')
    stored = cluster.store.get("daemonsets", "agent", namespace="ops")
    assert stored["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "1"
    assert stored["metadata"]["generation"] == 2
    kubectl("set", "image", "-n", "ops", "daemonset/agent", "agent=registry.example.com/agent:2.0")
    stored = cluster.store.get("daemonsets", "agent", namespace="ops")
    assert stored["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "2"
    assert stored["metadata"]["generation"] == 3


def test_it_pages_and_watches_statefulsets(kubectl: Kubectl, api: client.ApiClient) -> None:
    _applied(kubectl, NAMESPACE)
    for name in ("a", "b", "c"):
        _applied(kubectl, STATEFUL_SET.replace("name: db, namespace", f"name: {name}, namespace"))
    apps = client.AppsV1Api(api)
    first = apps.list_namespaced_stateful_set("ops", limit=2)
    assert [s.metadata.name for s in first.items] == ["a", "b"]
    rest = apps.list_namespaced_stateful_set("ops", limit=2, _continue=first.metadata._continue)
    assert [s.metadata.name for s in rest.items] == ["c"]
    seen: list[tuple[str, str]] = []
    stream = watch.Watch()

    def follow() -> None:
        for event in stream.stream(apps.list_namespaced_stateful_set, "ops",
                                   resource_version=first.metadata.resource_version, timeout_seconds=20):  # fmt: skip
            seen.append((event["type"], event["object"].metadata.name))
            if event["type"] == "DELETED":
                stream.stop()

    watcher = threading.Thread(target=follow)
    watcher.start()
    assert kubectl("delete", "-n", "ops", "statefulset/c").returncode == 0
    watcher.join(30)
    assert seen[-1] == ("DELETED", "c")


def test_it_lets_view_read_and_edit_write_the_new_kinds_as_upstreams_roles_do(
    kubectl: Kubectl, tmp_path: Path
) -> None:
    _applied(kubectl, NAMESPACE)
    for user, role in (("carol", "view"), ("dave", "edit")):
        bound = kubectl("create", "rolebinding", f"{user}-{role}", f"--clusterrole={role}", f"--user={user}",
                        "-n", "ops")  # fmt: skip
        assert bound.returncode == 0, bound.stderr

    def can(user: str, verb: str, resource: str) -> str:
        return kubectl("auth", "can-i", verb, resource, "-n", "ops", f"--as={user}").stdout.strip()

    for resource in ("daemonsets/status", "statefulsets/scale", "cronjobs/status", "ingresses.networking.k8s.io",
                     "replicationcontrollers/scale", "persistentvolumeclaims/status", "endpoints",
                     "endpointslices.discovery.k8s.io"):  # fmt: skip
        assert can("carol", "get", resource) == "yes", resource
    for resource in ("daemonsets", "statefulsets", "cronjobs", "ingresses.networking.k8s.io"):
        assert can("carol", "create", resource) == "no", resource
        assert can("dave", "create", resource) == "yes", resource
    assert can("dave", "patch", "statefulsets/scale") == "yes"
    assert can("dave", "create", "endpoints") == "no"  # taken out of edit in v1.22 (CVE-2021-25740)
    assert kubectl("auth", "can-i", "list", "persistentvolumes", "--as=carol").stdout.strip() == "no"


def test_it_creates_a_cronjob_and_an_ingress_from_kubectls_protobuf_bodies(
    kubectl: Kubectl, cluster: SimCluster
) -> None:
    for args in (
        ("create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *", "--", "date"),
        ("create", "ingress", "web", "--class=nginx", "--rule=foo.com/bar*=svc1:8080,tls=my-cert",
         "--default-backend=defsvc:http"),
        ("create", "job", "once", "--from=cronjob/tick"),
    ):  # fmt: skip
        created = kubectl(*args)
        assert created.returncode == 0, created.stderr
    cron = cluster.store.get("cronjobs", "tick", namespace="default")["spec"]
    assert (cron["schedule"], cron["jobTemplate"]["metadata"]["name"]) == ("*/5 * * * *", "tick")
    pod = cron["jobTemplate"]["spec"]["template"]["spec"]
    assert (pod["containers"][0]["command"], pod["restartPolicy"]) == (["date"], "OnFailure")
    ingress = cluster.store.get("ingresses", "web", namespace="default")["spec"]
    assert ingress == {
        "defaultBackend": {"service": {"name": "defsvc", "port": {"name": "http"}}},
        "ingressClassName": "nginx",
        "rules": [{"host": "foo.com", "http": {"paths": [
            {"backend": {"service": {"name": "svc1", "port": {"number": 8080}}}, "path": "/bar", "pathType": "Prefix"},
        ]}}],
        "tls": [{"hosts": ["foo.com"], "secretName": "my-cert"}],
    }  # fmt: skip
    assert (
        cluster.store.get("jobs", "once", namespace="default")["metadata"]["ownerReferences"][0]["kind"]
        == "CronJob"
    )
