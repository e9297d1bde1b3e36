"""The one error of the maintenance room: what was refused, why (per field), and what is true now."""

from __future__ import annotations

from typing import Any

from dradash.api import error_body
from maintenance.taints import FieldError

# What the page says above the list of errors, by what went wrong (never "nothing was applied" when
# that is not what happened).
HEADLINE_INVALID = "Please fix:"
HEADLINE_CONFLICT = "This maintenance is no longer in the state this page showed; nothing was done."
HEADLINE_STALE_PREVIEW = "The preview no longer describes the cluster; nothing was done. Run it again."
HEADLINE_NEEDS_PREVIEW = "Preview first; nothing was done."
HEADLINE_CONFIRM = "Confirm what is at stake; nothing was done."


class MaintenanceError(Exception):
    """Bad input or a refused write. `errors` name the field and the rule; `status` is the HTTP status;
    `current` (for conflicts) says what the maintenance is now; `headline` is the page's summary."""

    def __init__(
        self,
        errors: list[FieldError],
        *,
        status: int = 400,
        cluster_error: dict[str, Any] | None = None,
        headline: str = "",
        current: dict[str, Any] | None = None,
        changes: list[str] | None = None,
    ):
        super().__init__("; ".join(f"{e.field}: {e.message}" for e in errors))
        self.errors = errors
        self.status = status
        self.cluster_error = cluster_error or {}
        self.headline = headline or (HEADLINE_INVALID if status == 400 else "")
        self.current = current
        self.changes = changes or []

    def as_dict(self) -> dict[str, Any]:
        """The API's error envelope (`dradash.api.error_body`) with this room's context beside it."""
        body = error_body([e.as_dict() for e in self.errors])
        if self.headline:
            body["headline"] = self.headline
        if self.cluster_error:
            body["cluster"] = self.cluster_error
        if self.current is not None:
            body["current"] = self.current
        if self.changes:
            body["changed"] = self.changes
        return body


def invalid(field: str, message: str) -> MaintenanceError:
    return MaintenanceError([FieldError(field, message)])
