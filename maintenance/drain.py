"""The staged, PDB-aware device drain (issue 14): NoSchedule first, then the affected pods go one
Eviction API request at a time, respecting PodDisruptionBudgets.

- `maintenance_drain_start` checks what enforcing checks (state, version, a fresh preview, the confirmation
  and the typed phrase of the pods it evicts), applies the rules with NoSchedule (nothing new lands on the
  devices), freezes the affected pods into DrainPod rows (oldest first; pods that tolerate the taint are
  left alone, as NoExecute would; pods without an owner are left in place: nothing would replace them)
  and sets the maintenance `draining`.
- `drain_step(maintenance_id, driver=...)` is one idempotent step, from the database alone, so any process
  can drive a drain and a restarted one resumes it: take the drain's lease (a driver steps only a drain it
  holds; a dead driver's lease runs out), follow the pods through the mirror (evicting → gone →
  replacement pending → running / unschedulable, or a timeout), then evict the next pods while fewer than
  `concurrency` are in flight. A pod is claimed for its eviction by one conditional UPDATE, so even two
  drivers evict it once. A 429 (a budget allows no disruption) leaves the pod `blocked` with the budget
  and why ("blocked by PDB ml/trainer: minAvailable 10, 10 healthy"), retried with a growing back-off.
  Every accepted or failed eviction enters the audit log; of a budget's refusals only the first of each
  pod (and a changed reason) does — the retries are counted on the pod and summed up in the entry of its
  eviction ("after blocked 14 times over 20 s by PDB ml/trainer") or of the abort.
- pause / resume / abort are lifecycle actions (maintenance.states), version-checked like the others;
  abort stops evicting and leaves the rules with NoSchedule.

Who drives it: `maintenance.driver` (a thread of the web process, or of each Celery worker).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from dra.disruption import describe_block, describe_spec, is_healthy, is_ready
from dra.selection import label_selector_matches
from maintenance import audit, cluster, states
from maintenance.cluster import ClusterWriteError
from maintenance.confirmation import BlastRadius, Challenge, blast_radius, challenge, typed_matches
from maintenance.errors import HEADLINE_CONFIRM, MaintenanceError
from maintenance.models import AuditEntry, Drain, DrainPod, Maintenance
from maintenance.progress import affected_pods, owner_pods
from maintenance.taints import FieldError
from maintenance.validation import (
    DEFAULT_CONCURRENCY,
    DEFAULT_REPLACEMENT_TIMEOUT,
    MAX_CONCURRENCY,
    MAX_REPLACEMENT_TIMEOUT,
    range_error,
)
from maintenance.wake import wake_drivers

log = logging.getLogger(__name__)

#: what one pod is estimated to take (eviction, graceful termination, the replacement starting) when the
#: drain has not measured any yet
ESTIMATE_GRACE_DEFAULT = 30
ESTIMATE_START_SECONDS = 10
ESTIMATE_ASSUMES = (
    f"each wave takes its pods' termination grace period ({ESTIMATE_GRACE_DEFAULT} s unless a pod sets its own) "
    f"plus {ESTIMATE_START_SECONDS} s for the replacement to start; pods that end sooner and replacements that "
    "start at once make it faster, a budget that blocks makes it slower (no ETA while it blocks)"
)


def _setting(name: str) -> float:
    return float(getattr(settings, name))


def lease_seconds() -> float:
    return _setting("DRADASH_DRAIN_LEASE_SECONDS")


def in_flight_seconds() -> float:
    """How long an eviction request may be in flight before its driver is taken for dead and the pod is
    looked at again: longer than the client's connect + request timeouts (10 + 60 s), so a slow answer is
    never mistaken for a dead driver (DRADASH_DRAIN_IN_FLIGHT_SECONDS)."""
    return _setting("DRADASH_DRAIN_IN_FLIGHT_SECONDS")


def backoff(attempts: int) -> float:
    """Seconds before a refused eviction is tried again: doubling from DRADASH_DRAIN_BACKOFF_SECONDS up to
    DRADASH_DRAIN_BACKOFF_MAX_SECONDS (kubectl drain retries every 5 s)."""
    base = _setting("DRADASH_DRAIN_BACKOFF_SECONDS")
    ceiling = _setting("DRADASH_DRAIN_BACKOFF_MAX_SECONDS")
    return float(min(ceiling, base * 2 ** max(0, attempts - 1)))


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


# --------------------------------------------------------------------------- budgets (from the mirror)


def _budgets(namespaces: set[str]) -> list[dict[str, Any]]:
    from inventory.models import KubeObject

    if not namespaces:
        return []
    return [
        {"uid": o.uid, "namespace": o.namespace, "name": o.name, "spec": (o.raw.get("spec") or {}),
         "status": (o.raw.get("status") or {})}
        for o in KubeObject.objects.filter(kind="poddisruptionbudgets", namespace__in=namespaces)
        .only("uid", "namespace", "name", "raw").order_by("namespace", "name")
    ]  # fmt: skip


def _budget_of(
    budgets: list[dict[str, Any]], namespace: str, labels: dict[str, str]
) -> dict[str, Any] | None:
    for budget in budgets:
        selector = budget["spec"].get("selector")
        if budget["namespace"] == namespace and selector and label_selector_matches(selector, labels):
            return budget
    return None


def _budget_doc(budget: dict[str, Any], pods: list[str]) -> dict[str, Any]:
    status = budget["status"]
    return {
        "namespace": budget["namespace"], "name": budget["name"], "rule": describe_spec(budget["spec"]),
        "disruptions_allowed": status.get("disruptionsAllowed"), "current_healthy": status.get("currentHealthy"),
        "desired_healthy": status.get("desiredHealthy"), "expected_pods": status.get("expectedPods"), "pods": len(pods),
    }  # fmt: skip


# --------------------------------------------------------------------------- the forecast (the preview)


def drain_forecast(
    *, maintenance: Maintenance, result: dict[str, Any], concurrency: int = DEFAULT_CONCURRENCY
) -> dict[str, Any]:
    """What a drain would do, from a succeeded preview (the taint-impact what-if) and the mirrored budgets:
    the order (oldest first), the waves the budgets force at `concurrency` (a wave is the pods evicted
    before their replacements must run again), the pods that cannot move (no owner; or no room elsewhere
    per the allocator) and the expected duration."""
    from inventory.models import KubeObject

    concurrency = max(1, concurrency)
    evicted = [p for p in result.get("pods") or [] if p.get("evicted")]
    rows = {
        uid: (metadata or {}, grace)
        for uid, metadata, grace in KubeObject.objects.filter(
            kind="pods", uid__in=[p.get("uid") for p in evicted]
        ).values_list("uid", "raw__metadata", "raw__spec__terminationGracePeriodSeconds")
    }
    budgets = _budgets({str(p.get("namespace")) for p in evicted})
    order: list[dict[str, Any]] = []
    unmovable: list[dict[str, Any]] = []
    for pod in evicted:
        metadata, grace = rows.get(str(pod.get("uid")), ({}, None))
        owner = next((r for r in metadata.get("ownerReferences") or [] if r.get("controller")), None)
        budget = _budget_of(budgets, str(pod.get("namespace")), dict(metadata.get("labels") or {}))
        entry = {
            "namespace": pod.get("namespace"), "name": pod.get("name"), "node": pod.get("node"),
            "created": metadata.get("creationTimestamp", ""),
            "owner": f"{owner.get('kind')}/{owner.get('name')}" if owner else "",
            "budget": f"{budget['namespace']}/{budget['name']}" if budget else "",
            "seconds": int(grace if isinstance(grace, int) else ESTIMATE_GRACE_DEFAULT) + ESTIMATE_START_SECONDS,
        }  # fmt: skip
        if owner is None:
            unmovable.append(
                {**entry, "why": "no owner: nothing would replace it; the drain leaves it in place"}
            )
            continue
        if pod.get("reallocatable") is False:
            # evicted all the same (as kubectl drain would), but its replacement will not be scheduled: the
            # drain shows it "unschedulable" and moves on after the replacement timeout
            why = pod.get("reallocation") or "no node has room for its claims"
            entry["movable"] = False
            unmovable.append({**entry, "why": f"{why}: its replacement would stay unschedulable"})
        else:
            entry["movable"] = True
        order.append(entry)
    order.sort(key=lambda e: (e["created"], e["namespace"], e["name"]))

    allowed = {
        f"{b['namespace']}/{b['name']}": b["status"].get("disruptionsAllowed")
        for b in budgets
        if isinstance(b["status"].get("disruptionsAllowed"), int)
    }
    waves: list[list[dict[str, Any]]] = []
    stuck: list[dict[str, Any]] = []
    remaining = list(order)
    while remaining:
        wave: list[dict[str, Any]] = []
        used: dict[str, int] = defaultdict(int)
        rest = []
        for entry in remaining:
            key = entry["budget"]
            limit = allowed.get(key) if key else None
            if len(wave) < concurrency and (limit is None or used[key] < limit):
                wave.append(entry)
                used[key] += 1
            else:
                rest.append(entry)
        if not wave:  # every pod left is under a budget that allows no disruption now
            stuck = rest
            break
        waves.append(wave)
        remaining = rest
    for number, wave in enumerate(waves, start=1):
        for entry in wave:
            entry["wave"] = number
    seconds = sum(max(e["seconds"] for e in wave) for wave in waves)
    docs = [
        _budget_doc(b, [e["name"] for e in order if e["budget"] == f"{b['namespace']}/{b['name']}"])
        for b in budgets
        if any(e["budget"] == f"{b['namespace']}/{b['name']}" for e in order)
    ]
    return {
        "concurrency": concurrency,
        "pods": len(order),
        "order": order[:200],
        "waves": len(waves),
        "budget_waves": len(waves) > math.ceil(len(order) / concurrency) if order else False,
        "blocked": [{**e, "why": f"PDB {e['budget']} allows no disruption now"} for e in stuck],
        "unmovable": unmovable,
        "budgets": docs,
        "seconds": seconds,
        "duration": _duration(seconds),
        "assumes": ESTIMATE_ASSUMES,
        "tolerating": sum(1 for p in result.get("pods") or [] if not p.get("evicted")),
    }


def drain_forecast_document(*, maintenance: Maintenance, concurrency: int | None) -> dict[str, Any]:
    """The drain the latest preview predicts, for the API: the preview's state (a stale one is shown, the
    drain itself would refuse it), the confirmation a drain asks for and `drain_forecast` at `concurrency`.
    409 without a succeeded preview; 400 naming `concurrency` when it is not 1..MAX_CONCURRENCY."""
    from maintenance import services
    from maintenance.errors import HEADLINE_NEEDS_PREVIEW

    concurrency = _checked_int(concurrency, "concurrency", DEFAULT_CONCURRENCY, 1, MAX_CONCURRENCY)
    status = services.maintenance_preview_observe(maintenance=maintenance)
    if status.state != "succeeded":
        message = (
            "run the preview first: the drain is planned from it"
            if status.preview is None
            else f"the preview is {status.state}: the drain is planned from a succeeded one"
        )
        raise services._conflict(maintenance, "preview", message, headline=HEADLINE_NEEDS_PREVIEW)
    blast, wanted = drain_confirmation(maintenance=maintenance, status=status)
    return {
        "preview": status.as_dict(),
        "confirmation": {
            "pods": blast.pods,
            "devices": blast.devices,
            "phrase": wanted.phrase,
            "why": wanted.why,
        },
        "forecast": drain_forecast(maintenance=maintenance, result=status.result, concurrency=concurrency),
    }


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"about {seconds} s"
    minutes, rest = divmod(seconds, 60)
    return (
        f"about {minutes} min {rest:02d} s"
        if minutes < 60
        else f"about {minutes // 60} h {minutes % 60:02d} min"
    )


# --------------------------------------------------------------------------- start, pause, resume, abort


def drain_confirmation(*, maintenance: Maintenance, status: Any) -> tuple[BlastRadius, Challenge]:
    """The blast radius a drain is confirmed against (from a succeeded preview) and the phrase to type:
    the pods NoExecute would evict, with no budget broken (the drain respects them)."""
    from maintenance import services

    blast = blast_radius(
        effect="NoExecute", preview_run=status.run_id, result=status.result, scope=maintenance.scope,
        whole_cluster=services._whole_cluster(maintenance, maintenance.device_count),
    )  # fmt: skip
    blast = dataclasses.replace(blast, budgets=[])
    return blast, challenge(blast)


def _checked_int(value: int | None, field: str, default: int, low: int, high: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise MaintenanceError([range_error(field, low, high, repr(value))])
    return value


def maintenance_drain_start(
    *,
    maintenance: Maintenance,
    user: Any,
    confirmed: bool,
    typed: str = "",
    preview_id: str = "",
    expected_version: int | None = None,
    concurrency: int | None = None,
    replacement_timeout: int | None = None,
) -> Maintenance:
    """Apply the rules with NoSchedule and start draining the affected pods (see the module doc)."""
    from maintenance import services

    concurrency = _checked_int(concurrency, "concurrency", DEFAULT_CONCURRENCY, 1, MAX_CONCURRENCY)
    timeout = _checked_int(
        replacement_timeout, "replacement_timeout", DEFAULT_REPLACEMENT_TIMEOUT, 1, MAX_REPLACEMENT_TIMEOUT
    )
    try:
        services._check(maintenance, states.DRAIN, expected_version)
        if maintenance.applied_effect == "NoExecute":
            raise services._conflict(
                maintenance, "mode", "the rules already have effect NoExecute: every affected pod is evicted "
                "already, there is nothing to drain",
            )  # fmt: skip
        status = services._require_preview(maintenance, "NoSchedule", preview_id)
        blast, wanted = drain_confirmation(maintenance=maintenance, status=status)
        if confirmed is not True:
            raise MaintenanceError(
                [FieldError("confirm", f"Draining evicts {_n(blast.pods, 'pod')} (respecting their budgets) and "
                            f"takes {blast.devices} devices out of service: confirm (the JSON boolean true)")],
                headline=HEADLINE_CONFIRM,
            )  # fmt: skip
        if wanted.phrase and not typed_matches(typed, wanted.phrase):
            raise MaintenanceError(
                [FieldError("typed", f'{wanted.why} by the drain: type "{wanted.phrase}" to confirm'
                            + (f" (you typed {typed[:80]!r})" if typed else ""))],
                headline=HEADLINE_CONFIRM,
            )  # fmt: skip
    except MaintenanceError as error:
        if error.status != 400 or error.headline == HEADLINE_CONFIRM:
            services._refused(maintenance, user, "drain", error, effect="NoSchedule", typed=typed[:200])
        raise
    audit.record(
        action="confirm", maintenance=maintenance, user=user, effect="NoSchedule", preview_run_id=status.run_id,
        message=f"confirmed a drain of {_n(blast.pods, 'pod')} at concurrency {concurrency}, respecting "
                "PodDisruptionBudgets" + (f'; typed "{typed.strip()}"' if wanted.phrase else "; no typing required"),
        outcome={"typed": typed.strip()[:200], "phrase": wanted.phrase, "blast": blast.as_dict(),
                 "concurrency": concurrency, "replacement_timeout": timeout},
    )  # fmt: skip
    if maintenance.applied_effect != "NoSchedule":
        services.maintenance_apply(
            maintenance=maintenance, user=user, effect="NoSchedule", confirmed=True, preview_id=status.run_id,
            expected_version=maintenance.version,
        )  # fmt: skip

    from inventory.models import KubeObject

    pods = affected_pods(maintenance=maintenance, taint_time=timezone.now())
    to_drain = [p for p in pods if p.get("evict_at") is not None]
    tolerating = len(pods) - len(to_drain)
    rows: dict[str, tuple[Any, Any]] = {}
    covering: dict[str, str] = {}  # pod uid → the PDB that covers it, kept once the pod is gone
    budgets = _budgets({str(p["namespace"]) for p in to_drain})
    for uid, namespace, created, node, labels in KubeObject.objects.filter(
        kind="pods", uid__in=[p["uid"] for p in to_drain]
    ).values_list("uid", "namespace", "creation_timestamp", "raw__spec__nodeName", "raw__metadata__labels"):
        rows[uid] = (created, node)
        budget = _budget_of(budgets, namespace, dict(labels or {}))
        if budget:
            covering[uid] = f"{budget['namespace']}/{budget['name']}"
    to_drain.sort(key=lambda p: (rows.get(p["uid"], ("", ""))[0] or "", p["namespace"], p["name"]))
    with transaction.atomic():
        Drain.objects.filter(maintenance=maintenance).delete()  # an earlier, finished or aborted drain
        drain = Drain.objects.create(
            maintenance=maintenance, concurrency=concurrency, replacement_timeout=timeout,
            started_by=user if getattr(user, "pk", None) else None, owner_pods=owner_pods(affected=to_drain),
        )  # fmt: skip
        DrainPod.objects.bulk_create(
            DrainPod(
                drain=drain,
                order=index,
                uid=p["uid"],
                namespace=p["namespace"],
                name=p["name"],
                node=str(rows.get(p["uid"], ("", ""))[1] or ""),
                created=rows.get(p["uid"], ("", ""))[0] or "",
                owner_uid=p.get("owner_uid", ""),
                owner=p.get("owner", ""),
                claims=p.get("claims") or [],
                budget=covering.get(p["uid"], ""),
                state=states.WAITING if p.get("owner_uid") else states.NO_OWNER,
                reason=""
                if p.get("owner_uid")
                else "no owner: nothing would replace it, so the drain leaves it",
            )  # fmt: skip
            for index, p in enumerate(to_drain)
        )
        services._claim(maintenance, state=states.DRAINING)
    no_owner = sum(1 for p in to_drain if not p.get("owner_uid"))
    audit.record(
        action="drain", maintenance=maintenance, user=user, effect="NoSchedule",
        message=f"drain started: {_n(len(to_drain) - no_owner, 'pod')} to evict, oldest first, at concurrency "
                f"{concurrency} (replacement timeout {timeout} s); {tolerating} tolerating the taint left alone; "
                f"{no_owner} without an owner left in place",
        outcome={"pods": len(to_drain), "tolerating": tolerating, "no_owner": no_owner, "concurrency": concurrency,
                 "replacement_timeout": timeout},
    )  # fmt: skip
    audit.announce([maintenance.id])
    wake_drivers(maintenance.id)
    maintenance.refresh_from_db()
    return maintenance


def _lifecycle(
    *, maintenance: Maintenance, user: Any, action: str, expected_version: int | None, message: str
) -> Maintenance:
    from maintenance import services

    try:
        services._check(maintenance, action, expected_version)
    except MaintenanceError as error:
        if error.status != 400:
            services._refused(maintenance, user, f"{action} the drain", error)
        raise
    new_state = {states.PAUSE: Drain.PAUSED, states.RESUME: Drain.RUNNING, states.ABORT: Drain.ABORTED}[
        action
    ]
    with transaction.atomic():
        services._claim(maintenance, state=states.next_state(maintenance.state, action))
        Drain.objects.filter(maintenance=maintenance).update(
            state=new_state, finished_at=timezone.now() if new_state == Drain.ABORTED else None, message=""
        )
        if action == states.ABORT:  # the pods not evicted yet stay where they are, and say so
            left = list(
                DrainPod.objects.filter(drain__maintenance=maintenance, state__in=states.POD_TO_EVICT)
            )
            drain = Drain.objects.get(maintenance=maintenance)
            blocked = [(p, _refusals(drain, p, timezone.now())) for p in left]
            if left:
                message += f" {_n(len(left), 'pod')} not evicted" + (
                    " (" + "; ".join(f"{p.namespace}/{p.name} {r['text']}" for p, r in blocked[:10] if r) + ")"
                    if any(r for _, r in blocked) else ""
                ) + "."  # fmt: skip
            DrainPod.objects.filter(pk__in=[p.pk for p in left], state__in=states.POD_TO_EVICT).update(
                state=states.NOT_EVICTED, reason=NOT_EVICTED_REASON, next_try_at=None
            )
        if action == states.RESUME:  # try the blocked pods again at once
            DrainPod.objects.filter(drain__maintenance=maintenance, state__in=states.POD_TO_EVICT).update(
                next_try_at=None
            )
    audit.record(action="drain", maintenance=maintenance, user=user, effect="NoSchedule", message=message)
    audit.announce([maintenance.id])
    if action == states.RESUME:
        wake_drivers(maintenance.id)
    maintenance.refresh_from_db()
    return maintenance


def maintenance_drain_pause(
    *, maintenance: Maintenance, user: Any, expected_version: int | None = None
) -> Maintenance:
    return _lifecycle(maintenance=maintenance, user=user, action=states.PAUSE, expected_version=expected_version,
                      message="drain paused: no new eviction starts; evictions under way finish and their "
                              "replacements are still followed")  # fmt: skip


def maintenance_drain_resume(
    *, maintenance: Maintenance, user: Any, expected_version: int | None = None
) -> Maintenance:
    return _lifecycle(maintenance=maintenance, user=user, action=states.RESUME, expected_version=expected_version,
                      message="drain resumed")  # fmt: skip


NOT_EVICTED_REASON = "the drain was aborted before its eviction: it keeps running on the devices (NoSchedule)"
ABORT_MESSAGE = (
    "drain aborted: no further pod is evicted. The rules stay in the cluster with effect NoSchedule, so "
    "nothing new lands on the devices; pods not yet evicted keep running on them. Undo to remove the rules, "
    "or drain again."
)


def maintenance_drain_abort(
    *, maintenance: Maintenance, user: Any, expected_version: int | None = None
) -> Maintenance:
    return _lifecycle(maintenance=maintenance, user=user, action=states.ABORT, expected_version=expected_version,
                      message=ABORT_MESSAGE)  # fmt: skip


# --------------------------------------------------------------------------- the step


@dataclasses.dataclass
class StepResult:
    held: bool = False  # this driver held the drain's lease for the step
    evicted: int = 0
    blocked: int = 0
    changed: int = 0
    finished: bool = False


def active_drains() -> list[str]:
    return list(
        Drain.objects.filter(state__in=(Drain.RUNNING, Drain.PAUSED))
        .order_by("started_at")
        .values_list("maintenance_id", flat=True)
    )


def _take_lease(maintenance_id: str, driver: str, now: datetime) -> bool:
    until = now + timedelta(seconds=lease_seconds())
    return bool(
        Drain.objects.filter(maintenance_id=maintenance_id, state__in=(Drain.RUNNING, Drain.PAUSED))
        .filter(
            Q(lease_owner=driver) | Q(lease_owner="") | Q(lease_until__lt=now) | Q(lease_until__isnull=True)
        )
        .update(lease_owner=driver, lease_until=until, steps=F("steps") + 1)
    )


def release_leases(driver: str) -> None:
    Drain.objects.filter(lease_owner=driver).update(lease_owner="", lease_until=None)


def drain_step(maintenance_id: str, *, driver: str, now: datetime | None = None) -> StepResult:
    """One idempotent step of the drain of `maintenance_id` by `driver` (a token naming the process):
    nothing when another driver holds the drain or it is not running or paused."""
    now = now or timezone.now()
    result = StepResult()
    if not _take_lease(maintenance_id, driver, now):
        return result
    result.held = True
    drain = Drain.objects.select_related("maintenance", "started_by").get(maintenance_id=maintenance_id)
    result.changed += _observe(drain, driver, now)
    if drain.state == Drain.RUNNING:
        _dispatch(drain, driver, now, result)
        if _finish_if_done(drain, now):
            result.finished = True
            result.changed += 1
    if result.changed or result.evicted or result.blocked:
        audit.announce([maintenance_id])
    return result


def _mirror_pods(uids: list[str]) -> dict[str, dict[str, Any]]:
    from inventory.models import KubeObject

    return {
        uid: {"metadata": metadata or {}, "status": status or {}}
        for uid, metadata, status in KubeObject.objects.filter(kind="pods", uid__in=uids).values_list(
            "uid", "raw__metadata", "raw__status"
        )
    }


def _unschedulable(pod: dict[str, Any]) -> str | None:
    """The scheduler's word when it found no node for the pod (PodScheduled False, Unschedulable)."""
    for c in (pod.get("status") or {}).get("conditions") or []:
        if (
            c.get("type") == "PodScheduled"
            and c.get("status") == "False"
            and c.get("reason") == "Unschedulable"
        ):
            return str(c.get("message") or "no node fits it")
    return None


