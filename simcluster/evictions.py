"""The Eviction API (`POST …/pods/NAME/eviction`), honouring PodDisruptionBudgets as upstream's
pkg/registry/core/pod/storage/eviction.go does.

A pod that is Pending, finished or already being deleted is deleted without looking at budgets. Otherwise
the one PDB selecting it (more than one: 500) decides: a pod that is not Ready may go when the budget
allows unhealthy pods (`unhealthyPodEvictionPolicy: AlwaysAllow`, or `IfHealthyBudget` with enough healthy
pods); a Ready pod needs `status.disruptionsAllowed > 0` on a status the disruption controller has caught
up with (`observedGeneration`), which is then decremented and the pod recorded in `disruptedPods`, all under
the store's lock so two evictions cannot spend one disruption. The evicted pod gets the `DisruptionTarget`
condition (reason EvictionByEvictionAPI) and is deleted with the request's DeleteOptions. A refusal is 429
with the upstream message and a `DisruptionBudget` cause.
"""

from __future__ import annotations

from typing import Any

from dra.disruption import is_ready
from dra.selection import SelectorError, label_selector
from simcluster.errors import ApiError, bad_request, conflict, not_found
from simcluster.jsondata import clone
from simcluster.resources import resource_for
from simcluster.store import Store, format_time

Obj = dict[str, Any]

