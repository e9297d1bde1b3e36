"""Server-side printing (`meta.k8s.io/v1` Table): the columns `kubectl get` shows per kind."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

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
    roles = sorted(
        key.split("/", 1)[1]
        for key in (_get(obj, "metadata", "labels") or {})
        if key.startswith("node-role.kubernetes.io/") and key.split("/", 1)[1]
    )
    return ",".join(roles) or "<none>"


def _pod_row(obj: Obj, now: datetime) -> list[Any]:
    statuses = _get(obj, "status", "containerStatuses") or []
    total = len(_get(obj, "spec", "containers") or [])
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(int(s.get("restartCount", 0) or 0) for s in statuses)
    reason = _get(obj, "status", "reason") or _get(obj, "status", "phase") or "Unknown"
    for s in statuses:
        waiting = _get(s, "state", "waiting", "reason")
        terminated = _get(s, "state", "terminated", "reason")
        if waiting:
            reason = waiting
        elif terminated and reason == "Running":
            reason = terminated
    if _get(obj, "metadata", "deletionTimestamp"):
        reason = "Terminating"
    ip = _get(obj, "status", "podIP") or "<none>"
    node = _get(obj, "spec", "nodeName") or "<none>"
    nominated = _get(obj, "status", "nominatedNodeName") or "<none>"
    return [_name(obj), f"{ready}/{total}", reason, restarts, age(obj, now), ip, node, nominated, "<none>"]


def _claim_state(obj: Obj) -> str:
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
        elif deleting:
            states.append("deallocating")
    return ",".join(states)


def _event_object(obj: Obj) -> str:
    kind = str(_get(obj, "involvedObject", "kind") or "").lower()
    return f"{kind}/{_get(obj, 'involvedObject', 'name') or ''}"


def _event_last_seen(obj: Obj, now: datetime) -> str:
    seen = parse_time(obj.get("lastTimestamp")) or parse_time(obj.get("eventTime"))
    if seen is None:
        return age(obj, now)
    return human_duration((now - seen).total_seconds())


def _service_ports(obj: Obj) -> str:
    ports = [
        f"{p.get('port')}/{p.get('protocol', 'TCP')}"
        for p in _get(obj, "spec", "ports") or []
        if isinstance(p, dict)
    ]
    return ",".join(ports) or "<none>"


def _or_none(value: Any) -> Any:
    return "<none>" if value is None or value == "" else value


PRINTERS: dict[str, Printer] = {
    "namespaces": (
        [_NAME_COLUMN, ("Status", "string", "", 0), _AGE_COLUMN],
        lambda o, now: [_name(o), _get(o, "status", "phase") or "", age(o, now)],
    ),
    "nodes": (
        [_NAME_COLUMN, ("Status", "string", "", 0), ("Roles", "string", "", 0), _AGE_COLUMN,
         ("Version", "string", "", 0)],
        lambda o, now: [_name(o), _node_status(o), _node_roles(o), age(o, now),
                        _get(o, "status", "nodeInfo", "kubeletVersion") or ""],
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
                        "<none>", _service_ports(o), age(o, now),
                        ",".join(f"{k}={v}" for k, v in (_get(o, "spec", "selector") or {}).items()) or "<none>"],
    ),
    "events": (
        [("Last Seen", "string", "", 0), ("Type", "string", "", 0), ("Reason", "string", "", 0),
         ("Object", "string", "", 0), ("Message", "string", "", 0)],
        lambda o, now: [_event_last_seen(o, now), o.get("type", ""), o.get("reason", ""), _event_object(o),
                        o.get("message", "")],
    ),
    "poddisruptionbudgets": (
        [_NAME_COLUMN, ("Min Available", "string", "", 0), ("Max Unavailable", "string", "", 0),
         ("Allowed Disruptions", "integer", "", 0), _AGE_COLUMN],
        lambda o, now: [_name(o), _or_none(_get(o, "spec", "minAvailable")), _or_none(_get(o, "spec", "maxUnavailable")),
                        _get(o, "status", "disruptionsAllowed") or 0, age(o, now)],
    ),
    "replicasets": (
        [_NAME_COLUMN, ("Desired", "integer", "", 0), ("Current", "integer", "", 0), ("Ready", "integer", "", 0),
         _AGE_COLUMN],
        lambda o, now: [_name(o), _get(o, "spec", "replicas") or 0, _get(o, "status", "replicas") or 0,
                        _get(o, "status", "readyReplicas") or 0, age(o, now)],
    ),
    "jobs": (
        [_NAME_COLUMN, ("Status", "string", "", 0), ("Completions", "string", "", 0), _AGE_COLUMN],
        lambda o, now: [_name(o), "Complete" if _get(o, "status", "succeeded") else "Running",
                        f"{_get(o, 'status', 'succeeded') or 0}/{_get(o, 'spec', 'completions') or 1}", age(o, now)],
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


def _containers(obj: Obj, field: str) -> str:
    containers = _get(obj, "spec", "template", "spec", "containers") or []
    return ",".join(str(c.get(field, "")) for c in containers if isinstance(c, dict))


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
