"""Template context for every page: whether the mirrored data is current (the status banner)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from inventory.selectors.status import mirror_status


def data_status(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"data_status": mirror_status()}