def _save(pod: DrainPod, **fields: Any) -> int:
    """Move one pod, only from the state this step read it in (another driver may have moved it)."""
    moved = DrainPod.objects.filter(pk=pod.pk, state=pod.state, claimed_by=pod.claimed_by).update(**fields)
    for name, value in fields.items():
        setattr(pod, name, value)
    return moved


def _observe(drain: Drain, driver: str, now: datetime) -> int:
    """Follow the pods through the mirror: evicted ones leaving, their replacements starting, timeouts."""
    from inventory.models import KubeObject

    pods = [p for p in drain.pods.all() if p.state not in states.POD_FINAL]
    if not pods:
        return 0
    mirrored = _mirror_pods([p.uid for p in pods])
    changed = 0
    stale_claim = now - timedelta(seconds=in_flight_seconds())
    for pod in pods:
        raw = mirrored.get(pod.uid)
        present = raw is not None and not raw["metadata"].get("deletionTimestamp")
        if pod.state == states.EVICTING and pod.claimed_by and pod.claimed_by != driver:
            # A driver died with this eviction in flight: evicted if the pod went, else ask again.
            if pod.requested_at and pod.requested_at < stale_claim:
                disrupted = raw is not None and any(
                    c.get("type") == "DisruptionTarget" and c.get("status") == "True"
                    for c in (raw["status"].get("conditions") or [])
                )
                if present and not disrupted:
                    changed += _save(pod, state=states.WAITING, claimed_by="", reason="", next_try_at=None)
                else:
                    changed += _save(pod, claimed_by="", evicted_at=pod.requested_at)
            continue
        if pod.state in states.POD_TO_EVICT and raw is None:
            changed += _save(pod, state=states.REPLACEMENT_PENDING, evicted_at=now, reason="left on its own")
        elif pod.state == states.EVICTING and not pod.claimed_by and raw is None:
            changed += _save(pod, state=states.REPLACEMENT_PENDING)

    # Replacements: pods of the same owners that did not exist when the drain started, oldest first,
    # each given to one evicted pod.
    waiting = sorted(
        (p for p in pods if p.state in (states.GONE, states.REPLACEMENT_PENDING, states.UNSCHEDULABLE)),
        key=lambda p: (p.evicted_at or now, p.order),
    )
    if waiting:
        taken = set(
            DrainPod.objects.filter(drain=drain)
            .exclude(replacement_uid="")
            .values_list("replacement_uid", flat=True)
        )
        known = set(drain.owner_pods or []) | {p.uid for p in drain.pods.all()}
        owners = {p.owner_uid for p in waiting}
        candidates: dict[str, list[tuple[str, dict[str, Any], str]]] = defaultdict(list)
        for uid, metadata, node, status in (
            KubeObject.objects.filter(kind="pods", namespace__in={p.namespace for p in waiting})
            .exclude(uid__in=known)
            .order_by("creation_timestamp", "name")
            .values_list("uid", "raw__metadata", "raw__spec__nodeName", "raw__status")
        ):
            metadata = metadata or {}
            owner = next((r for r in metadata.get("ownerReferences") or [] if r.get("controller")), None)
            if owner and owner.get("uid") in owners:
                candidates[str(owner["uid"])].append(
                    (uid, {"metadata": metadata, "status": status or {}}, node or "")
                )
        for pod in waiting:
            options = candidates.get(pod.owner_uid, [])
            chosen = (
                next((c for c in options if c[0] == pod.replacement_uid), None)
                if pod.replacement_uid
                else None
            )
            if chosen is None and not pod.replacement_uid:
                chosen = next((c for c in options if c[0] not in taken), None)
            fields: dict[str, Any] = {}
            if chosen is not None:
                uid, new, node = chosen
                taken.add(uid)
                fields = {"replacement_uid": uid, "replacement_name": new["metadata"].get("name", ""),
                          "replacement_node": node}  # fmt: skip
                if node and is_ready(new) and new["status"].get("phase") == "Running":
                    fields.update(state=states.RUNNING, settled_at=now, reason="")
                elif (said := _unschedulable(new)) is not None:
                    fields.update(
                        state=states.UNSCHEDULABLE,
                        reason=f"no node has room for the replacement (the scheduler: {said[:300]}); the drain "
                        f"moves on after {drain.replacement_timeout} s",
                    )
                else:
                    fields.update(state=states.REPLACEMENT_PENDING)
            timed_out = (
                fields.get("state") != states.RUNNING
                and not pod.timed_out
                and pod.evicted_at is not None
                and (now - pod.evicted_at).total_seconds() > drain.replacement_timeout
            )
            if timed_out:
                fields.update(
                    timed_out=True, settled_at=now,
                    reason=f"no running replacement after {drain.replacement_timeout} s: the drain moved on",
                )  # fmt: skip
            if fields and any(getattr(pod, k) != v for k, v in fields.items()):
                changed += _save(pod, **fields)
    return changed


