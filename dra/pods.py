"""A pod as `kubectl get pods` and the kubelet see it: its READY / STATUS / RESTARTS, and the
ResourceClaims and DRA-served extended resources it uses.

* `pod_status` — upstream's server-side printer (pkg/printers/internalversion/printers.go, `printPod`):
  STATUS is the phase or `status.reason`, then `SchedulingGated`, an init container's state
  (`Init:1/3`, `Init:CrashLoopBackOff`, `Init:ExitCode:1`), the first container's waiting or terminated
  reason (`ContainerCreating`, `CrashLoopBackOff`, `Completed`, `ExitCode:137`), back to `Running` /
  `NotReady` while a container still runs, and `Terminating` (or `Unknown` for a pod lost with its node)
  once it is being deleted. READY counts running ready containers (and started ready sidecars) of all
  containers plus sidecars; RESTARTS sums restart counts (sidecars' only, until the pod is initialized).
* `pod_claims` — the pod's claims: `spec.resourceClaims` (a claim by name, or one made from a template,
  whose name the pod's `status.resourceClaimStatuses` gives once it exists), then the scheduler's
  extended-resource claim (`status.extendedResourceClaimStatus`).
* `dra_extended_resources` — the extended resources DRA serves the pod: the resource names of the
  scheduler's request mappings, with the pod's count of each.
* `pod_waiting` — why a pod that is not running yet waits, as `kubectl describe pod` tells it: the
  scheduler's `PodScheduled=False` condition (Unschedulable and its message), the scheduling gates it waits
  for, the template claims not created yet, or a waiting container's message.

simcluster's `kubectl get pods` table and dradash's Pods list use `pod_status`, so they read the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dra.extended import pod_extended_counts
from dra.taints import parse_time

JSON = dict[str, Any]
#: the phases a pod reports (`status.phase`); a pod without one is shown as Unknown
POD_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
TERMINAL = frozenset({"Succeeded", "Failed"})
#: the node lifecycle controller's `status.reason` for a pod whose node stopped answering
NODE_LOST = "NodeLost"
#: the longest waiting reason and message `pod_waiting` gives (the cluster's text is untrusted and unbounded)
WAITING_REASON_MAX = 128
WAITING_MESSAGE_MAX = 1000
#: `pod_waiting`'s reason for a pod held only by template claims not created yet (upstream's scheduler says
#: nothing then: its DynamicResources PreEnqueue keeps the pod out of the queue without a condition)
WAITING_FOR_CLAIM = "WaitingForResourceClaim"


@dataclass(frozen=True)
class PodStatus:
    ready: int
    total: int
    #: kubectl's STATUS column
    status: str
    restarts: int
    #: when the last restart counted ended (a container's lastState.terminated.finishedAt), "" for none
    last_restart: str

    @property
    def ready_text(self) -> str:
        """kubectl's READY column: "1/2"."""
        return f"{self.ready}/{self.total}"


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _condition_true(status: Mapping[str, Any], kind: str) -> bool:
    """The first condition of this type says True (upstream's isPodInitializedConditionTrue)."""
    for condition in _list(status.get("conditions")):
        if condition.get("type") == kind:
            return bool(condition.get("status") == "True")
    return False


def _has_ready_condition(status: Mapping[str, Any]) -> bool:
    """Any Ready condition says True (upstream's hasPodReadyCondition)."""
    return any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in _list(status.get("conditions"))
    )


def _later(current: str, container: Mapping[str, Any]) -> str:
    """The later of `current` and the container's last termination (RFC 3339 finishedAt)."""
    finished = _dict(_dict(container.get("lastState")).get("terminated")).get("finishedAt")
    moment, before = parse_time(finished), parse_time(current)
    if moment is None or (before is not None and moment <= before):
        return current
    return str(finished)


def _exit_text(terminated: Mapping[str, Any], prefix: str = "") -> str:
    signal = _int(terminated.get("signal"))
    if signal:
        return f"{prefix}Signal:{signal}"
    return f"{prefix}ExitCode:{_int(terminated.get('exitCode'))}"


