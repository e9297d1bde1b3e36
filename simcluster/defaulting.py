"""Server-side defaults a v1.37 API server fills in on create and update.

Only the defaults a client could notice: taint `timeAdded`, request `allocationMode`/`count`, toleration
`operator`, the handful of Pod fields every pod shows, and the spec defaults of the workload, storage and
Endpoints kinds simcluster serves (what `kubectl get -o yaml` shows of a freshly created object).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC
from typing import Any

from dra.taints import parse_time

Obj = dict[str, Any]

#: Fields of type metav1.Time (second precision, "Z"); MicroTime fields keep microseconds.
_TIME_FIELDS = frozenset(
    {
        "creationTimestamp", "deletionTimestamp", "timeAdded", "lastTransitionTime", "allocationTimestamp",
        "time", "lastTimestamp", "firstTimestamp", "startTime", "startedAt", "finishedAt", "lastProbeTime",
        "lastHeartbeatTime", "completionTime", "lastScheduleTime", "lastUpdateTime",
    }
)  # fmt: skip
_MICRO_TIME_FIELDS = frozenset({"eventTime", "renewTime", "acquireTime"})
#: Maps whose values are user data, never normalized.
_OPAQUE = frozenset(
    {"labels", "annotations", "parameters", "data", "selector", "matchLabels", "nodeSelector"}
)
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


# Already as kube writes a Time or a MicroTime (from year 1000: strftime does not pad a shorter year).
_NORMAL_TIME = re.compile(r"[1-9]\d{3}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_NORMAL_MICRO_TIME = re.compile(r"[1-9]\d{3}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def _normal_time(value: str, micro: bool) -> str:
    if (_NORMAL_MICRO_TIME if micro else _NORMAL_TIME).fullmatch(value):
        return value  # re-encoding gives the same text (or, if no such date, parses as nothing either)
    moment = parse_time(value) if _TIMESTAMP.fullmatch(value) else None
    if moment is None:
        return value  # not a timestamp: validation reports it
    moment = moment.astimezone(UTC)
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def normalize_times(node: Any, stored: Any = None) -> None:
    """Write UTC times as kube serializes them ("Z", seconds for Time, microseconds for MicroTime).

    Clients may send "+00:00" (the Python client re-serializes that way) or fractions; kube decodes
    and re-encodes, so a read-modify-write of an unchanged object stays a no-op. ``stored``: the value
    at the same place in the stored object, normalized when it was written; what equals it is left as is.
    """
    if isinstance(node, dict):
        before = stored if isinstance(stored, dict) else _NOTHING
        for key, value in node.items():
            if isinstance(value, str):
                if (key in _TIME_FIELDS or key in _MICRO_TIME_FIELDS) and before.get(key) != value:
                    node[key] = _normal_time(value, key in _MICRO_TIME_FIELDS)
            elif isinstance(value, dict | list) and key not in _OPAQUE:
                prior = before.get(key)
                if prior != value:
                    normalize_times(value, prior)
    elif isinstance(node, list):
        items = stored if isinstance(stored, list) else ()
        for index, item in enumerate(node):
            if isinstance(item, dict | list):
                prior = items[index] if index < len(items) else None
                if prior != item:
                    normalize_times(item, prior)


_NOTHING: dict[str, Any] = {}


def _default_taint(taint: Any, now: str) -> None:
    if isinstance(taint, dict) and not taint.get("timeAdded"):
        taint["timeAdded"] = now


def _default_tolerations(tolerations: Any) -> None:
    if not isinstance(tolerations, list):
        return
    for toleration in tolerations:
        if isinstance(toleration, dict) and not toleration.get("operator"):
            toleration["operator"] = "Equal"


def _default_exact(request: Any) -> None:
    if not isinstance(request, dict):
        return
    if not request.get("allocationMode"):
        request["allocationMode"] = "ExactCount"
    if request.get("allocationMode") == "ExactCount" and "count" not in request:
        request["count"] = 1
    _default_tolerations(request.get("tolerations"))


def _default_claim_spec(spec: Any) -> None:
    if not isinstance(spec, dict):
        return
    devices = spec.get("devices")
    if not isinstance(devices, dict):
        return
    for request in devices.get("requests") or []:
        if not isinstance(request, dict):
            continue
        _default_exact(request.get("exactly"))
        for sub in request.get("firstAvailable") or []:
            _default_exact(sub)


def _default_pod(obj: Obj, *, template: bool = False, admission: bool = True) -> None:
    """SetDefaults_PodSpec and the container defaults; a pod (not a template) also gets its priority (the
    Priority admission plugin's, with `admission`)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    if not template:  # SetDefaults_Pod (not PodSpec) and the Priority admission plugin: pods only
        spec.setdefault("enableServiceLinks", True)
    if not template and admission:
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
        spec.setdefault("priority", 0)
    for volume in spec.get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        if isinstance(volume.get("hostPath"), dict):  # a *HostPathType defaulted to the empty type
            volume["hostPath"].setdefault("type", "")
        for source in ("secret", "configMap"):
            if isinstance(volume.get(source), dict):
                volume[source].setdefault("defaultMode", 0o644)
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            if not isinstance(container, dict):
                continue
            image = str(container.get("image", ""))
            latest = ":" not in image.rsplit("/", 1)[-1] or image.endswith(":latest")
            container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
            container.setdefault("terminationMessagePath", "/dev/termination-log")
            container.setdefault("terminationMessagePolicy", "File")
            container.setdefault("resources", {})
            for port in container.get("ports") or []:
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")
            resources = container["resources"]
            if isinstance(resources, dict) and resources.get("limits") and not resources.get("requests"):
                resources["requests"] = dict(resources["limits"])


def apply_defaults(plural: str, obj: Obj, old: Obj | None, now: str, *, admission: bool = True) -> None:
    """Fill in defaults in place. `old` is the stored object on update, None on create.

    With `admission` False only the scheme's defaults (SetDefaults_*: what decoding the request gives, which
    the writer's managedFields record), not what admission plugins and the registry's strategy add after."""
    spec = obj.get("spec")
    if not admission and plural in ("resourceslices", "devicetaintrules"):
        return  # taint timeAdded: the strategy's
    if plural == "resourceslices" and isinstance(spec, dict):
        for device in spec.get("devices") or []:
            if isinstance(device, dict):
                for taint in device.get("taints") or []:
                    _default_taint(taint, now)
    elif plural == "devicetaintrules" and isinstance(spec, dict):
        taint = spec.get("taint")
        if isinstance(taint, dict):
            old_taint = ((old or {}).get("spec") or {}).get("taint") or {}
            # Restart the toleration clock when only the effect changes (None -> NoExecute).
            if (
                old_taint
                and taint.get("timeAdded")
                and taint.get("timeAdded") == old_taint.get("timeAdded")
                and taint.get("effect") != old_taint.get("effect")
            ):
                taint["timeAdded"] = now
            _default_taint(taint, now)
    elif plural == "resourceclaims":
        _default_claim_spec(spec)
    elif plural == "resourceclaimtemplates" and isinstance(spec, dict):
        _default_claim_spec(spec.get("spec"))
    elif plural == "pods" and old is None:
        _default_pod(obj, admission=admission)
        if admission:
            _admit_pod(obj)
    elif plural == "deployments" and isinstance(spec, dict):
        _default_deployment(spec)
    elif plural == "jobs" and old is None and isinstance(spec, dict):
        _default_job(obj, spec, admission=admission)
    elif plural == "services" and old is None and isinstance(spec, dict):
        _default_service(obj, spec, admission=admission)
    elif plural == "daemonsets" and not admission and isinstance(spec, dict):
        _default_daemon_set_spec(spec)  # the template generation is the strategy's
    elif plural in _WORKLOAD_DEFAULTS and isinstance(spec, dict):
        _WORKLOAD_DEFAULTS[plural](obj, spec, old)
    elif plural in ("persistentvolumeclaims", "persistentvolumes"):
        _default_volume(plural, obj, old, now, admission=admission)
    elif plural == "endpoints":
        for subset in obj.get("subsets") or []:
            for port in (subset.get("ports") or []) if isinstance(subset, dict) else []:
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")


def _default_deployment(spec: Obj) -> None:
    """apps/v1 Deployment defaults (SetDefaults_Deployment)."""
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("maxUnavailable", "25%")
                rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    template = spec.get("template")
    if isinstance(template, dict):
        _default_pod(template, template=True)


def _default_template(spec: Obj) -> None:
    template = spec.get("template")
    if isinstance(template, dict):
        _default_pod(template, template=True)


def _default_replication_controller(obj: Obj, spec: Obj, old: Obj | None) -> None:
    """core/v1 SetDefaults_ReplicationController: the selector and labels from the template's labels when
    empty, one replica."""
    template = spec.get("template")
    labels = ((template.get("metadata") or {}).get("labels") or {}) if isinstance(template, dict) else {}
    if isinstance(labels, dict) and labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = obj.setdefault("metadata", {})
        if isinstance(meta, dict) and not meta.get("labels"):
            meta["labels"] = dict(labels)
    spec.setdefault("replicas", 1)
    _default_template(spec)


#: The DaemonSet's template generation, which apps/v1 carries in this annotation (the internal type's field).
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def _default_daemon_set(obj: Obj, spec: Obj, old: Obj | None) -> None:
    """apps/v1 SetDefaults_DaemonSet, and the registry's template generation: 1 on create, one more when an
    update changes the template (PrepareForUpdate; an update may not set it)."""
    _default_daemon_set_spec(spec)
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta, dict):
        return
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        annotations = meta["annotations"] = {}
    if old is None:
        given = str(annotations.get(TEMPLATE_GENERATION, ""))
        annotations[TEMPLATE_GENERATION] = given if given.isdigit() and int(given) >= 1 else "1"
        return
    before = str(((old.get("metadata") or {}).get("annotations") or {}).get(TEMPLATE_GENERATION, "1"))
    generation = int(before) if before.isdigit() else 1
    if spec.get("template") != (old.get("spec") or {}).get("template"):
        generation += 1
    annotations[TEMPLATE_GENERATION] = str(generation)