def _in_flight(drain: Drain) -> int:
    return DrainPod.objects.filter(drain=drain, state__in=states.POD_IN_FLIGHT, timed_out=False).count()


def claim_pod(*, pod_id: int, driver: str) -> bool:
    """Claim one pod's eviction for `driver`: one conditional UPDATE, so of two drivers only one sends it.

    Its WHERE names the pod row itself, and the drain's state through EXISTS rather than a join: Django turns
    a join into `id IN (SELECT …)`, which PostgreSQL does not re-check against the row a concurrent UPDATE
    has just committed, so both drivers would claim the pod."""
    return bool(
        DrainPod.objects.filter(pk=pod_id, state__in=states.POD_TO_EVICT, claimed_by="")
        .filter(Exists(Drain.objects.filter(pk=OuterRef("drain_id"), state=Drain.RUNNING)))
        .update(
            state=states.EVICTING, claimed_by=driver, requested_at=timezone.now(), attempts=F("attempts") + 1
        )
    )


def _dispatch(drain: Drain, driver: str, now: datetime, result: StepResult) -> None:
    free = drain.concurrency - _in_flight(drain)
    if free <= 0:
        return
    candidates = list(
        DrainPod.objects.filter(drain=drain, state__in=states.POD_TO_EVICT, claimed_by="")
        .filter(Q(next_try_at__isnull=True) | Q(next_try_at__lte=now))
        .order_by("order")[:free]
    )
    if not candidates:
        return
    budgets = _budgets({p.namespace for p in candidates})
    labels = {
        uid: (metadata or {}).get("labels") or {}
        for uid, metadata in _mirror_labels([p.uid for p in candidates]).items()
    }
    user = drain.started_by
    for pod in candidates:
        claimed = claim_pod(pod_id=pod.pk, driver=driver)
        if not claimed:
            continue
        pod.refresh_from_db()
        _evict(drain, pod, user, budgets, labels.get(pod.uid, {}), result)


