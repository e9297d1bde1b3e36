"""Small helpers the simulated controllers share: reading objects, owner references, events, binding."""

from __future__ import annotations

import contextlib
import hashlib
import threading
import weakref
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from dra.taints import parse_time
from simcluster.controllers.base import Clock, format_time
from simcluster.errors import ApiError
from simcluster.store import Store, acting_manager, writing_as

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


def controlled_by(obj: Mapping[str, Any], kind: str) -> bool:
    """True when the object's controller (its controlling owner reference) is of this kind."""
    ref = controller_of(obj)
    return ref is not None and ref.get("kind") == kind


def owner_reference(owner: Mapping[str, Any]) -> JSON:
    return {
        "apiVersion": owner.get("apiVersion", "v1"),
        "kind": owner.get("kind", "Pod"),
        "name": name_of(owner),
        "uid": uid_of(owner),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pod_from_template(
    owner: Mapping[str, Any],
    template: Mapping[str, Any],
    spec: JSON,
    *,
    labels: Mapping[str, str],
    name: str = "",
) -> JSON:
    """The Pod a workload controller creates from its template (GetPodFromTemplate): the template's labels
    plus `labels`, its annotations, the owner as controller, `spec`; named `name`, else generated from the
    owner's name."""
    template_meta = template.get("metadata") or {}
    pod_meta: JSON = {"name": name} if name else {"generateName": f"{name_of(owner)}-"}
    pod_meta.update({
        "namespace": namespace_of(owner),
        "labels": {**(template_meta.get("labels") or {}), **labels},
        "ownerReferences": [owner_reference(owner)],
    })  # fmt: skip
    if template_meta.get("annotations"):
        pod_meta["annotations"] = dict(template_meta["annotations"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}


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


_later = threading.local()


@contextlib.contextmanager
def events_after() -> Iterator[None]:
    """Events this thread records inside the block are written when it ends, stamped when they happened:
    client-go's broadcaster writes a component's events off its work path, after the changes they tell of,
    so a scheduler's pass binds and starts its pods before it writes their Scheduled, Pulled, Created and
    Started events (written one by one, they cost a burst about a fifth of the scheduler's time)."""
    if getattr(_later, "queue", None) is not None:
        yield  # already inside one: the outer block writes them
        return
    queue: list[tuple[str | None, tuple[Any, ...], dict[str, Any]]] = []
    _later.queue = queue
    try:
        yield
    finally:
        _later.queue = None
        for manager, args, kwargs in queue:
            with writing_as(manager):  # the kubelet's events are the kubelet's, written when they are
                post_event(*args, **kwargs)


def post_event(
    store: Store,
    clock: Clock,
    involved: Mapping[str, Any],
    *,
    reason: str,
    message: str,
    component: str,
    event_type: str = "Normal",
    host: str | None = None,
    field_path: str | None = None,
    at: datetime | None = None,
) -> None:
    """Record a core/v1 Event about an object; best effort, as event recording is upstream. `host` is the
    source's host (a kubelet's node: its events read "kubelet, <node>" in `kubectl get events -o wide`, and
    its node is their reportingInstance), `field_path` the part of the object (`spec.containers{app}`).
    Through client-go's correlator, as every controller records them:

    - the spam filter: a component records at most 25 events about one object, then one every 5 minutes
      (a 1,500-replica ReplicaSet shows 25 of its SuccessfulCreate events, not 1,500);
    - the aggregator: from the 10th different message of one reason about one object within 10 minutes,
      they are recorded as one event, its message "(combined from similar events): " + the newest;
    - the logger: the same event again updates the first one's `count`, `lastTimestamp` (and message)
      instead of adding an object, so `kubectl describe` reads `(x3 over 5s)`."""
    moment = at or clock.now()
    queue = getattr(_later, "queue", None)
    if queue is not None:
        kwargs = {"reason": reason, "message": message, "component": component, "event_type": event_type,
                  "host": host, "field_path": field_path, "at": moment}  # fmt: skip
        queue.append((acting_manager(), (store, clock, involved), kwargs))
        return
    now, seconds = format_time(moment), moment.timestamp()
    namespace = namespace_of(involved) or "default"
    kind, name, uid = str(involved.get("kind", "Pod")), name_of(involved), uid_of(involved)
    api_version = str(involved.get("apiVersion", "v1"))
    source = (component, host or "", kind, namespace, name, uid, api_version)
    correlator = _correlator(store)
    with correlator.lock:
        if not correlator.accept(source, seconds):
            return
        aggregate_key = (*source, event_type, reason)
        if correlator.aggregate(aggregate_key, message, seconds):
            key: tuple[str, ...] = aggregate_key
            message = COMBINED_PREFIX + message
        else:
            key = (*aggregate_key, field_path or "", message)
        earlier = correlator.recorded.get(key)
        # client-go's makeEvent names an event "<object>.<the time in hex nanoseconds>", no generateName;
        # one recorder's events of the same instant stay distinct
        nanos = max(int(moment.timestamp()) * 10**9 + moment.microsecond * 1000, correlator.last_nanos + 1)
        correlator.last_nanos = nanos
    if earlier is not None:
        try:
            current = store.get("events", earlier, namespace=namespace)
            store.patch(
                "events", earlier,
                {"count": int(current.get("count") or 1) + 1, "lastTimestamp": now, "message": message},
                namespace=namespace,
            )  # fmt: skip
            return
        except ApiError:
            pass  # gone (expired, deleted): record it anew
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.{nanos:x}", "namespace": namespace},
        "involvedObject": {
            "apiVersion": api_version,
            "kind": kind,
            "name": name,
            "namespace": namespace,
            "uid": uid,
            **({"fieldPath": field_path} if field_path else {}),
        },
        "reason": reason,
        "message": message,
        "type": event_type,
        "source": {"component": component, **({"host": host} if host else {})},
        "reportingComponent": component,
        "reportingInstance": host or f"{component}-simcluster",
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }
    with contextlib.suppress(ApiError):  # events are best effort (e.g. the namespace is going away)
        created = store.create("events", event)
        with correlator.lock:
            _remember(correlator.recorded, key, name_of(created))


KUBELET_COMPONENT = "kubelet"


def post_containers_started(store: Store, clock: Clock, pod: Mapping[str, Any], node_name: str) -> None:
    """The events a kubelet records as it starts a pod's containers, each about `spec.containers{<name>}`
    (pkg/kubelet/images/image_manager.go, kuberuntime_container.go): Pulled "already present on machine and
    can be accessed by the pod" (KubeletEnsureSecretPulledImages, on by default), or for `imagePullPolicy:
    Always` Pulling then Pulled "Successfully pulled image … in …"; then Created "Container created" and
    Started "Container started"."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        image = str(container.get("image", ""))
        field_path = f"spec.containers{{{container.get('name', '')}}}"

        def record(reason: str, message: str, field_path: str = field_path) -> None:
            post_event(store, clock, pod, reason=reason, message=message, component=KUBELET_COMPONENT,
                       host=node_name, field_path=field_path)  # fmt: skip

        if container.get("imagePullPolicy") == "Always":
            record("Pulling", f"Pulling image {_go_quote(image)}")
            digest = int.from_bytes(hashlib.sha256(image.encode()).digest()[:8], "big")
            pulled = _go_duration_ms(400 + digest % 4000)
            size = 5_000_000 + digest % 200_000_000
            record("Pulled", f"Successfully pulled image {_go_quote(image)} in {pulled} ({pulled} including "
                             f"waiting). Image size: {size} bytes.")  # fmt: skip
        else:
            record("Pulled", f"Container image {_go_quote(image)} already present on machine and can be "
                             "accessed by the pod")  # fmt: skip
        record("Created", "Container created")
        record("Started", "Container started")


def post_containers_stopping(store: Store, clock: Clock, pod: Mapping[str, Any], node_name: str) -> None:
    """The kubelet's Killing event for each container of a pod it stops for its deletion
    (kuberuntime_container.go killContainer: "Stopping container <name>")."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        name = str(container.get("name", ""))
        post_event(store, clock, pod, reason="Killing", message=f"Stopping container {name}",
                   component=KUBELET_COMPONENT, host=node_name, field_path=f"spec.containers{{{name}}}")  # fmt: skip


def _go_quote(text: str) -> str:
    """Go's %q of a plain string (image references need no escapes beyond these)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _go_duration_ms(milliseconds: int) -> str:
    """A Go time.Duration of whole milliseconds as String() prints it: 812ms, 1.5s, 2s."""
    if milliseconds < 1000:
        return f"{milliseconds}ms"
    seconds, rest = divmod(milliseconds, 1000)
    return f"{seconds}.{rest:03d}".rstrip("0").rstrip(".") + "s"


# client-go's event correlator (tools/record/events_cache.go), its defaults: a source may record 25 events about
# one object, then one every 5 minutes (the spam filter); from the 10th different message with the same reason
# within 10 minutes on, events of that reason are recorded as one "(combined from similar events)" event.
SPAM_BURST = 25
SPAM_REFILL_SECONDS = 300.0
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL_SECONDS = 600.0
COMBINED_PREFIX = "(combined from similar events): "
_KEPT = 4096  # each of client-go's caches is an LRU of 4,096 entries


class _Correlator:
    """One store's correlator state: per key, LRU-bounded as client-go's."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spam: dict[tuple[str, ...], tuple[float, float]] = {}  # → (tokens, at)
        self.aggregates: dict[tuple[str, ...], tuple[set[str], float]] = {}  # → (messages, last at)
        self.recorded: dict[tuple[str, ...], str] = {}  # event key → the name of the event recorded
        self.last_nanos = 0  # the time in the name of the newest event

    def accept(self, spam_key: tuple[str, ...], now: float) -> bool:
        """The spam filter's token bucket (25 events, refilled one per 5 minutes): False drops the event."""
        tokens, at = self.spam.pop(spam_key, (float(SPAM_BURST), now))
        tokens = min(float(SPAM_BURST), tokens + max(0.0, now - at) / SPAM_REFILL_SECONDS)
        accepted = tokens >= 1.0
        _remember(self.spam, spam_key, (tokens - 1.0 if accepted else tokens, now))
        return accepted

    def aggregate(self, aggregate_key: tuple[str, ...], message: str, now: float) -> bool:
        """True when this event is to be recorded as the combined event of its reason (client-go's
        EventAggregate: the message joins the reason's set; at 10 different messages it is combined)."""
        messages, last = self.aggregates.pop(aggregate_key, (set(), now))
        if now - last > AGGREGATE_INTERVAL_SECONDS:
            messages = set()
        messages.add(message)
        combined = len(messages) >= AGGREGATE_MAX_EVENTS
        if combined:
            messages.pop()  # the set never grows past the threshold
        _remember(self.aggregates, aggregate_key, (messages, now))
        return combined


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    cache[key] = value
    if len(cache) > _KEPT:
        cache.pop(next(iter(cache)))


_CORRELATORS: weakref.WeakKeyDictionary[Store, _Correlator] = weakref.WeakKeyDictionary()
_CORRELATORS_LOCK = threading.Lock()


def _correlator(store: Store) -> _Correlator:
    with _CORRELATORS_LOCK:
        found = _CORRELATORS.get(store)
        if found is None:
            found = _CORRELATORS[store] = _Correlator()
        return found


def bind_pod(store: Store, pod: Mapping[str, Any], node: str) -> JSON:
    """Set `spec.nodeName` through the store's binding path (a plain update may not change it)."""
    return store.bind_pod(name_of(pod), namespace=namespace_of(pod), node=node, uid=uid_of(pod))


def pod_generation(pod: Mapping[str, Any]) -> int:
    """The generation a pod's status and conditions observe (PodObservedGenerationTracking, GA and locked on
    since v1.35: the kubelet writes `status.observedGeneration`, and every writer of a pod condition its
    `observedGeneration`, from `metadata.generation`; pkg/api/v1/pod/util.go)."""
    return int(meta(pod).get("generation") or 1)


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
