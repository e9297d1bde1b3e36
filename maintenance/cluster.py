"""The maintenance room's only door to the cluster: DeviceTaintRule reads and writes through
`inventory.kube`, with errors turned into one exception that carries the API's own message."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

RULES = "devicetaintrules"


@dataclass
class ClusterWriteError(Exception):
    status: int
    reason: str
    message: str
    causes: list[dict[str, Any]] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.status} {self.reason}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "message": self.message, "causes": self.causes}


_clients: dict[tuple[str, str], Any] = {}


def _client() -> Any:
    """One client per (kubeconfig, context), created on first use (the settings may change in tests)."""
    from inventory.kube import connect

    key = (settings.DRADASH_KUBECONFIG, settings.DRADASH_KUBE_CONTEXT)
    if key not in _clients:
        _clients[key] = connect(kubeconfig=key[0] or None, context=key[1] or None)
    return _clients[key]


def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    from inventory.kube import KubeError

    try:
        return fn(*args, **kwargs)
    except KubeError as error:
        raise ClusterWriteError(
            error.status, error.reason, error.message, list(error.causes or [])
        ) from error
    except OSError as error:  # connection refused, timeouts: the API server is unreachable
        raise ClusterWriteError(
            503, "ServiceUnavailable", f"cannot reach the Kubernetes API: {error}"
        ) from error


def get_rule(name: str) -> dict[str, Any] | None:
    try:
        result: dict[str, Any] = _call(_client().get_object, RULES, name)
        return result
    except ClusterWriteError as error:
        if error.status == 404:
            return None
        raise


def create_rule(obj: dict[str, Any], *, dry_run: bool) -> dict[str, Any]:
    result: dict[str, Any] = _call(_client().create_object, RULES, obj, dry_run=dry_run)
    return result


def patch_rule(name: str, patch: dict[str, Any], *, dry_run: bool) -> dict[str, Any]:
    result: dict[str, Any] = _call(
        _client().patch_object,
        RULES,
        name,
        patch,
        content_type="application/merge-patch+json",
        dry_run=dry_run,
    )
    return result


def delete_rule(name: str, *, uid: str | None = None, dry_run: bool = False) -> None:
    try:
        _call(_client().delete_object, RULES, name, uid=uid, dry_run=dry_run)
    except ClusterWriteError as error:
        if error.status != 404:  # already gone is what we wanted
            raise
