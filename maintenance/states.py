"""The maintenance lifecycle in one table: its states, the actions each state allows, and where an
action leads. Services check it before any write; pages and the live document offer only what it
allows, so a button never promises an action the server will refuse.

    draft ──apply None / NoSchedule / NoExecute──▶ applied ──apply another effect──▶ applied
      │                                               └──undo (delete the rules)──▶ undone
      └──drain (NoSchedule, then evictions)──▶ draining ──every pod moved (complete)──▶ applied (NoSchedule)
                       applied ──drain──▶ draining ──abort (NoSchedule stays)──▶ applied
                                          draining ──pause──▶ draining (paused) ──resume──▶ draining
    (undo "set effect None" is an apply of None: the rules stay, harmless. A draft or applied maintenance
    whose failed enforce left rules in the cluster also offers "remove the leftover rules", which changes
    no state: maintenance.leftovers. After a drain, NoExecute
    — "catch the stragglers" — is an apply of NoExecute with its own preview and typed confirmation.)

Each affected pod of a drain is in one of POD_STATES (maintenance.drain moves them).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ObjectDoesNotExist

DRAFT = "draft"
APPLIED = "applied"
UNDONE = "undone"
DRAINING = "draining"
STATES = (DRAFT, APPLIED, DRAINING, UNDONE)

PREVIEW = "preview"
APPLY = "apply"
UNDO = "undo"
DRAIN = "drain"
PAUSE = "pause"
RESUME = "resume"
ABORT = "abort"
COMPLETE = "complete"  # the driver's, not a button: every affected pod has moved
REMOVE_LEFTOVERS = "remove leftover rules"

ALLOWED: dict[str, frozenset[str]] = {
    DRAFT: frozenset({PREVIEW, APPLY, DRAIN, REMOVE_LEFTOVERS}),
    APPLIED: frozenset({PREVIEW, APPLY, UNDO, DRAIN, REMOVE_LEFTOVERS}),
    DRAINING: frozenset({PREVIEW, PAUSE, RESUME, ABORT, COMPLETE}),
    UNDONE: frozenset(),
}
AFTER: dict[tuple[str, str], str] = {
    (DRAFT, APPLY): APPLIED,
    (APPLIED, APPLY): APPLIED,
    (APPLIED, UNDO): UNDONE,
    (DRAFT, DRAIN): DRAINING,
    (APPLIED, DRAIN): DRAINING,
    (DRAINING, PAUSE): DRAINING,
    (DRAINING, RESUME): DRAINING,
    (DRAINING, ABORT): APPLIED,
    (DRAINING, COMPLETE): APPLIED,
}
REFUSAL: dict[str, str] = {
    DRAFT: "it is a draft: no rule is in the cluster yet",
    APPLIED: "its rules are in the cluster",
    DRAINING: "a drain is under way: pause or abort it first",
    UNDONE: "it was undone: its rules are gone; start a new maintenance",
}

# The drain's own state (maintenance.models.Drain) refines DRAINING: pause only while running, resume
# only while paused.
DRAIN_RUNNING = "running"
DRAIN_PAUSED = "paused"
DRAIN_ACTIONS: dict[str, frozenset[str]] = {
    DRAIN_RUNNING: frozenset({PAUSE, ABORT}),
    DRAIN_PAUSED: frozenset({RESUME, ABORT}),
}

# Each affected pod of a drain: (state, what the page says). Pods that tolerate the taint are not
# drained (left alone, as NoExecute would); pods without an owner are left in place (nothing would
# replace them: the final NoExecute, or the operator, decides).
WAITING = "waiting"
BLOCKED = "blocked"
EVICTING = "evicting"
GONE = "gone"
REPLACEMENT_PENDING = "replacement-pending"
RUNNING = "running"
UNSCHEDULABLE = "unschedulable"
NO_OWNER = "no-owner"
NOT_EVICTED = "not-evicted"  # the drain was aborted before this pod's eviction
POD_STATES: dict[str, str] = {
    WAITING: "waiting",
    BLOCKED: "blocked by PDB",
    EVICTING: "evicting",
    GONE: "gone",
    REPLACEMENT_PENDING: "replacement pending",
    RUNNING: "replacement running",
    UNSCHEDULABLE: "replacement unschedulable",
    NO_OWNER: "no owner: left in place",
    NOT_EVICTED: "not evicted (drain aborted)",
}
#: states in which the pod has not been evicted yet (the driver may still evict it)
POD_TO_EVICT = frozenset({WAITING, BLOCKED})
#: states in which the pod holds one of the drain's concurrency slots (until settled or timed out)
POD_IN_FLIGHT = frozenset({EVICTING, GONE, REPLACEMENT_PENDING, UNSCHEDULABLE})
#: states the pod does not leave
POD_FINAL = frozenset({RUNNING, NO_OWNER, NOT_EVICTED})


def allows(state: str, action: str, *, drain_state: str = "") -> bool:
    if state == DRAINING and action in (PAUSE, RESUME, ABORT):
        return action in DRAIN_ACTIONS.get(drain_state, frozenset())
    return action in ALLOWED.get(state, frozenset())


def next_state(state: str, action: str) -> str:
    return AFTER.get((state, action), state)


def offered(*, state: str, effect: str, drain_state: str = "", leftovers: bool = False) -> list[str]:
    """The buttons a page shows: the allowed actions, refined by the effect the cluster has now (and,
    while draining, by the drain's state; "remove-leftovers" only while a failed enforce left rules)."""
    buttons: list[str] = []
    if leftovers and allows(state, REMOVE_LEFTOVERS):
        buttons.append("remove-leftovers")
    if allows(state, PREVIEW):
        buttons.append("preview")
    if state == DRAINING:
        buttons.extend(
            f"drain-{a}" for a in (PAUSE, RESUME, ABORT) if allows(state, a, drain_state=drain_state)
        )
        return buttons
    if allows(state, APPLY):
        if effect != "None":
            buttons.append("apply-none" if state == DRAFT else "undo-none")
        buttons.extend(f"enforce-{e}" for e in ("NoSchedule", "NoExecute") if e != effect)
    if allows(state, UNDO):
        buttons.append("undo-delete")
    if allows(state, DRAIN) and effect != "NoExecute":
        buttons.append("drain")  # NoExecute evicted everything already: nothing left to drain
    return buttons


def current(maintenance: Any) -> dict[str, Any]:
    """What a refused action is told about the maintenance as it is now."""
    drain_state = drain_state_of(maintenance)
    return {
        "state": maintenance.state,
        "effect": maintenance.applied_effect,
        "version": maintenance.version,
        "drain": drain_state or None,
        "actions": offered(
            state=maintenance.state,
            effect=maintenance.applied_effect,
            drain_state=drain_state,
            leftovers=bool(getattr(maintenance, "leftover_rules", None)),
        ),
    }


def drain_state_of(maintenance: Any) -> str:
    """The state of the maintenance's drain ("" without one)."""
    try:
        return str(maintenance.drain.state)
    except (AttributeError, ObjectDoesNotExist):
        return ""
