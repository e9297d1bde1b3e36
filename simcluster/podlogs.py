"""`pods/log` (`kubectl logs`): which container, and whether the node's kubelet would have logs for it.

Simulated containers print nothing, so a container that runs (or ran) has an empty log. The refusals are
the ones a real cluster gives: the API server's container checks (`validateContainer`) and, proxied as a
400, the kubelet's (`validateContainerLogStatus`): a container still waiting, no previous instance.
A pod on no node yet has no log location: the API server answers an empty stream.
"""

from __future__ import annotations

from typing import Any

from simcluster.errors import ApiError, bad_request

Obj = dict[str, Any]
_CONTAINER_KINDS = ("initContainers", "containers", "ephemeralContainers")
_STATUS_KINDS = ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")


def container_for_log(pod: Obj, requested: str) -> str:
    """The container whose log is asked for; a 400 as upstream's validateContainer words it."""
    spec = pod.get("spec") or {}
    name = str((pod.get("metadata") or {}).get("name", ""))
    every = [
        str(c.get("name", ""))
        for kind in _CONTAINER_KINDS
        for c in spec.get(kind) or []
        if isinstance(c, dict)
    ]
    if not requested:
        containers = spec.get("containers") or []
        if len(containers) == 1:
            return str(containers[0].get("name", ""))
        if not containers:
            raise bad_request(f"a container name must be specified for pod {name}")
        raise bad_request(
            f"a container name must be specified for pod {name}, choose one of: [{' '.join(every)}]"
        )
    if requested not in every:
        raise bad_request(f"container {requested} is not valid for pod {name}")
    return requested


def kubelet_refusal(pod: Obj, container: str, *, previous: bool) -> ApiError | None:
    """What the kubelet answers instead of a log (a 400 the API server passes on), or None: the log is there."""
    name = str((pod.get("metadata") or {}).get("name", ""))
    status = pod.get("status") or {}
    found = next(
        (
            s
            for kind in _STATUS_KINDS
            for s in status.get(kind) or []
            if isinstance(s, dict) and s.get("name") == container
        ),
        None,
    )
    if found is None:
        if status.get("phase") in ("Running", "Succeeded", "Failed"):
            return None  # the simulation started it without writing container statuses
        return bad_request(f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating')
    if previous:
        if not ((found.get("lastState") or {}).get("terminated") or {}).get("containerID"):
            return bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
        return None
    waiting = (found.get("state") or {}).get("waiting")
    if isinstance(waiting, dict) and not (found.get("state") or {}).get("running"):
        reason = waiting.get("reason", "")
        if reason == "ErrImagePull":
            reason = "image can't be pulled"
        elif reason == "ImagePullBackOff":
            reason = "trying and failing to pull image"
        return bad_request(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    return None
