"""What every patch algorithm raises: the refusal the server turns into a ``Status``."""

from __future__ import annotations

from typing import Any

#: Any JSON value (patches and the objects they change are decoded JSON).
Json = Any


class PatchError(Exception):
    """A patch the server must refuse; ``status``/``reason`` become the ``Status`` object's code and reason."""

    def __init__(
        self,
        status: int,
        reason: str,
        message: str,
        causes: list[dict[str, str]] | None = None,
        *,
        detail: str = "",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.message = message
        self.causes: list[dict[str, str]] = causes or []
        #: why, when the answer a real server gives does not say (logged, not sent)
        self.detail = detail
