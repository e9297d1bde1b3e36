"""Small helpers the simulated controllers share: reading objects, owner references, events, binding."""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from dra.taints import parse_time
from simcluster.controllers.base import Clock, format_time
from simcluster.errors import ApiError
from simcluster.store import Store

JSON = dict[str, Any]

DELETE_PROTECTION = "resource.kubernetes.io/delete-protection"
POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"
TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


def read_all(store: Store, plural: str) -> list[JSON]:
    """Committed objects without copying. Never mutate them; `copy.deepcopy` first."""
    entries: Iterable[Any] = store.snapshot(plural)[1]
    return [entry.obj for entry in entries]


def meta(obj: Mapping[str, Any]) -> JSON:
    value = obj.get("metadata") or {}
    return value if isinstance(value, dict) else {}


def name_of(obj: Mapping[str, Any]) -> str:
    return str(meta(obj).get("name", ""))


def namespace_of(obj: Mapping[str, Any]) -> str:
    return str(meta(obj).get("namespace", ""))


def uid_of(obj: Mapping[str, Any]) -> str:
    return str(meta(obj).get("uid", ""))


def creation_time(obj: Mapping[str, Any]) -> float:
    """`metadata.creationTimestamp` in seconds; 0 for an object without one."""
    moment = parse_time(meta(obj).get("creationTimestamp"))
    return moment.timestamp() if moment else 0.0


def is_deleting(obj: Mapping[str, Any]) -> bool:
    return bool(meta(obj).get("deletionTimestamp"))


def is_terminal(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in TERMINAL_PHASES


def controller_of(obj: Mapping[str, Any]) -> JSON | None:
    for ref in meta(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return dict(ref)
    return None


def owner_reference(owner: Mapping[str, Any]) -> JSON:
    return {
        "apiVersion": owner.get("apiVersion", "v1"),
        "kind": owner.get("kind", "Pod"),
        "name": name_of(owner),
        "uid": uid_of(owner),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pod_claim_names(pod: Mapping[str, Any]) -> list[str]:
    """Names of the ResourceClaims a pod uses now: named claims, generated ones, the extended one."""
    status = pod.get("status") or {}
    generated = {s.get("name"): s.get("resourceClaimName") for s in status.get("resourceClaimStatuses") or []}
    names: list[str] = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
        if entry.get("resourceClaimName"):
            names.append(str(entry["resourceClaimName"]))
        elif generated.get(entry.get("name")):
            names.append(str(generated[entry["name"]]))
    extended = (status.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
    if extended:
        names.append(str(extended))
    return names


def reserved_for(claim: Mapping[str, Any], uid: str) -> bool:
    return any(ref.get("uid") == uid for ref in (claim.get("status") or {}).get("reservedFor") or [])


def pod_reference(pod: Mapping[str, Any]) -> JSON:
    return {"resource": "pods", "name": name_of(pod), "uid": uid_of(pod)}


def post_event(
    store: Store,
    clock: Clock,
    involved: Mapping[str, Any],
    *,
    reason: str,
    message: str,
    component: str,
    event_type: str = "Normal",
) -> None:
    """Record a core/v1 Event about an object; best effort, as event recording is upstream.

    The same event again (same object, type, reason, message and component) updates the first one's
    `count` and `lastTimestamp` instead of adding an object, as client-go's event correlator does, so
    `kubectl describe` reads `(x3 over 5s)`."""
    now = format_time(clock.now())
    namespace = namespace_of(involved) or "default"
    key = (namespace, str(involved.get("kind", "Pod")), name_of(involved), uid_of(involved), event_type, reason,
           message, component)  # fmt: skip
    with _EVENTS_LOCK:
        seen = _EVENTS.setdefault(store, {})
        earlier = seen.get(key)
    if earlier is not None:
        try:
            current = store.get("events", earlier, namespace=namespace)
            store.patch(
                "events", earlier, {"count": int(current.get("count") or 1) + 1, "lastTimestamp": now},
                namespace=namespace,
            )  # fmt: skip
            return
        except ApiError:
            pass  # gone (expired, deleted): record it anew
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{name_of(involved)}.", "namespace": namespace},
        "involvedObject": {
            "apiVersion": involved.get("apiVersion", "v1"),
            "kind": involved.get("kind", "Pod"),
            "name": name_of(involved),
            "namespace": namespace,
            "uid": uid_of(involved),
        },
        "reason": reason,
        "message": message,
        "type": event_type,
        "source": {"component": component},
        "reportingComponent": component,
        "reportingInstance": f"{component}-simcluster",
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }
    with contextlib.suppress(ApiError):  # events are best effort (e.g. the namespace is going away)
        created = store.create("events", event)
        with _EVENTS_LOCK:
            if len(seen) >= _EVENTS_KEPT:  # client-go keeps an LRU of 4,096 entries
                seen.pop(next(iter(seen)))
            seen[key] = name_of(created)


#: per store: the name of the event recorded for each (object, type, reason, message, component)
_EVENTS: weakref.WeakKeyDictionary[Store, dict[tuple[str, ...], str]] = weakref.WeakKeyDictionary()
_EVENTS_LOCK = threading.Lock()
_EVENTS_KEPT = 4096


def bind_pod(store: Store, pod: Mapping[str, Any], node: str) -> JSON:
    """Set `spec.nodeName` through the store's binding path (a plain update may not change it)."""
    return store.bind_pod(name_of(pod), namespace=namespace_of(pod), node=node, uid=uid_of(pod))


def set_condition(conditions: Iterable[JSON], condition: JSON) -> list[JSON]:
    """Replace the condition of the same type, keeping lastTransitionTime when the status is unchanged."""
    out: list[JSON] = []
    placed = False
    for existing in conditions:
        if existing.get("type") == condition["type"]:
            merged = dict(condition)
            if existing.get("status") == condition.get("status") and existing.get("lastTransitionTime"):
                merged["lastTransitionTime"] = existing["lastTransitionTime"]
            out.append(merged)
            placed = True
        else:
            out.append(dict(existing))
    if not placed:
        out.append(dict(condition))
    return out