MAX_DISRUPTED_PODS = 2000
DELETION_TIMEOUT_SECONDS = 120
TOO_MANY = "Cannot evict pod as it would violate the pod's disruption budget."
SUCCESS: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def _too_many(message: str, retry_after: int = 0) -> ApiError:
    details: Obj = {"causes": [{"reason": "DisruptionBudget", "message": message}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return ApiError(429, "TooManyRequests", TOO_MANY, details)


def _still_processing(pdb_name: str) -> ApiError:
    return _too_many(f"The disruption budget {pdb_name} is still being processed by the server.", 10)


def disruption_allowed_condition(status: Obj, now: str) -> None:
    """Set the DisruptionAllowed condition from `status.disruptionsAllowed` (upstream's pdb helper)."""
    allowed = int(status.get("disruptionsAllowed") or 0) > 0
    condition = {
        "type": "DisruptionAllowed",
        "status": "True" if allowed else "False",
        "observedGeneration": int(status.get("observedGeneration") or 0),
        "lastTransitionTime": now,
        "reason": "SufficientPods" if allowed else "InsufficientPods",
        "message": "",
    }
    set_status_condition(status, condition)


def set_status_condition(status: Obj, condition: Obj) -> None:
    """meta.SetStatusCondition: keep lastTransitionTime while the condition's status is unchanged."""
    conditions = [dict(c) for c in status.get("conditions") or []]
    for i, existing in enumerate(conditions):
        if existing.get("type") == condition["type"]:
            merged = dict(condition)
            if existing.get("status") == condition["status"] and existing.get("lastTransitionTime"):
                merged["lastTransitionTime"] = existing["lastTransitionTime"]
            conditions[i] = merged
            break
    else:
        conditions.append(dict(condition))
    status["conditions"] = conditions


def _denied_message(pdb: Obj) -> str:
    """Why a budget with no disruptions left refuses (upstream's disruptionDeniedMessage)."""
    status = pdb.get("status") or {}
    name = pdb["metadata"]["name"]
    condition = next(
        (c for c in status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None
    )
    current, desired = int(status.get("currentHealthy") or 0), int(status.get("desiredHealthy") or 0)
    failed = condition is not None and condition.get("status") == "False" and condition.get("message")
    if failed and condition is not None and condition.get("reason") == "SyncFailed":
        return f"The disruption budget {name} does not allow evicting pods currently because it failed sync: {condition['message']}"
    if current <= desired:
        return f"The disruption budget {name} needs {desired} healthy pods and has {current} currently"
    if failed and condition is not None:
        return f"The disruption budget {name} does not allow evicting pods currently ({condition.get('reason')}): {condition['message']}"
    return f"The disruption budget {name} does not allow evicting pods currently"


def _delete_options(body: Obj, query_dry_run: list[str]) -> tuple[int | None, Obj, bool]:
    options = body.get("deleteOptions") or {}
    if not isinstance(options, dict):
        raise bad_request("deleteOptions must be an object")
    grace = options.get("gracePeriodSeconds")
    if grace is not None and (not isinstance(grace, int) or isinstance(grace, bool)):
        raise bad_request(f"deleteOptions.gracePeriodSeconds: must be an integer, got {grace!r}")
    preconditions = options.get("preconditions") or {}
    if not isinstance(preconditions, dict):
        raise bad_request("deleteOptions.preconditions must be an object")
    body_dry_run = options.get("dryRun") or []
    if query_dry_run and body_dry_run and list(body_dry_run) != list(query_dry_run):
        raise bad_request(
            f"Non-matching dry-run options in request and content: {query_dry_run} and {body_dry_run}"
        )
    for value in [*query_dry_run, *body_dry_run]:
        if value != "All":
            raise bad_request(f'dryRun: Unsupported value: "{value}": supported values: "All"')
    return grace, preconditions, bool(query_dry_run or body_dry_run)


def _matching_budgets(store: Store, pod: Obj) -> list[Obj]:
    labels = pod["metadata"].get("labels") or {}
    found = []
    for entry in store.snapshot("poddisruptionbudgets", namespace=pod["metadata"]["namespace"])[1]:
        try:
            selector = label_selector((entry.obj.get("spec") or {}).get("selector"))
        except SelectorError:
            continue  # an invalid selector matches no pod
        if selector.matches(labels):
            found.append(entry.obj)
    return found


def evict(store: Store, namespace: str, name: str, body: Any, *, query_dry_run: list[str]) -> tuple[int, Obj]:
    """Evict pod `namespace/name`: (HTTP status, Status body), or ApiError."""
    if not isinstance(body, dict):
        raise bad_request("the body of the request was in an unknown format")
    if body.get("kind") not in (None, "Eviction") or body.get("apiVersion") not in (
        None,
        "policy/v1",
        "policy/v1beta1",
    ):
        raise bad_request(
            f'{body.get("kind")} in version "{body.get("apiVersion")}" cannot be handled as a Eviction'
        )
    if ((body.get("metadata") or {}).get("name") or "") != name:
        raise bad_request("name in URL does not match name in Eviction object")
    grace, preconditions, dry_run = _delete_options(body, query_dry_run)
    pods = resource_for("pods")
    assert pods is not None
    with store.lock:
        try:
            pod = store.get_entry("pods", name, namespace=namespace).obj
        except ApiError:
            raise not_found(pods, name) from None
        phase = (pod.get("status") or {}).get("phase")
        deleting = bool(pod["metadata"].get("deletionTimestamp"))
        if phase in ("Succeeded", "Failed", "Pending") or deleting:
            # Terminal or not yet running: the disruption happened (or cannot) already; no budget applies.
            enforce = not (phase in ("Succeeded", "Failed") or deleting)
            rv = preconditions.get("resourceVersion") or (
                pod["metadata"]["resourceVersion"] if enforce else None
            )
            _delete(store, pod, grace, preconditions, rv, dry_run)
            return 201, dict(SUCCESS)
        budgets = _matching_budgets(store, pod)
        if len(budgets) > 1:
            return 500, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                         "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource "
                                    "does not support.", "code": 500}  # fmt: skip
        pin_version = False
        if budgets:
            pdb = budgets[0]
            spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
            unhealthy_may_go = not is_ready(pod) and (
                spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow"
                or (int(status.get("currentHealthy") or 0) >= int(status.get("desiredHealthy") or 0) > 0)
            )
            if unhealthy_may_go:
                pin_version = True  # the pod must not have become ready since we looked
            else:
                _check_and_decrement(store, pdb, name, dry_run)
        rv = preconditions.get("resourceVersion")
        if pin_version and not rv:
            rv = pod["metadata"]["resourceVersion"]
        try:
            _delete(store, pod, grace, preconditions, rv, dry_run)
        except ApiError as error:
            if error.status == 409 and pin_version and not preconditions.get("resourceVersion"):
                raise _still_processing(budgets[0]["metadata"]["name"]) from None
            raise
    return 201, dict(SUCCESS)


def _check_and_decrement(store: Store, pdb: Obj, pod_name: str, dry_run: bool) -> None:
    name = pdb["metadata"]["name"]
    status = clone(pdb.get("status") or {})
    if int(status.get("observedGeneration") or 0) < int(pdb["metadata"].get("generation") or 0):
        raise _still_processing(name)
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise ApiError(403, "Forbidden", f'poddisruptionbudget.policy "{name}" is forbidden: pdb disruptions allowed is negative',
                       {"name": name, "group": "policy", "kind": "poddisruptionbudget"})  # fmt: skip
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
        raise ApiError(403, "Forbidden", f'poddisruptionbudget.policy "{name}" is forbidden: DisruptedPods map too big - '
                       "too many evictions not confirmed by PDB controller",
                       {"name": name, "group": "policy", "kind": "poddisruptionbudget"})  # fmt: skip
    if allowed == 0:
        raise _too_many(_denied_message(pdb))
    status["disruptionsAllowed"] = allowed - 1
    now = store.now()
    if allowed - 1 == 0:
        disruption_allowed_condition(status, now)
    if dry_run:
        return
    status.setdefault("disruptedPods", {})[pod_name] = now
    updated = clone(pdb)
    updated["status"] = status
    store.update("poddisruptionbudgets", updated, subresource="status")


def _delete(
    store: Store, pod: Obj, grace: int | None, preconditions: Obj, rv: str | None, dry_run: bool
) -> None:
    meta = pod["metadata"]
    uid = preconditions.get("uid")
    pods = resource_for("pods")
    assert pods is not None
    if uid and uid != meta.get("uid"):
        raise conflict(pods, meta["name"], f"the UID in the precondition ({uid}) does not match the UID in record "
                                           f"({meta.get('uid')}). The object might have been deleted and then recreated")  # fmt: skip
    if rv and rv != meta.get("resourceVersion"):
        raise conflict(pods, meta["name"], f"the ResourceVersion in the precondition ({rv}) does not match the "
                                           f"ResourceVersion in record ({meta.get('resourceVersion')}). The object "
                                           "might have been modified")  # fmt: skip
    if dry_run:
        store.delete(
            "pods", meta["name"], namespace=meta["namespace"], dry_run=True, grace_period_seconds=grace
        )
        return
    status = clone(pod.get("status") or {})
    set_status_condition(status, {"type": "DisruptionTarget", "observedGeneration": int(meta.get("generation") or 1),
                                  "status": "True", "lastTransitionTime": store.now(),
                                  "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"})  # fmt: skip
    marked = clone(pod)
    marked["status"] = status
    updated = store.update("pods", marked, subresource="status")
    store.delete("pods", meta["name"], namespace=meta["namespace"], uid=meta.get("uid"),
                 resource_version=updated["metadata"]["resourceVersion"], grace_period_seconds=grace)  # fmt: skip


__all__ = ["DELETION_TIMEOUT_SECONDS", "evict", "disruption_allowed_condition", "format_time", "is_ready"]
