"""Rules a failed enforce left in the cluster, and their removal.

`maintenance_apply` rolls back the rules it wrote when a later write fails; when the rollback fails too
(the API server stopped answering mid-way) those rules stay in the cluster — with the effect that enforce
wrote, NoExecute evicting pods — while the maintenance goes back to what it was. They are recorded on the
maintenance (`Maintenance.leftover_rules`: its page, its API and the delete guard show them) until:
- the drain driver (a thread of every deployment: `maintenance.driver`) retries the rollback once the
  cluster answers: it asks for the first rule without writing anything, so while the cluster is away no
  version is taken and the operator's page stays current (`leftovers_retry_all`);
- an operator removes them at once (`maintenance_leftovers_remove`, a 503 if the cluster still does not
  answer, with nothing removed that the record does not say);
- or an enforce writes every rule again, or undo deletes them all (`maintenance.services`).
Each rule removed enters the audit log.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth import get_user_model
from django.utils import timezone

from maintenance import audit, cluster, states
from maintenance.cluster import ClusterWriteError
from maintenance.errors import HEADLINE_CONFIRM, MaintenanceError
from maintenance.models import Maintenance
from maintenance.services import _check, _claim, _conflict, _n, _refused
from maintenance.taints import FieldError

log = logging.getLogger(__name__)

#: how often a driver retries the rollback of leftover rules (each retry first asks for one rule)
RETRY_EVERY_SECONDS = 15.0
AUTOMATIC_ACTOR = "dradash (automatic rollback)"


def _roll_back(entry: dict[str, Any], as_user: Any) -> None:
    """Undo what the failed enforce did to one rule: delete it (only the object it created: its uid is a
    precondition) or set back the taint it had."""
    name = str(entry["name"])
    if entry.get("previous") is None:
        cluster.delete_rule(name, uid=str(entry.get("uid") or "") or None, as_user=as_user)
        return
    try:
        cluster.patch_rule(name, {"spec": {"taint": entry["previous"]}}, dry_run=False, as_user=as_user)
    except ClusterWriteError as error:
        if error.status != 404:  # gone: nothing of it is left in the cluster
            raise


def _author(entry: dict[str, Any]) -> Any:
    """The user whose enforce left the rule: the retry writes as them (impersonation), as their rollback
    would have."""
    user_id = entry.get("user_id")
    return get_user_model().objects.filter(pk=user_id).first() if user_id else None


def _remove(maintenance: Maintenance, *, user: Any) -> list[ClusterWriteError]:
    """Roll back every recorded rule (the maintenance claimed, its write intent "rollback"); keep in the
    record the ones that failed, with their error. `user` None: the automatic retry."""
    kept: list[dict[str, Any]] = []
    errors: list[ClusterWriteError] = []
    how = "by hand" if user is not None else "automatically, once the cluster answered"
    pending = list(maintenance.leftover_rules)
    try:
        while pending:
            entry = pending[0]
            try:
                _roll_back(entry, user if user is not None else _author(entry))
            except ClusterWriteError as error:
                errors.append(error)
                kept.append({**entry, "error": str(error)})
                pending.pop(0)
                continue
            _audit_removed(maintenance, entry, user=user, how=how)
            pending.pop(0)
    finally:  # whatever stopped the loop, the record keeps every rule not known to be removed
        Maintenance.objects.filter(pk=maintenance.pk).update(
            leftover_rules=[*kept, *pending], write_intent={}, updated_at=timezone.now()
        )
        maintenance.refresh_from_db()
        audit.announce([maintenance.id])
    return errors


def _audit_removed(maintenance: Maintenance, entry: dict[str, Any], *, user: Any, how: str) -> None:
    deleted = entry.get("previous") is None
    audit.record(
        action="delete" if deleted else "update", maintenance=maintenance, user=user,
        actor="" if user is not None else AUTOMATIC_ACTOR, rule_name=str(entry["name"]),
        rule_uid=str(entry.get("uid") or ""), effect="" if deleted else str(entry["previous"].get("effect", "")),
        message=f"{'deleted' if deleted else 'set back to effect ' + str(entry['previous'].get('effect'))} "
                f"{how}: left in the cluster with effect {entry.get('effect')} by the failed enforce at "
                f"{entry.get('at')} (its rollback could not reach the cluster)",
        outcome={"leftover": entry},
    )  # fmt: skip


def maintenance_leftovers_remove(
    *, maintenance: Maintenance, user: Any, confirmed: bool, expected_version: int | None = None
) -> Maintenance:
    """ "Remove them now": roll back the rules a failed enforce left, at once. 503 when the cluster still
    does not answer (the record then says what is still there)."""
    try:
        _check(maintenance, states.REMOVE_LEFTOVERS, expected_version)
        if not maintenance.leftover_rules:
            raise _conflict(
                maintenance, "leftover_rules", "no rule of this maintenance is left by a failed enforce; nothing to remove"
            )  # fmt: skip
        if confirmed is not True:
            raise MaintenanceError(
                [FieldError("confirm", f"removing the {_n(len(maintenance.leftover_rules), 'rule')} a failed "
                            "enforce left changes the cluster: confirm it (the JSON boolean true)")],
                headline=HEADLINE_CONFIRM,
            )  # fmt: skip
    except MaintenanceError as error:
        if error.status != 400 or error.headline == HEADLINE_CONFIRM:
            _refused(maintenance, user, "remove leftover rules", error)
        raise
    _claim(maintenance, write_intent={"op": "rollback"})
    errors = _remove(maintenance, user=user)
    if errors:
        left = [str(r["name"]) for r in maintenance.leftover_rules]
        audit.record(
            action="failed", maintenance=maintenance, user=user,
            message="removing the rules a failed enforce left: " + "; ".join(f"{r['name']}: {r['error']}" for r in maintenance.leftover_rules),
        )  # fmt: skip
        audit.announce([maintenance.id])
        unreachable = all(e.unreachable for e in errors)
        shown = f"{', '.join(left[:3])}{' …' if len(left) > 3 else ''}"
        headline = (
            f"Cannot reach the Kubernetes API; {_n(len(left), 'rule')} left by the failed enforce "
            f"{'is' if len(left) == 1 else 'are'} still in the cluster ({shown}): try again once it answers "
            "(dradash also retries on its own)."
            if unreachable
            else f"The cluster refused removing {_n(len(left), 'rule')} left by the failed enforce ({shown})."
        )
        raise MaintenanceError(
            [FieldError("cluster", errors[0].message if unreachable else str(errors[0]))],
            status=503 if unreachable else 502, headline=headline,
            cluster_error=errors[0].as_dict(),
        )  # fmt: skip
    return maintenance


def leftovers_retry(maintenance_id: str) -> int:
    """One automatic retry for one maintenance: the number of rules removed (0 while the cluster does not
    answer, or while another write to the maintenance is under way)."""
    maintenance = Maintenance.objects.filter(pk=maintenance_id).first()
    if maintenance is None or not maintenance.leftover_rules or maintenance.write_intent:
        return 0
    try:
        cluster.get_rule(str(maintenance.leftover_rules[0]["name"]))  # does it answer? (writes nothing)
    except ClusterWriteError:
        return 0
    try:
        _claim(maintenance, write_intent={"op": "rollback"})
    except MaintenanceError:
        return 0  # an operator's write came first: the next round looks again
    before = len(maintenance.leftover_rules)
    _remove(maintenance, user=None)
    return before - len(maintenance.leftover_rules)


def leftovers_retry_all() -> int:
    """Every maintenance with leftover rules, retried once; the number of rules removed."""
    removed = 0
    pending = Maintenance.objects.exclude(leftover_rules=[]).filter(write_intent={})
    for maintenance_id in pending.values_list("pk", flat=True):
        try:
            removed += leftovers_retry(maintenance_id)
        except Exception:  # one broken record must not stop the others; the next round retries
            log.exception("removing the leftover rules of maintenance %s failed", maintenance_id)
    return removed
