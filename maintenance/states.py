"""The maintenance lifecycle in one table: its states, the actions each state allows, and where an
action leads. Services check it before any write; pages and the live document offer only what it
allows, so a button never promises an action the server will refuse.

    draft ──apply None / NoSchedule / NoExecute──▶ applied ──apply another effect──▶ applied
                                                      └──undo (delete the rules)──▶ undone
    (undo "set effect None" is an apply of None: the rules stay, harmless.)

Issue 14 adds a PDB-aware drain: a new state (say `draining`) is one row in each table below, and
the progress document (maintenance.progress) already reports per-pod states it can reuse.
"""

from __future__ import annotations

from typing import Any

DRAFT = "draft"
APPLIED = "applied"
UNDONE = "undone"
STATES = (DRAFT, APPLIED, UNDONE)

PREVIEW = "preview"
APPLY = "apply"
UNDO = "undo"

ALLOWED: dict[str, frozenset[str]] = {
    DRAFT: frozenset({PREVIEW, APPLY}),
    APPLIED: frozenset({PREVIEW, APPLY, UNDO}),
    UNDONE: frozenset(),
}
AFTER: dict[tuple[str, str], str] = {
    (DRAFT, APPLY): APPLIED,
    (APPLIED, APPLY): APPLIED,
    (APPLIED, UNDO): UNDONE,
}
REFUSAL: dict[str, str] = {
    DRAFT: "it is a draft: no rule is in the cluster yet",
    APPLIED: "its rules are in the cluster",
    UNDONE: "it was undone: its rules are gone; start a new maintenance",
}


def allows(state: str, action: str) -> bool:
    return action in ALLOWED.get(state, frozenset())


def next_state(state: str, action: str) -> str:
    return AFTER.get((state, action), state)


def offered(*, state: str, effect: str) -> list[str]:
    """The buttons a page shows: the allowed actions, refined by the effect the cluster has now."""
    buttons: list[str] = []
    if allows(state, PREVIEW):
        buttons.append("preview")
    if allows(state, APPLY):
        if effect != "None":
            buttons.append("apply-none" if state == DRAFT else "undo-none")
        buttons.extend(f"enforce-{e}" for e in ("NoSchedule", "NoExecute") if e != effect)
    if allows(state, UNDO):
        buttons.append("undo-delete")
    return buttons


def current(maintenance: Any) -> dict[str, Any]:
    """What a refused action is told about the maintenance as it is now."""
    return {
        "state": maintenance.state,
        "effect": maintenance.applied_effect,
        "version": maintenance.version,
        "actions": offered(state=maintenance.state, effect=maintenance.applied_effect),
    }