def pod_status(pod: Mapping[str, Any]) -> PodStatus:
    """READY, STATUS and RESTARTS as `kubectl get pods` prints them (upstream's printPod)."""
    spec, status = _dict(pod.get("spec")), _dict(pod.get("status"))
    phase = str(status.get("phase") or "")
    reason = str(status.get("reason") or "") or phase
    for condition in _list(status.get("conditions")):
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    init_specs = _list(spec.get("initContainers"))
    sidecars = {str(c.get("name")) for c in init_specs if c.get("restartPolicy") == "Always"}
    total = len(_list(spec.get("containers"))) + len(sidecars)
    ready = restarts = sidecar_restarts = 0
    last_restart = last_sidecar_restart = ""

    initializing = False
    for i, container in enumerate(_list(status.get("initContainerStatuses"))):
        restarts += _int(container.get("restartCount"))
        last_restart = _later(last_restart, container)
        sidecar = str(container.get("name")) in sidecars
        if sidecar:
            sidecar_restarts += _int(container.get("restartCount"))
            last_sidecar_restart = _later(last_sidecar_restart, container)
        state = _dict(container.get("state"))
        terminated, waiting = _dict(state.get("terminated")), _dict(state.get("waiting"))
        if state.get("terminated") is not None and _int(terminated.get("exitCode")) == 0:
            continue
        if sidecar and container.get("started") is True:
            ready += bool(container.get("ready"))
            continue
        if state.get("terminated") is not None:  # initialization failed
            why = str(terminated.get("reason") or "")
            reason = f"Init:{why}" if why else _exit_text(terminated, "Init:")
        elif waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = f"Init:{waiting['reason']}"
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break

    if not initializing or _condition_true(status, "Initialized"):
        restarts, last_restart = sidecar_restarts, last_sidecar_restart
        running = False
        for container in reversed(_list(status.get("containerStatuses"))):
            restarts += _int(container.get("restartCount"))
            last_restart = _later(last_restart, container)
            state = _dict(container.get("state"))
            terminated, waiting = _dict(state.get("terminated")), _dict(state.get("waiting"))
            if waiting.get("reason"):
                reason = str(waiting["reason"])
            elif state.get("terminated") is not None:
                reason = str(terminated.get("reason") or "") or _exit_text(terminated)
            elif container.get("ready") and state.get("running") is not None:
                running = True
                ready += 1
        # A container that completed while another still runs: the pod is not "Completed".
        if reason == "Completed" and running:
            reason = "Running" if _has_ready_condition(status) else "NotReady"

    deleting = _dict(pod.get("metadata")).get("deletionTimestamp")
    if deleting and status.get("reason") == NODE_LOST:
        reason = "Unknown"
    elif deleting and phase not in TERMINAL:
        reason = "Terminating"
    return PodStatus(ready=ready, total=total, status=reason, restarts=restarts, last_restart=last_restart)


def pod_phase(pod: Mapping[str, Any]) -> str:
    """`status.phase`, Unknown when the pod reports none."""
    return str(_dict(pod.get("status")).get("phase") or "") or "Unknown"


@dataclass(frozen=True)
class PodClaimRef:
    #: the pod's name for it (spec.resourceClaims[].name); "" for the extended-resource claim
    pod_claim: str
    #: the ResourceClaim's name in the pod's namespace; "" while a template's claim is not made yet
    name: str
    source: str  # "claim" | "template" | "extended"
    template: str = ""


def pod_claims(pod: Mapping[str, Any]) -> list[PodClaimRef]:
    """The ResourceClaims the pod uses, in the pod's order, the scheduler's extended-resource claim last."""
    spec, status = _dict(pod.get("spec")), _dict(pod.get("status"))
    generated = {
        str(s.get("name")): str(s.get("resourceClaimName") or "")
        for s in _list(status.get("resourceClaimStatuses"))
    }
    refs: list[PodClaimRef] = []
    for entry in _list(spec.get("resourceClaims")):
        pod_claim = str(entry.get("name", ""))
        if entry.get("resourceClaimName"):
            refs.append(PodClaimRef(pod_claim, str(entry["resourceClaimName"]), "claim"))
        else:
            template = str(entry.get("resourceClaimTemplateName") or "")
            refs.append(PodClaimRef(pod_claim, generated.get(pod_claim, ""), "template", template))
    extended = _dict(status.get("extendedResourceClaimStatus")).get("resourceClaimName")
    if extended:
        refs.append(PodClaimRef("", str(extended), "extended"))
    return refs


def persistent_volume_claim_names(pod: Mapping[str, Any], *, ephemeral: bool = True) -> set[str]:
    """The PersistentVolumeClaims a pod's volumes use: named ones and (`ephemeral`) its generic ephemeral
    volumes' (`<pod>-<volume>`, ephemeral.VolumeClaimName)."""
    pod_name = str(_dict(pod.get("metadata")).get("name", ""))
    names: set[str] = set()
    for volume in _list(_dict(pod.get("spec")).get("volumes")):
        volume = _dict(volume)
        if volume.get("persistentVolumeClaim"):
            names.add(str(_dict(volume["persistentVolumeClaim"]).get("claimName", "")))
        elif ephemeral and volume.get("ephemeral"):
            names.add(f"{pod_name}-{volume.get('name', '')}")
    names.discard("")
    return names