def _default_daemon_set_spec(spec: Obj) -> None:
    """apps/v1 SetDefaults_DaemonSet."""
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("maxUnavailable", 1)
                rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _default_template(spec)


def _default_stateful_set(obj: Obj, spec: Obj, old: Obj | None) -> None:
    """apps/v1 SetDefaults_StatefulSet (and a claim template's defaults, SetDefaults_PersistentVolumeClaim)."""
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("partition", 0)
    policy = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    if isinstance(policy, dict):
        policy.setdefault("whenDeleted", "Retain")
        policy.setdefault("whenScaled", "Retain")
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    for claim in spec.get("volumeClaimTemplates") or []:
        if isinstance(claim, dict):
            _default_claim(claim)
    _default_template(spec)


def _default_cron_job(obj: Obj, spec: Obj, old: Obj | None) -> None:
    """batch/v1 SetDefaults_CronJob; the job template's pod gets a pod's defaults, its Job none (those are a
    Job's own, filled in when the controller creates one)."""
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job = spec.get("jobTemplate")
    job_spec = job.get("spec") if isinstance(job, dict) else None
    if isinstance(job_spec, dict):
        _default_template(job_spec)


_WORKLOAD_DEFAULTS: dict[str, Callable[[Obj, Obj, Obj | None], None]] = {
    "replicationcontrollers": _default_replication_controller,
    "daemonsets": _default_daemon_set,
    "statefulsets": _default_stateful_set,
    "cronjobs": _default_cron_job,
}


