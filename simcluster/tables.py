"""Server-side printing (`meta.k8s.io/v1` Table): the columns `kubectl get` shows per kind."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from dra.pods import pod_status
from dra.taints import parse_time
from simcluster.resources import ResourceDef

Obj = dict[str, Any]
Column = tuple[str, str, str, int]  # name, type, format, priority
Printer = tuple[list[Column], Callable[[Obj, datetime], list[Any]]]

_NAME_COLUMN: Column = ("Name", "string", "name", 0)
_AGE_COLUMN: Column = ("Age", "string", "", 0)
_DESCRIPTIONS = {
    "Name": "Name must be unique within a namespace. Cannot be updated.",
    "Age": "CreationTimestamp is a timestamp representing the server time when this object was created.",
}


def human_duration(seconds: float) -> str:
    """kubectl's short age format: 45s, 3m20s, 5h10m, 3d4h, 400d, 2y30d."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    years = hours // (24 * 365)
    if years < 8:
        return f"{years}y" if (hours // 24) % 365 == 0 else f"{years}y{(hours // 24) % 365}d"
    return f"{years}y"


def age(obj: Obj, now: datetime) -> str:
    created = parse_time((obj.get("metadata") or {}).get("creationTimestamp"))
    if created is None:
        return "<unknown>"
    return human_duration((now - created).total_seconds())


def _get(obj: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _name(obj: Obj) -> str:
    return str(_get(obj, "metadata", "name") or "")


def _node_status(obj: Obj) -> str:
    ready = "Unknown"
    for condition in _get(obj, "status", "conditions") or []:
        if condition.get("type") == "Ready":
            ready = "Ready" if condition.get("status") == "True" else "NotReady"
    if ready == "Unknown":
        ready = "NotReady" if _get(obj, "status", "conditions") else "Unknown"
    if _get(obj, "spec", "unschedulable"):
        ready += ",SchedulingDisabled"
    return ready


def _node_roles(obj: Obj) -> str:
    roles: set[str] = set()
    for key, value in (_get(obj, "metadata", "labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/") and key.split("/", 1)[1]:
            roles.add(key.split("/", 1)[1])
        elif key == "kubernetes.io/role" and value:
            roles.add(str(value))
    return ",".join(sorted(roles)) or "<none>"


def _node_address(obj: Obj, kind: str) -> str:
    for address in _get(obj, "status", "addresses") or []:
        if isinstance(address, dict) and address.get("type") == kind:
            return str(address.get("address", ""))
    return "<none>"


def _node_row(obj: Obj, now: datetime) -> list[Any]:
    info = _get(obj, "status", "nodeInfo") or {}
    return [_name(obj), _node_status(obj), _node_roles(obj), age(obj, now), info.get("kubeletVersion") or "",
            _node_address(obj, "InternalIP"), _node_address(obj, "ExternalIP"), info.get("osImage") or "<unknown>",
            info.get("kernelVersion") or "<unknown>", info.get("containerRuntimeVersion") or "<unknown>"]  # fmt: skip


def _pod_row(obj: Obj, now: datetime) -> list[Any]:
    summary = pod_status(obj)
    restarts = str(summary.restarts)
    last = parse_time(summary.last_restart)
    if summary.restarts and last is not None:
        restarts = f"{summary.restarts} ({human_duration((now - last).total_seconds())} ago)"
    ip = _get(obj, "status", "podIP") or "<none>"
    node = _get(obj, "spec", "nodeName") or "<none>"
    nominated = _get(obj, "status", "nominatedNodeName") or "<none>"
    return [
        _name(obj),
        summary.ready_text,
        summary.status,
        restarts,
        age(obj, now),
        ip,
        node,
        nominated,
        "<none>",
    ]


def _claim_state(obj: Obj) -> str:
    """STATE: deleted, then pending or allocated (and reserved); no "deallocating" since classic DRA went."""
    states: list[str] = []
    deleting = bool(_get(obj, "metadata", "deletionTimestamp"))
    if deleting:
        states.append("deleted")
    if not _get(obj, "status", "allocation"):
        if not deleting:
            states.append("pending")
    else:
        states.append("allocated")
        if _get(obj, "status", "reservedFor"):
            states.append("reserved")
    return ",".join(states)


def _event_object(obj: Obj) -> str:
    kind = str(_get(obj, "involvedObject", "kind") or "").lower()
    return f"{kind}/{_get(obj, 'involvedObject', 'name') or ''}"


def _since(value: Any, now: datetime) -> str | None:
    seen = parse_time(value)
    return None if seen is None else human_duration((now - seen).total_seconds())


def _event_row(obj: Obj, now: datetime) -> list[Any]:
    """upstream's printEvent: first seen falls back to eventTime, last seen to first seen; a series wins."""
    first = _since(obj.get("firstTimestamp"), now) or _since(obj.get("eventTime"), now) or "<unknown>"
    last = _since(obj.get("lastTimestamp"), now) or first
    count = obj.get("count") or 1
    series = obj.get("series")
    if isinstance(series, dict):
        last = _since(series.get("lastObservedTime"), now) or "<unknown>"
        count = series.get("count") or 0
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingComponent") or ""
    instance = source.get("host") or obj.get("reportingInstance") or ""
    return [last, obj.get("type", ""), obj.get("reason", ""), _event_object(obj),
            _get(obj, "involvedObject", "fieldPath") or "", f"{component}, {instance}" if instance else component,
            str(obj.get("message", "")).strip(), first, count, _name(obj)]  # fmt: skip


def _job_row(obj: Obj, now: datetime) -> list[Any]:
    """upstream's printJob: the status from the job's conditions, the duration from start to completion."""
    conditions = {
        c.get("type"): c.get("status") == "True"
        for c in _get(obj, "status", "conditions") or []
        if isinstance(c, dict)
    }
    if conditions.get("Complete"):
        status = "Complete"
    elif conditions.get("Failed"):
        status = "Failed"
    elif _get(obj, "metadata", "deletionTimestamp"):
        status = "Terminating"
    elif conditions.get("SuccessCriteriaMet"):
        status = "SuccessCriteriaMet"
    elif conditions.get("Suspended"):
        status = "Suspended"
    elif conditions.get("FailureTarget"):
        status = "FailureTarget"
    else:
        status = "Running"
    succeeded = _get(obj, "status", "succeeded") or 0
    completions = _get(obj, "spec", "completions")
    parallelism = _get(obj, "spec", "parallelism") or 0
    if completions is not None:
        done = f"{succeeded}/{completions}"
    else:
        done = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    started = parse_time(_get(obj, "status", "startTime"))
    finished = parse_time(_get(obj, "status", "completionTime"))
    duration = "" if started is None else human_duration(((finished or now) - started).total_seconds())
    selector = _get(obj, "spec", "selector") or {}
    return [_name(obj), status, done, duration, age(obj, now), _containers(obj, "name"), _containers(obj, "image"),
            _format_selector(selector)]  # fmt: skip


def _service_ports(obj: Obj) -> str:
    ports = [
        f"{p.get('port')}:{p['nodePort']}/{p.get('protocol', 'TCP')}"
        if p.get("nodePort")
        else f"{p.get('port')}/{p.get('protocol', 'TCP')}"
        for p in _get(obj, "spec", "ports") or []
        if isinstance(p, dict)
    ]
    return ",".join(ports) or "<none>"


def _service_external_ip(obj: Obj) -> str:
    """upstream's getServiceExternalIP: external IPs, the load balancer's ingress (or <pending>), the name."""
    spec = obj.get("spec") or {}
    external = [str(ip) for ip in spec.get("externalIPs") or []]
    kind = spec.get("type") or "ClusterIP"
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if kind == "LoadBalancer":
        ingress = _get(obj, "status", "loadBalancer", "ingress") or []
        balancers = sorted(
            {str(i.get("ip") or i.get("hostname")) for i in ingress if i.get("ip") or i.get("hostname")}
        )
        return ",".join(balancers + external) or "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName") or "")
    return "<unknown>"


def _format_selector(selector: Obj) -> str:
    """metav1.FormatLabelSelector: the selector's string form, requirements sorted by key; empty is <none>."""
    parts: list[tuple[str, str]] = [
        (str(k), f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()
    ]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = str(expr.get("key", "")), expr.get("operator"), sorted(expr.get("values") or [])
        if op in ("In", "NotIn"):
            parts.append((key, f"{key} {op.lower()} ({','.join(values)})"))
        elif op == "Exists":
            parts.append((key, key))
        elif op == "DoesNotExist":
            parts.append((key, f"!{key}"))
    return ",".join(text for _, text in sorted(parts, key=lambda p: p[0])) or "<none>"


def _containers(obj: Obj, field: str) -> str:
    containers = _get(obj, "spec", "template", "spec", "containers") or []
    return ",".join(str(c.get(field, "")) for c in containers if isinstance(c, dict))


_WORKLOAD_WIDE: list[Column] = [("Containers", "string", "", 1), ("Images", "string", "", 1),
                                ("Selector", "string", "", 1)]  # fmt: skip


def _or_none(value: Any) -> Any:
    return "<none>" if value is None or value == "" else value


PRINTERS: dict[str, Printer] = {
    "namespaces": (
        [_NAME_COLUMN, ("Status", "string", "", 0), _AGE_COLUMN],
        lambda o, now: [_name(o), _get(o, "status", "phase") or "", age(o, now)],
    ),
    "nodes": (
        [_NAME_COLUMN, ("Status", "string", "", 0), ("Roles", "string", "", 0), _AGE_COLUMN,
         ("Version", "string", "", 0), ("Internal-IP", "string", "", 1), ("External-IP", "string", "", 1),
         ("OS-Image", "string", "", 1), ("Kernel-Version", "string", "", 1), ("Container-Runtime", "string", "", 1)],
        _node_row,
    ),
    "pods": (
        [_NAME_COLUMN, ("Ready", "string", "", 0), ("Status", "string", "", 0), ("Restarts", "string", "", 0),
         _AGE_COLUMN, ("IP", "string", "", 1), ("Node", "string", "", 1), ("Nominated Node", "string", "", 1),
         ("Readiness Gates", "string", "", 1)],
        _pod_row,
    ),
    "services": (
        [_NAME_COLUMN, ("Type", "string", "", 0), ("Cluster-IP", "string", "", 0), ("External-IP", "string", "", 0),
         ("Port(s)", "string", "", 0), _AGE_COLUMN, ("Selector", "string", "", 1)],
        lambda o, now: [_name(o), _get(o, "spec", "type") or "ClusterIP", _get(o, "spec", "clusterIP") or "<none>",
                        _service_external_ip(o), _service_ports(o), age(o, now),
                        ",".join(f"{k}={v}" for k, v in (_get(o, "spec", "selector") or {}).items()) or "<none>"],
    ),
    "events": (
        [("Last Seen", "string", "", 0), ("Type", "string", "", 0), ("Reason", "string", "", 0),
         ("Object", "string", "", 0), ("Subobject", "string", "", 1), ("Source", "string", "", 1),
         ("Message", "string", "", 0), ("First Seen", "string", "", 1), ("Count", "string", "", 1),
         ("Name", "string", "name", 1)],
        _event_row,
    ),
    "poddisruptionbudgets": (
        [_NAME_COLUMN, ("Min Available", "string", "", 0), ("Max Unavailable", "string", "", 0),
         ("Allowed Disruptions", "integer", "", 0), _AGE_COLUMN],
        lambda o, now: [_name(o), _or_none(_get(o, "spec", "minAvailable")), _or_none(_get(o, "spec", "maxUnavailable")),
                        _get(o, "status", "disruptionsAllowed") or 0, age(o, now)],
    ),
    "replicasets": (
        [_NAME_COLUMN, ("Desired", "integer", "", 0), ("Current", "integer", "", 0), ("Ready", "integer", "", 0),
         _AGE_COLUMN, *_WORKLOAD_WIDE],
        lambda o, now: [_name(o), _get(o, "spec", "replicas") or 0, _get(o, "status", "replicas") or 0,
                        _get(o, "status", "readyReplicas") or 0, age(o, now), _containers(o, "name"),
                        _containers(o, "image"), _format_selector(_get(o, "spec", "selector") or {})],
    ),
    "jobs": (
        [_NAME_COLUMN, ("Status", "string", "", 0), ("Completions", "string", "", 0), ("Duration", "string", "", 0),
         _AGE_COLUMN, *_WORKLOAD_WIDE],
        _job_row,
    ),
    "resourceclaims": (
        [_NAME_COLUMN, ("State", "string", "", 0), _AGE_COLUMN],
        lambda o, now: [_name(o), _claim_state(o), age(o, now)],
    ),
    "resourceslices": (
        [_NAME_COLUMN, ("Node", "string", "", 0), ("Driver", "string", "", 0), ("Pool", "string", "", 0),
         _AGE_COLUMN],
        lambda o, now: [_name(o), _or_none(_get(o, "spec", "nodeName")), _get(o, "spec", "driver") or "",
                        _get(o, "spec", "pool", "name") or "", age(o, now)],
    ),
    "resourcepoolstatusrequests": (
        [_NAME_COLUMN, ("Driver", "string", "", 0), ("Pool", "string", "", 0), _AGE_COLUMN],
        lambda o, now: [_name(o), _get(o, "spec", "driver") or "", _or_none(_get(o, "spec", "poolName")),
                        age(o, now)],
    ),
}  # fmt: skip


def _subjects(obj: Obj, kind: str) -> str:
    names = []
    for subject in obj.get("subjects") or []:
        if subject.get("kind") == kind:
            name = subject.get("name", "")
            names.append(f"{subject.get('namespace', '')}/{name}" if kind == "ServiceAccount" else name)
    return ", ".join(names)


def _binding_columns(obj: Obj, now: datetime) -> list[Any]:
    ref = obj.get("roleRef") or {}
    return [_name(obj), f"{ref.get('kind', '')}/{ref.get('name', '')}", age(obj, now), _subjects(obj, "User"),
            _subjects(obj, "Group"), _subjects(obj, "ServiceAccount")]  # fmt: skip


_BINDING_COLUMNS: list[Column] = [_NAME_COLUMN, ("Role", "string", "", 0), _AGE_COLUMN, ("Users", "string", "", 1),
                                  ("Groups", "string", "", 1), ("ServiceAccounts", "string", "", 1)]  # fmt: skip
_CREATED_AT: Printer = (
    [_NAME_COLUMN, ("Created At", "date", "", 0)],
    lambda o, now: [_name(o), _get(o, "metadata", "creationTimestamp") or ""],
)
PRINTERS.update({
    "deployments": (
        [_NAME_COLUMN, ("Ready", "string", "", 0), ("Up-to-date", "integer", "", 0), ("Available", "integer", "", 0),
         _AGE_COLUMN, ("Containers", "string", "", 1), ("Images", "string", "", 1), ("Selector", "string", "", 1)],
        lambda o, now: [_name(o), f"{_get(o, 'status', 'readyReplicas') or 0}/{_get(o, 'spec', 'replicas') or 0}",
                        _get(o, "status", "updatedReplicas") or 0, _get(o, "status", "availableReplicas") or 0,
                        age(o, now), _containers(o, "name"), _containers(o, "image"),
                        ",".join(f"{k}={v}" for k, v in (_get(o, "spec", "selector", "matchLabels") or {}).items())],
    ),
    "serviceaccounts": (
        [_NAME_COLUMN, ("Secrets", "integer", "", 0), _AGE_COLUMN],
        lambda o, now: [_name(o), len(o.get("secrets") or []), age(o, now)],
    ),
    "secrets": (
        [_NAME_COLUMN, ("Type", "string", "", 0), ("Data", "string", "", 0), _AGE_COLUMN],
        lambda o, now: [_name(o), o.get("type") or "Opaque", len(o.get("data") or {}) + len(o.get("stringData") or {}),
                        age(o, now)],
    ),
    "configmaps": (
        [_NAME_COLUMN, ("Data", "integer", "", 0), _AGE_COLUMN],
        lambda o, now: [_name(o), len(o.get("data") or {}) + len(o.get("binaryData") or {}), age(o, now)],
    ),
    "leases": (
        [_NAME_COLUMN, ("Holder", "string", "", 0), _AGE_COLUMN],
        lambda o, now: [_name(o), _get(o, "spec", "holderIdentity") or "", age(o, now)],
    ),
    "roles": _CREATED_AT,
    "clusterroles": _CREATED_AT,
    "rolebindings": (_BINDING_COLUMNS, _binding_columns),
    "clusterrolebindings": (_BINDING_COLUMNS, _binding_columns),
})  # fmt: skip


def _labels_text(labels: Any) -> str:
    """labels.FormatLabels: `k=v` pairs sorted by key, <none> when empty."""
    if not isinstance(labels, dict) or not labels:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _endpoints_text(obj: Obj) -> str:
    """upstream's formatEndpoints: `ip:port` per address and port (a bare ip for a subset without ports), the
    first three then `+ N more...`; <none> without subsets."""
    subsets = [s for s in obj.get("subsets") or [] if isinstance(s, dict)]
    if not subsets:
        return "<none>"
    shown: list[str] = []
    count = 0
    for subset in subsets:
        addresses = [str(a.get("ip", "")) for a in subset.get("addresses") or [] if isinstance(a, dict)]
        ports = [p for p in subset.get("ports") or [] if isinstance(p, dict)]
        if not ports:
            count += len(addresses)
            shown.extend(addresses[: 3 - len(shown)] if len(shown) < 3 else [])
            continue
        for port in ports:
            count += len(addresses)
            for ip in addresses:
                if len(shown) == 3:
                    break
                shown.append(f"[{ip}]:{port.get('port')}" if ":" in ip else f"{ip}:{port.get('port')}")
    text = ",".join(shown)
    return f"{text} + {count - 3} more..." if count > 3 else text


def _first_three(items: list[str]) -> str:
    """listWithMoreString: the first three, `+ N more...` past them, <unset> when there are none."""
    text = ",".join(items[:3])
    if len(items) > 3:
        return f"{text} + {len(items) - 3} more..."
    return text or "<unset>"


def _slice_ports(obj: Obj) -> str:
    """formatDiscoveryPorts: each port's number, else its name, else *."""
    ports = [p for p in obj.get("ports") or [] if isinstance(p, dict)]
    return _first_three(
        [str(p["port"]) if p.get("port") is not None else str(p.get("name") or "*") for p in ports]
    )


def _slice_endpoints(obj: Obj) -> str:
    endpoints = [e for e in obj.get("endpoints") or [] if isinstance(e, dict)]
    return _first_three([str(a) for e in endpoints for a in e.get("addresses") or []])


_ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                 ("ReadWriteOncePod", "RWOP"))  # fmt: skip


def _access_modes(modes: Any) -> str:
    """helper.GetAccessModesAsString: the short names, in this order, each once."""
    given = modes if isinstance(modes, list) else []
    return ",".join(short for mode, short in _ACCESS_MODES if mode in given)


_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"


def _storage_class(obj: Obj) -> str:
    """GetPersistentVolume(Claim)Class: the beta annotation first, then spec.storageClassName."""
    annotations = _get(obj, "metadata", "annotations") or {}
    if _STORAGE_CLASS_ANNOTATION in annotations:
        return str(annotations[_STORAGE_CLASS_ANNOTATION])
    return str(_get(obj, "spec", "storageClassName") or "")


def _unset(value: Any) -> str:
    return "<unset>" if value is None else str(value)


def _phase(obj: Obj) -> str:
    return (
        "Terminating"
        if _get(obj, "metadata", "deletionTimestamp")
        else str(_get(obj, "status", "phase") or "")
    )


def _pv_row(obj: Obj, now: datetime) -> list[Any]:
    ref = _get(obj, "spec", "claimRef")
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if isinstance(ref, dict) else ""
    capacity = _get(obj, "spec", "capacity", "storage") or "0"
    return [_name(obj), str(capacity), _access_modes(_get(obj, "spec", "accessModes")),
            _get(obj, "spec", "persistentVolumeReclaimPolicy") or "", _phase(obj), claim, _storage_class(obj),
            _unset(_get(obj, "spec", "volumeAttributesClassName")), _get(obj, "status", "reason") or "",
            age(obj, now), _unset(_get(obj, "spec", "volumeMode"))]  # fmt: skip


def _pvc_row(obj: Obj, now: datetime) -> list[Any]:
    """printPersistentVolumeClaim: capacity and access modes only once bound to a volume."""
    volume = _get(obj, "spec", "volumeName") or ""
    capacity = str(_get(obj, "status", "capacity", "storage") or "0") if volume else ""
    modes = _access_modes(_get(obj, "status", "accessModes")) if volume else ""
    return [_name(obj), _phase(obj), volume, capacity, modes, _storage_class(obj),
            _unset(_get(obj, "spec", "volumeAttributesClassName")), age(obj, now),
            _unset(_get(obj, "spec", "volumeMode"))]  # fmt: skip


def _ingress_hosts(obj: Obj) -> str:
    """formatHosts: the first three rules' hosts, `+ N more...` past them; * when none names a host."""
    rules = [r for r in _get(obj, "spec", "rules") or [] if isinstance(r, dict)]
    hosts: list[str] = []
    more = False
    for rule in rules:
        more = more or len(hosts) == 3
        if not more and rule.get("host"):
            hosts.append(str(rule["host"]))
    if not hosts:
        return "*"
    return ",".join(hosts) + (f" + {len(rules) - 3} more..." if more else "")


def _ingress_address(obj: Obj) -> str:
    """ingressLoadBalancerStatusStringer (not wide): the sorted ips or hostnames, cut at 16 characters."""
    ingress = _get(obj, "status", "loadBalancer", "ingress") or []
    found = sorted({str(i.get("ip") or i.get("hostname")) for i in ingress
                    if isinstance(i, dict) and (i.get("ip") or i.get("hostname"))})  # fmt: skip
    text = ",".join(found)
    return text[:13] + "..." if len(text) > 16 else text


def _bool_text(value: Any) -> str:
    """printBoolPtr: True, False, or <unset> for a nil pointer."""
    return "<unset>" if value is None else ("True" if value else "False")


def _cron_job_row(obj: Obj, now: datetime) -> list[Any]:
    last = _since(_get(obj, "status", "lastScheduleTime"), now) or "<none>"
    job = _get(obj, "spec", "jobTemplate") or {}  # its spec.template is where a Job's is
    return [_name(obj), _get(obj, "spec", "schedule") or "", _get(obj, "spec", "timeZone") or "<none>",
            _bool_text(_get(obj, "spec", "suspend")), len(_get(obj, "status", "active") or []), last, age(obj, now),
            _containers(job, "name"), _containers(job, "image"),
            _format_selector(_get(job, "spec", "selector") or {})]  # fmt: skip


def _revision_controller(obj: Obj) -> str:
    """printControllerRevision's CONTROLLER: `daemonset.apps/<name>` (the controller reference's group kind,
    lower case), `<none>` without one."""
    for ref in _get(obj, "metadata", "ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            api_version = str(ref.get("apiVersion") or "")
            group = api_version.split("/")[0] if "/" in api_version else ""
            kind = str(ref.get("kind") or "")
            group_kind = f"{kind}.{group}" if group else kind
            return (
                f"{group_kind.lower()}/{ref.get('name') or ''}" if group_kind else str(ref.get("name") or "")
            )
    return "<none>"


PRINTERS.update({
    "replicationcontrollers": (
        [_NAME_COLUMN, ("Desired", "integer", "", 0), ("Current", "integer", "", 0), ("Ready", "integer", "", 0),
         _AGE_COLUMN, *_WORKLOAD_WIDE],
        lambda o, now: [_name(o), _get(o, "spec", "replicas") or 0, _get(o, "status", "replicas") or 0,
                        _get(o, "status", "readyReplicas") or 0, age(o, now), _containers(o, "name"),
                        _containers(o, "image"), _labels_text(_get(o, "spec", "selector"))],
    ),
    "daemonsets": (
        [_NAME_COLUMN, ("Desired", "integer", "", 0), ("Current", "integer", "", 0), ("Ready", "integer", "", 0),
         ("Up-to-date", "integer", "", 0), ("Available", "integer", "", 0), ("Node Selector", "string", "", 0),
         _AGE_COLUMN, *_WORKLOAD_WIDE],
        lambda o, now: [_name(o), _get(o, "status", "desiredNumberScheduled") or 0,
                        _get(o, "status", "currentNumberScheduled") or 0, _get(o, "status", "numberReady") or 0,
                        _get(o, "status", "updatedNumberScheduled") or 0, _get(o, "status", "numberAvailable") or 0,
                        _labels_text(_get(o, "spec", "template", "spec", "nodeSelector")), age(o, now),
                        _containers(o, "name"), _containers(o, "image"),
                        _format_selector(_get(o, "spec", "selector") or {})],
    ),
    "statefulsets": (
        [_NAME_COLUMN, ("Ready", "string", "", 0), _AGE_COLUMN, ("Containers", "string", "", 1),
         ("Images", "string", "", 1)],
        lambda o, now: [_name(o), f"{_get(o, 'status', 'readyReplicas') or 0}/{_get(o, 'spec', 'replicas') or 0}",
                        age(o, now), _containers(o, "name"), _containers(o, "image")],
    ),
    "controllerrevisions": (
        [_NAME_COLUMN, ("Controller", "string", "", 0), ("Revision", "integer", "", 0), _AGE_COLUMN],
        lambda o, now: [_name(o), _revision_controller(o), _get(o, "revision") or 0, age(o, now)],
    ),
    "cronjobs": (
        [_NAME_COLUMN, ("Schedule", "string", "", 0), ("Timezone", "string", "", 0), ("Suspend", "boolean", "", 0),
         ("Active", "integer", "", 0), ("Last Schedule", "string", "", 0), _AGE_COLUMN, *_WORKLOAD_WIDE],
        _cron_job_row,
    ),
    "ingresses": (
        [_NAME_COLUMN, ("Class", "string", "", 0), ("Hosts", "string", "", 0), ("Address", "string", "", 0),
         ("Ports", "string", "", 0), _AGE_COLUMN],
        lambda o, now: [_name(o), _get(o, "spec", "ingressClassName") or "<none>", _ingress_hosts(o),
                        _ingress_address(o), "80, 443" if _get(o, "spec", "tls") else "80", age(o, now)],
    ),
    "endpoints": (
        [_NAME_COLUMN, ("Endpoints", "string", "", 0), _AGE_COLUMN],
        lambda o, now: [_name(o), _endpoints_text(o), age(o, now)],
    ),
    "endpointslices": (
        [_NAME_COLUMN, ("AddressType", "string", "", 0), ("Ports", "string", "", 0), ("Endpoints", "string", "", 0),
         _AGE_COLUMN],
        lambda o, now: [_name(o), o.get("addressType") or "", _slice_ports(o), _slice_endpoints(o), age(o, now)],
    ),
    "persistentvolumes": (
        [_NAME_COLUMN, ("Capacity", "string", "", 0), ("Access Modes", "string", "", 0),
         ("Reclaim Policy", "string", "", 0), ("Status", "string", "", 0), ("Claim", "string", "", 0),
         ("StorageClass", "string", "", 0), ("VolumeAttributesClass", "string", "", 0), ("Reason", "string", "", 0),
         _AGE_COLUMN, ("VolumeMode", "string", "", 1)],
        _pv_row,
    ),
    "persistentvolumeclaims": (
        [_NAME_COLUMN, ("Status", "string", "", 0), ("Volume", "string", "", 0), ("Capacity", "string", "", 0),
         ("Access Modes", "string", "", 0), ("StorageClass", "string", "", 0),
         ("VolumeAttributesClass", "string", "", 0), _AGE_COLUMN, ("VolumeMode", "string", "", 1)],
        _pvc_row,
    ),
})  # fmt: skip

_DEFAULT_PRINTER: Printer = ([_NAME_COLUMN, _AGE_COLUMN], lambda o, now: [_name(o), age(o, now)])


def column_definitions(resource: ResourceDef) -> list[Obj]:
    columns, _ = PRINTERS.get(resource.plural, _DEFAULT_PRINTER)
    return [
        {
            "name": name,
            "type": type_,
            "format": fmt,
            "description": _DESCRIPTIONS.get(name, name),
            "priority": prio,
        }
        for name, type_, fmt, prio in columns
    ]


def row(resource: ResourceDef, obj: Obj, include_object: str, now: datetime | None = None) -> Obj:
    _, cells = PRINTERS.get(resource.plural, _DEFAULT_PRINTER)
    out: Obj = {"cells": cells(obj, now or datetime.now(UTC))}
    if include_object == "Object":
        out["object"] = obj
    elif include_object != "None":
        out["object"] = {
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata", {}),
        }
    return out


def table(
    resource: ResourceDef,
    objs: list[Obj],
    *,
    include_object: str = "Metadata",
    resource_version: str = "",
    continue_token: str = "",
    remaining: int | None = None,
    with_columns: bool = True,
    now: datetime | None = None,
) -> Obj:
    """A Table of `objs`; ages are relative to `now` (the cluster's clock), default the wall clock."""
    now = now or datetime.now(UTC)
    meta: Obj = {}
    if resource_version:
        meta["resourceVersion"] = resource_version
    if continue_token:
        meta["continue"] = continue_token
    if remaining is not None:
        meta["remainingItemCount"] = remaining
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": column_definitions(resource) if with_columns else [],
        "rows": [row(resource, o, include_object, now) for o in objs],
    }