def _mirror_labels(uids: list[str]) -> dict[str, Any]:
    from inventory.models import KubeObject

    return dict(KubeObject.objects.filter(kind="pods", uid__in=uids).values_list("uid", "raw__metadata"))


def _evict(
    drain: Drain, pod: DrainPod, user: Any, budgets: list[dict[str, Any]], labels: dict[str, str],
    result: StepResult,
) -> None:  # fmt: skip
    maintenance = drain.maintenance
    subject = f"{pod.namespace}/{pod.name}"
    try:
        cluster.evict_pod(namespace=pod.namespace, name=pod.name, uid=pod.uid, as_user=user)
    except ClusterWriteError as error:
        now = timezone.now()
        if error.status == 429:
            budget = _budget_of(budgets, pod.namespace, labels)
            which = f"{budget['namespace']}/{budget['name']}" if budget else ""
            cause = "; ".join(str(c.get("message", "")) for c in error.causes if c.get("message"))
            why = _why_blocked(budget, cause) if budget else error.message
            reason = (
                f"blocked by PDB {which}: {why}"
                if which
                else f"blocked by a disruption budget: {cause or why}"
            )
            wait = backoff(pod.attempts)
            # Only the first refusal (and a changed reason) enters the audit log: a budget that says no for
            # a minute would otherwise write an entry per retry. The retries are counted on the pod
            # (attempts) and summed up in the entry that records its eviction (or the abort).
            repeated = pod.attempts > 1 and pod.budget == which and pod.reason == reason
            _save(pod, state=states.BLOCKED, claimed_by="", budget=which, reason=reason,
                  next_try_at=now + timedelta(seconds=wait))  # fmt: skip
            result.blocked += 1
            if not repeated:
                audit.record(
                    action="eviction", maintenance=maintenance, user=user, subject=subject, object_uid=pod.uid,
                    message=f"eviction of pod {subject} refused (429): {reason}; retrying with a back-off "
                            f"(first in {wait:g} s; further refusals are counted, not logged one by one)",
                    outcome={"status": 429, "answer": error.message, "cause": cause, "budget": which,
                             "attempt": pod.attempts},
                )  # fmt: skip
            return
        if error.status in (404, 409):  # gone already, or a new pod under the same name: not ours to evict
            _save(pod, state=states.REPLACEMENT_PENDING, claimed_by="", evicted_at=now,
                  reason="the pod was gone before its eviction")  # fmt: skip
            audit.record(action="eviction", maintenance=maintenance, user=user, subject=subject, object_uid=pod.uid,
                         message=f"eviction of pod {subject}: {error.status} {error.reason} (already gone)",
                         outcome={"status": error.status, "answer": error.message})  # fmt: skip
            return
        wait = backoff(pod.attempts)
        _save(pod, state=states.WAITING, claimed_by="", reason=f"eviction failed: {error}",
              next_try_at=now + timedelta(seconds=wait))  # fmt: skip
        audit.record(action="eviction", maintenance=maintenance, user=user, subject=subject, object_uid=pod.uid,
                     message=f"eviction of pod {subject} failed ({error.status}): {error.message}",
                     outcome={"status": error.status, "answer": error.message, "error": error.as_dict()})  # fmt: skip
        if error.status in (401, 403):  # retrying cannot help: stop and say why
            Drain.objects.filter(pk=drain.pk, state=Drain.RUNNING).update(
                state=Drain.PAUSED, message=f"paused: the cluster refused an eviction: {error.message}"
            )
            Maintenance.objects.filter(pk=maintenance.pk).update(version=F("version") + 1)
        return
    now = timezone.now()
    refused = _refusals(drain, pod, now)
    _save(pod, claimed_by="", evicted_at=now, reason="")
    result.evicted += 1
    audit.record(
        action="eviction", maintenance=maintenance, user=user, subject=subject, object_uid=pod.uid,
        message=f"eviction of pod {subject} requested: 201 accepted (it held {', '.join(pod.claims) or 'no claim'})"
                + (f" after {refused['text']}" if refused else ""),
        outcome={"status": 201, "owner": pod.owner, "node": pod.node, "attempt": pod.attempts,
                 **({"refused": refused} if refused else {})},
    )  # fmt: skip


