"""The maintenance room's only door to the cluster: DeviceTaintRule reads and writes (and the drain's
pod evictions) through
`inventory.kube`, with errors turned into one exception that carries the API's own message.

Writes take `as_user` (the logged-in Django user): with DRADASH_IMPERSONATION_ENABLED they go out as that
user (`inventory.access.kube_identity`), so the cluster's RBAC decides and its audit log names them; a 403
then reads "Kubernetes denied: USER cannot VERB devicetaintrules". Reads are made as dradash itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inventory.access import cluster_client, kube_identity
from inventory.kube import KubeError

RULES = "devicetaintrules"


@dataclass
class ClusterWriteError(Exception):
    status: int
    reason: str
    message: str
    causes: list[dict[str, Any]] = field(default_factory=list)

    #: "Kubernetes denied: alice cannot create devicetaintrules" when the cluster refused the user (403)
    denied: str = ""
    #: no answer from the API server at all (refused, reset, cut, timed out): it refused nothing
    unreachable: bool = False

    def __str__(self) -> str:
        if self.unreachable:  # no status came back: "cannot reach the Kubernetes API: …"
            return self.message
        return f"{self.status} {self.reason}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "message": self.message, "causes": self.causes}


def _client() -> Any:
    return cluster_client()


def _call(
    fn: Any, *args: Any, verb: str = "", as_user: Any = None, resource: str = RULES, **kwargs: Any
) -> Any:
    identity = kube_identity(as_user)
    if identity is not None:
        kwargs["as_user"] = identity
    try:
        return fn(*args, **kwargs)
    except KubeError as error:
        if error.is_unreachable:
            raise _unreachable(error.reason, error.message) from error
        denied = ""
        if error.status == 403 and identity is not None and verb:
            denied = f"Kubernetes denied: {identity.user} cannot {verb} {resource}"
        raise ClusterWriteError(
            error.status, error.reason, denied or error.message, list(error.causes or []), denied=denied
        ) from error
    except OSError as error:  # connection refused, timeouts: the API server is unreachable
        raise _unreachable("ConnectionError", str(error)) from error


def _unreachable(reason: str, detail: str) -> ClusterWriteError:
    """The API server did not answer: 503, as every "cannot reach" of the product (the database, the task
    broker, pool status writes) — the cluster's own error answers stay 502 — with the client's error."""
    return ClusterWriteError(503, reason, f"cannot reach the Kubernetes API: {detail}", unreachable=True)


def get_rule(name: str) -> dict[str, Any] | None:
    try:
        result: dict[str, Any] = _call(_client().get_object, RULES, name)
        return result
    except ClusterWriteError as error:
        if error.status == 404:
            return None
        raise


def create_rule(obj: dict[str, Any], *, dry_run: bool, as_user: Any = None) -> dict[str, Any]:
    result: dict[str, Any] = _call(
        _client().create_object, RULES, obj, dry_run=dry_run, verb="create", as_user=as_user
    )
    return result


def patch_rule(name: str, patch: dict[str, Any], *, dry_run: bool, as_user: Any = None) -> dict[str, Any]:
    result: dict[str, Any] = _call(
        _client().patch_object,
        RULES,
        name,
        patch,
        content_type="application/merge-patch+json",
        dry_run=dry_run,
        verb="patch",
        as_user=as_user,
    )
    return result


def delete_rule(name: str, *, uid: str | None = None, dry_run: bool = False, as_user: Any = None) -> None:
    try:
        _call(_client().delete_object, RULES, name, uid=uid, dry_run=dry_run, verb="delete", as_user=as_user)
    except ClusterWriteError as error:
        if error.status != 404:  # already gone is what we wanted
            raise


def evict_pod(*, namespace: str, name: str, uid: str, as_user: Any = None) -> dict[str, Any]:
    """Ask the Eviction API to evict one pod (its uid a precondition), as `as_user` like rule writes: the
    cluster refuses with 429 while a PodDisruptionBudget allows no disruption (ClusterWriteError)."""
    result: dict[str, Any] = _call(
        _client().evict_pod,
        namespace,
        name,
        uid=uid,
        verb="create",
        resource="pods/eviction",
        as_user=as_user,
    )
    return result


def budget_now(*, namespace: str, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """A PodDisruptionBudget and the pods of its namespace as the API server has them now (read as
    dradash), for saying why an eviction was refused; None when it cannot be read."""
    try:
        client = _client()
        budget: dict[str, Any] = _call(client.get_object, "poddisruptionbudgets", name, namespace=namespace)
        pods, _, _ = _call(client.list_objects, "pods", namespace=namespace)
    except ClusterWriteError:
        return None
    return budget, list(pods)