def dra_extended_resources(pod: Mapping[str, Any]) -> dict[str, int]:
    """Extended resource name → how many the pod asks for, of the resources DRA serves it: those the
    scheduler mapped to its extended-resource claim (`status.extendedResourceClaimStatus`). A pod the
    scheduler has not placed yet has none: until then nobody knows whether DRA or a device plugin serves it."""
    mapping = _dict(_dict(pod.get("status")).get("extendedResourceClaimStatus"))
    names = sorted(
        {str(m["resourceName"]) for m in _list(mapping.get("requestMappings")) if m.get("resourceName")}
    )
    counts = pod_extended_counts(pod)
    return {name: counts.get(name, 0) for name in names}


@dataclass(frozen=True)
class PodWaiting:
    #: a word: the condition's reason (Unschedulable, SchedulingGated), WaitingForResourceClaim, or a
    #: waiting container's reason (ContainerCreating, ImagePullBackOff, CrashLoopBackOff …)
    reason: str
    #: what the cluster says about it ("" when it says nothing), at most WAITING_MESSAGE_MAX characters
    message: str


def _capped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _template_claims_not_created(spec: Mapping[str, Any], status: Mapping[str, Any]) -> list[str]:
    """The pod's template claims with no entry in `status.resourceClaimStatuses` yet: no ResourceClaim is
    made for them. An entry without a name means none was needed, so it does not wait."""
    listed = {str(s.get("name")) for s in _list(status.get("resourceClaimStatuses"))}
    return [
        f"{e.get('name')} (template {e.get('resourceClaimTemplateName')})"
        for e in _list(spec.get("resourceClaims"))
        if not e.get("resourceClaimName")
        and e.get("resourceClaimTemplateName")
        and str(e.get("name")) not in listed
    ]


def _container_waiting(status: Mapping[str, Any]) -> PodWaiting | None:
    """The first init container, then container, that waits with a message (its reason alone is already
    kubectl's STATUS)."""
    for container in [*_list(status.get("initContainerStatuses")), *_list(status.get("containerStatuses"))]:
        waiting = _dict(_dict(container.get("state")).get("waiting"))
        message = str(waiting.get("message") or "").strip()
        if message:
            reason = str(waiting.get("reason") or "") or "Waiting"
            return PodWaiting(reason, f"container {container.get('name')}: {message}")
    return None


def pod_waiting(pod: Mapping[str, Any]) -> PodWaiting | None:
    """Why the pod is not running yet, as `kubectl describe pod` shows it, or None when nothing holds it.

    A pod that has finished (Succeeded, Failed) or runs ready waits for nothing; a Running pod that is not
    ready only for a container waiting with a message. Otherwise, in the order the pod meets them: its
    scheduling gates (which ones), the scheduler's `PodScheduled=False` condition (reason and message:
    "0/3 nodes are available: 3 cannot allocate all claims. …"), the template claims not created yet
    while it is not bound, and last a container waiting with a message (`state.waiting.message`). Reason and
    message are capped (WAITING_REASON_MAX, WAITING_MESSAGE_MAX)."""
    spec, status = _dict(pod.get("spec")), _dict(pod.get("status"))
    phase = str(status.get("phase") or "")
    if phase in TERMINAL:
        return None
    if phase == "Running":
        if _has_ready_condition(status):
            return None
        found = _container_waiting(status)
    else:
        reason, parts = "", []
        scheduled = next(
            (c for c in _list(status.get("conditions")) if c.get("type") == "PodScheduled"), None
        )
        gates = [str(g.get("name")) for g in _list(spec.get("schedulingGates")) if g.get("name")]
        if scheduled is not None and scheduled.get("status") == "False":
            reason = str(scheduled.get("reason") or "") or "Unschedulable"
            message = str(scheduled.get("message") or "").strip()
            # The gated condition's message only says there are gates: the gates below say which.
            if message and not (gates and reason == "SchedulingGated"):
                parts.append(message)
        if gates:
            reason = "SchedulingGated"
            parts.append(f"waiting for scheduling gates to be removed: {', '.join(gates)}")
        if not spec.get("nodeName"):
            pending = _template_claims_not_created(spec, status)
            if pending:
                reason = reason or WAITING_FOR_CLAIM
                parts.append(f"ResourceClaim not created yet for {', '.join(pending)}")
        found = PodWaiting(reason, "; ".join(parts)) if reason else _container_waiting(status)
    if found is None:
        return None
    return PodWaiting(_capped(found.reason, WAITING_REASON_MAX), _capped(found.message, WAITING_MESSAGE_MAX))