def _refusals(drain: Drain, pod: DrainPod, now: datetime) -> dict[str, Any] | None:
    """How often a budget refused this pod's eviction and over how long ("blocked 14 times over 20 s
    by PDB ml/trainer"), from its attempts and its first logged refusal; None when it was never refused."""
    first = (
        AuditEntry.objects.filter(maintenance_id=drain.maintenance_id, action="eviction", object_uid=pod.uid,
                                  outcome__status=429, at__gte=drain.started_at)
        .order_by("id").values_list("at", flat=True).first()
    )  # fmt: skip
    times = max(0, pod.attempts - 1) if pod.state == states.EVICTING else pod.attempts
    if first is None or not times:
        return None
    seconds = max(0, round((now - first).total_seconds()))
    by = f" by PDB {pod.budget}" if pod.budget else ""
    return {"times": times, "seconds": seconds, "budget": pod.budget,
            "text": f"blocked {_n(times, 'time')} over {_duration(seconds).removeprefix('about ')}{by}"}  # fmt: skip


NEEDS_HEALTHY = re.compile(r"needs (\d+) healthy pods and has (\d+) currently")


def _why_blocked(budget: dict[str, Any], cause: str) -> str:
    """The budget's rule and its healthy pods ("minAvailable 10, 10 healthy") — as the API server counted
    them when it refused (upstream's "needs 10 healthy pods and has 10 currently"), else counted now from
    the API server's pods with the disruption controller's rule (dra.disruption)."""
    said = NEEDS_HEALTHY.search(cause)
    if said:
        return f"{describe_spec(budget['spec'])}, {said.group(2)} healthy"
    now_ = cluster.budget_now(namespace=budget["namespace"], name=budget["name"])
    if now_ is None:
        return describe_block(budget["spec"], budget["status"])
    fresh, pods = now_
    spec, status = fresh.get("spec") or {}, dict(fresh.get("status") or {})
    selector = spec.get("selector")
    disrupted = status.get("disruptedPods") or {}
    selected = [
        p
        for p in pods
        if selector and label_selector_matches(selector, (p.get("metadata") or {}).get("labels") or {})
    ]
    status["currentHealthy"] = sum(1 for p in selected if is_healthy(p, disrupted=disrupted))
    status.pop("disruptionsAllowed", None)
    return describe_block(spec, status)