def _default_claim(claim: Obj) -> None:
    """core/v1 SetDefaults_PersistentVolumeClaim: a Filesystem volume, phase Pending."""
    spec = claim.get("spec")
    if isinstance(spec, dict):
        spec.setdefault("volumeMode", "Filesystem")
    status = claim.setdefault("status", {})
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"


def _default_volume(plural: str, obj: Obj, old: Obj | None, now: str, *, admission: bool = True) -> None:
    """PersistentVolumeClaim and PersistentVolume defaults, and the protection finalizer a new one gets; a new
    volume's phase is Pending since its last transition, now (the strategy's PrepareForCreate:
    PersistentVolumeLastPhaseTransitionTime is GA)."""
    if old is None and admission:  # the StorageObjectInUseProtection admission plugin (controllers.storage)
        meta = obj.setdefault("metadata", {})
        finalizer = (
            "kubernetes.io/pvc-protection"
            if plural == "persistentvolumeclaims"
            else "kubernetes.io/pv-protection"
        )
        given = meta.get("finalizers") if isinstance(meta, dict) else None
        if (
            isinstance(meta, dict)
            and (given is None or isinstance(given, list))
            and finalizer not in (given or [])
        ):
            meta["finalizers"] = [*(given or []), finalizer]
    if plural == "persistentvolumeclaims":
        _default_claim(obj)
        return
    spec = obj.get("spec")
    if isinstance(spec, dict):
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
    status = obj.setdefault("status", {})
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"
        if old is None:
            status["lastPhaseTransitionTime"] = now