def _finish_if_done(drain: Drain, now: datetime) -> bool:
    open_pods = DrainPod.objects.filter(drain=drain).filter(
        Q(state__in=states.POD_TO_EVICT) | Q(state__in=states.POD_IN_FLIGHT, timed_out=False)
    )
    if open_pods.exists():
        return False
    if not Drain.objects.filter(pk=drain.pk, state=Drain.RUNNING).update(
        state=Drain.COMPLETE, finished_at=now
    ):
        return False
    maintenance = drain.maintenance
    Maintenance.objects.filter(pk=maintenance.pk, state=states.DRAINING).update(
        state=states.next_state(states.DRAINING, states.COMPLETE), version=F("version") + 1, updated_at=now
    )
    counts = _counts(list(DrainPod.objects.filter(drain=drain)))
    audit.record(
        action="drain", maintenance=maintenance, actor="dradash-drain", effect="NoSchedule",
        message=f"drain complete: {counts['evicted']} evicted, {counts['running']} replacements running, "
                f"{counts['unschedulable']} unschedulable, {counts['timed_out']} timed out, "
                f"{counts['no-owner']} without an owner left in place. The rules keep effect NoSchedule; to catch "
                "stragglers apply NoExecute (its own preview and confirmation).",
        outcome=counts,
    )  # fmt: skip
    return True


# --------------------------------------------------------------------------- the live document


def _with_drift(maintenance: Maintenance, message: str) -> str:
    """A drain's message says the rules keep NoSchedule: not when someone changed them since."""
    from maintenance.progress import drift_summary, rule_drift

    drift = rule_drift(maintenances=[maintenance]).get(maintenance.pk, [])
    if not message or not drift:
        return message
    return f"{message} But since then {drift_summary(drift)}."


def _counts(pods: list[DrainPod]) -> dict[str, int]:
    counts = {state: 0 for state in states.POD_STATES}
    for pod in pods:
        counts[pod.state] = counts.get(pod.state, 0) + 1
    counts["total"] = len(pods)
    counts["evicted"] = sum(1 for p in pods if p.evicted_at is not None)
    counts["timed_out"] = sum(1 for p in pods if p.timed_out)
    counts["to_evict"] = sum(1 for p in pods if p.state != states.NO_OWNER)
    return counts


def drain_document(
    *, maintenance: Maintenance, now: datetime, pods_limit: int | None = 200
) -> dict[str, Any] | None:
    """The drain as the page and the API show it: state, every pod's state (and why), the budgets with their
    current disruptionsAllowed (from the mirror), and an ETA. None without a drain."""
    drain = Drain.objects.filter(maintenance=maintenance).first()
    if drain is None:
        return None
    pods = list(drain.pods.all())
    if drain.state == Drain.ABORTED:  # an answer that came after the abort: not evicted all the same
        for pod in pods:
            if pod.state in states.POD_TO_EVICT:
                pod.state, pod.reason = states.NOT_EVICTED, NOT_EVICTED_REASON
    counts = _counts(pods)
    settled = [p for p in pods if p.state == states.RUNNING and p.evicted_at and p.settled_at]
    if settled:
        per_pod = sum(
            (p.settled_at - p.evicted_at).total_seconds() for p in settled if p.settled_at and p.evicted_at
        )
        per_pod = max(1.0, per_pod / len(settled))
    else:
        per_pod = float(ESTIMATE_GRACE_DEFAULT + ESTIMATE_START_SECONDS)
    left = sum(1 for p in pods if p.state in states.POD_TO_EVICT) + sum(
        1 for p in pods if p.state in states.POD_IN_FLIGHT and not p.timed_out
    )
    active = drain.state in (Drain.RUNNING, Drain.PAUSED)
    blocked_by = sorted({p.budget or "a disruption budget" for p in pods if p.state == states.BLOCKED})
    eta_seconds: float | None = (
        math.ceil(left / max(1, drain.concurrency)) * per_pod if active and left else 0
    )
    if not active:
        eta = {Drain.ABORTED: "none (aborted)", Drain.COMPLETE: "done"}.get(drain.state, "done")
    elif drain.state == Drain.PAUSED and left:
        eta_seconds, eta = None, "none while paused"
    elif blocked_by:
        # A budget decides when the blocked pods may go (its other pods must be healthy first): no number
        # means anything until it allows a disruption again.
        retry = [p.next_try_at for p in pods if p.state == states.BLOCKED and p.next_try_at]
        next_try = max(0, math.ceil((min(retry) - now).total_seconds())) if retry else None
        names = ", ".join(f"PDB {b}" if "/" in b else b for b in blocked_by)
        eta_seconds = None
        eta = f"none while blocked: waiting for {names}" + (
            f" (next try in {next_try} s)" if next_try is not None else ""
        )
    else:
        eta = _duration(eta_seconds) if eta_seconds else "any moment"
    budgets = _budgets({p.namespace for p in pods})
    names = {p.budget for p in pods if p.budget}
    labels = _mirror_labels([p.uid for p in pods])
    members: dict[str, list[str]] = defaultdict(list)
    for pod in pods:
        budget = _budget_of(budgets, pod.namespace, ((labels.get(pod.uid) or {}).get("labels") or {}))
        which = f"{budget['namespace']}/{budget['name']}" if budget else pod.budget
        if which:
            members[which].append(pod.name)
    shown = [
        _budget_doc(b, members[f"{b['namespace']}/{b['name']}"])
        for b in budgets
        if f"{b['namespace']}/{b['name']}" in names or members.get(f"{b['namespace']}/{b['name']}")
    ]
    done = counts["to_evict"] - left - counts.get(states.NOT_EVICTED, 0)
    summary = f"{done} of {counts['to_evict']} pods moved · ETA {eta}"
    if counts[states.BLOCKED]:
        summary += f" · {_n(counts[states.BLOCKED], 'pod')} blocked by PDB"
    if counts.get(states.NOT_EVICTED):
        summary += f" · {counts[states.NOT_EVICTED]} not evicted (drain aborted)"
    if counts[states.NO_OWNER]:
        summary += f" · {counts[states.NO_OWNER]} without an owner left in place"
    if drain.state == Drain.COMPLETE:
        summary += " · complete"
    out_pods = [
        {"namespace": p.namespace, "name": p.name, "uid": p.uid, "node": p.node, "owner": p.owner, "order": p.order,
         "state": p.state, "label": states.POD_STATES.get(p.state, p.state) + (" (timed out)" if p.timed_out else ""),
         "reason": p.reason + (f" (refused {_n(p.attempts, 'time')})" if p.state == states.BLOCKED else ""),
         "budget": p.budget, "attempts": p.attempts, "evicted": p.evicted_at is not None,
         "replacement": {"name": p.replacement_name, "node": p.replacement_node} if p.replacement_name else None}
        for p in pods
    ]  # fmt: skip
    if pods_limit is not None:
        out_pods = out_pods[:pods_limit]
    return {
        "state": drain.state,
        "concurrency": drain.concurrency,
        "replacement_timeout": drain.replacement_timeout,
        "started_at": drain.started_at.isoformat(),
        "finished_at": drain.finished_at.isoformat() if drain.finished_at else None,
        "started_by": drain.started_by.username if drain.started_by else "",
        "message": _with_drift(
            maintenance, drain.message or (ABORT_MESSAGE if drain.state == Drain.ABORTED else "")
        ),
        "counts": counts,
        "done": done,
        "of": counts["to_evict"],
        "percent": round(100.0 * done / counts["to_evict"], 1) if counts["to_evict"] else 100.0,
        "eta_seconds": None if eta_seconds is None else int(eta_seconds),
        "eta": eta,
        "waiting_for": blocked_by,
        "summary": summary,
        "blocked": [p for p in out_pods if p["state"] == states.BLOCKED],
        "pods": out_pods,
        "pods_total": len(pods),
        "budgets": shown,
        "complete": drain.state == Drain.COMPLETE,
    }