def _default_job(obj: Obj, spec: Obj, *, admission: bool = True) -> None:
    """batch/v1 Job defaults (SetDefaults_Job) and the selector the job strategy generates on create."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault(
        "podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"
    )
    spec.setdefault("manualSelector", False)
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    meta = obj.get("metadata") or {}
    if admission and not spec["manualSelector"] and meta.get("uid"):
        uid, name = str(meta["uid"]), str(meta.get("name", ""))
        given = spec.get("selector")
        selector: Obj = given if isinstance(given, dict) else {}
        selector.setdefault("matchLabels", {}).setdefault("batch.kubernetes.io/controller-uid", uid)
        spec["selector"] = selector
        labels = template.setdefault("metadata", {}).setdefault("labels", {})
        for key, value in (("batch.kubernetes.io/controller-uid", uid), ("batch.kubernetes.io/job-name", name),
                           ("controller-uid", uid), ("job-name", name)):  # fmt: skip
            labels.setdefault(key, value)
    if not meta.get("labels") and (template.get("metadata") or {}).get("labels"):
        meta["labels"] = dict(template["metadata"]["labels"])
    _default_pod(template, template=True)


def _default_service(obj: Obj, spec: Obj, *, admission: bool = True) -> None:
    """core/v1 Service defaults (SetDefaults_Service) and what the registry allocates on create: a cluster IP
    from 10.96.0.0/12 (picked from the uid, so distinct in practice) and node ports for NodePort and
    LoadBalancer services."""
    kind = spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    uid = str((obj.get("metadata") or {}).get("uid", ""))
    seed = int(uid.replace("-", "")[:8] or "0", 16)
    for index, port in enumerate(spec.get("ports") or []):
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = port.get("port")
            if admission and kind in ("NodePort", "LoadBalancer") and not port.get("nodePort"):
                port["nodePort"] = 30000 + (seed + index) % 2768
    if kind == "ExternalName":
        return
    if not admission:  # the registry allocates the rest, after the field manager saw the service
        spec.setdefault("internalTrafficPolicy", "Cluster")
        if kind in ("NodePort", "LoadBalancer"):
            spec.setdefault("externalTrafficPolicy", "Cluster")
        if kind == "LoadBalancer":
            spec.setdefault("allocateLoadBalancerNodePorts", True)
        return
    if not spec.get("clusterIP"):
        offset = 11 + seed % (2**20 - 12)  # past .0.1 (the API server) and .0.10 (cluster DNS)
        spec["clusterIP"] = f"10.{96 + (offset >> 16)}.{(offset >> 8) & 255}.{offset & 255}"
    spec.setdefault("clusterIPs", [spec["clusterIP"]])
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    spec.setdefault("internalTrafficPolicy", "Cluster")
    if kind in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if kind == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)
    obj.setdefault("status", {"loadBalancer": {}})


_NOT_READY_TOLERATIONS = tuple(
    {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
)
_TOKEN_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
_MIRROR_POD = "kubernetes.io/config.mirror"


def _admit_pod(obj: Obj) -> None:
    """What kube-apiserver's default admission plugins add to every new pod: ServiceAccount (the account,
    and its API token as a projected volume mounted in each container) and DefaultTolerationSeconds."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    # the ServiceAccount plugin leaves a kubelet's mirror pod as it is (the kubelet would delete a changed one)
    mirror = _MIRROR_POD in ((obj.get("metadata") or {}).get("annotations") or {})
    if not mirror:
        account = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
        spec["serviceAccountName"] = account
        spec["serviceAccount"] = account
    tolerations = spec.setdefault("tolerations", [])
    if isinstance(tolerations, list):
        for default in _NOT_READY_TOLERATIONS:
            if not any(isinstance(t, dict) and t.get("key") == default["key"] for t in tolerations):
                tolerations.append(dict(default))
    if mirror or spec.get("automountServiceAccountToken") is False:
        return
    containers = [
        c for key in ("initContainers", "containers") for c in spec.get(key) or [] if isinstance(c, dict)
    ]
    if any(m.get("mountPath") == _TOKEN_MOUNT for c in containers for m in c.get("volumeMounts") or []):
        return
    uid = str((obj.get("metadata") or {}).get("uid", "")).replace("-", "")
    volume = "kube-api-access-" + "".join("bcdfghjklmnpqrstvwxz2456789"[int(ch, 16)] for ch in uid[-5:])
    spec.setdefault("volumes", []).append({
        "name": volume,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                              "fieldPath": "metadata.namespace"}}]}},
            ],
        },
    })  # fmt: skip
    for container in containers:
        container.setdefault("volumeMounts", []).append(
            {"name": volume, "readOnly": True, "mountPath": _TOKEN_MOUNT}
        )
