"""ControllerRevisions: the template history the DaemonSet and StatefulSet controllers keep, as
kube-controller-manager's (pkg/controller/history, the daemon controller's constructHistory/cleanupHistory,
the statefulset controller's getStatefulSetRevisions/truncateHistory) keep it.

One revision per distinct pod template, named `<owner>-<hash>` (the hash the pods' `controller-revision-hash`
label carries), its `data` the patch that puts the template back (`{"spec":{"template":{…,"$patch":"replace"}}}`,
what `kubectl rollout undo` sends), `revision` one past the highest so far (a template that comes back gets
its old revision renumbered, not a second one), a controlling owner reference to the set. Revisions no pod
uses beyond `revisionHistoryLimit` (10 by default) are deleted, the oldest first.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from simcluster.controllers.common import controller_of, name_of, namespace_of, owner_reference, uid_of
from simcluster.errors import ApiError
from simcluster.store import Store

JSON = dict[str, Any]

DEFAULT_HISTORY_LIMIT = 10


class HashCollision(Exception):
    """A revision of that name holds another template: the set's `status.collisionCount` goes up."""


def template_patch(owner: Mapping[str, Any]) -> JSON:
    """getPatch: the set's template as a strategic merge patch that replaces it, its keys sorted as Go's
    json.Marshal of a map sorts them (`kubectl rollout undo` compares these bytes with its own patch of the
    set to skip a rollback to the template already running)."""
    template = copy.deepcopy((owner.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    patch = _sorted({"spec": {"template": template}})
    assert isinstance(patch, dict)
    return patch


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def owned_revisions(store: Store, owner: Mapping[str, Any]) -> list[JSON]:
    """The owner's revisions (controlled by its uid), by revision number: committed objects, not copies."""
    uid = uid_of(owner)
    entries = store.snapshot("controllerrevisions", namespace=namespace_of(owner))[1]
    revisions = [e.obj for e in entries if (controller_of(e.obj) or {}).get("uid") == uid]
    return sorted(revisions, key=_number)


def _number(revision: Mapping[str, Any]) -> int:
    return int(revision.get("revision") or 0)


def record(store: Store, owner: Mapping[str, Any], name: str, labels: Mapping[str, str],
           annotations: Mapping[str, str] | None = None) -> JSON:  # fmt: skip
    """The revision `name` of the owner's current template: created with the next number, renumbered to
    the latest when an older one holds the template; HashCollision when one of that name holds another."""
    data = template_patch(owner)
    revisions = owned_revisions(store, owner)
    latest = max((_number(r) for r in revisions), default=0)
    namespace = namespace_of(owner)
    for revision in revisions:
        if name_of(revision) == name and revision.get("data") == data:
            if _number(revision) < latest:
                return store.patch("controllerrevisions", name, {"revision": latest + 1}, namespace=namespace)
            return revision
    revision_meta: JSON = {
        "name": name,
        "namespace": namespace,
        "labels": dict(labels),
        "ownerReferences": [owner_reference(owner)],
    }
    if annotations:
        revision_meta["annotations"] = dict(annotations)
    body = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": revision_meta, "data": data,
            "revision": latest + 1}  # fmt: skip
    try:
        return store.create("controllerrevisions", body)
    except ApiError as error:
        if error.status != 409:
            raise
    existing = store.get("controllerrevisions", name, namespace=namespace)
    if existing.get("data") == data:
        return existing
    raise HashCollision(name)


def trim(store: Store, owner: Mapping[str, Any], current: str, live: set[str], *, count_live: bool) -> None:
    """Delete the oldest revisions beyond the owner's revisionHistoryLimit that no name in `live` (the
    update revision, the pods' ones) names; `current` is never a candidate. The daemon controller counts the
    live ones it keeps towards the excess (cleanupHistory); the statefulset controller leaves them out
    (truncateHistory)."""
    limit = (owner.get("spec") or {}).get("revisionHistoryLimit")
    limit = DEFAULT_HISTORY_LIMIT if limit is None else int(limit)
    revisions = owned_revisions(store, owner)
    candidates = [r for r in revisions if name_of(r) != current and (count_live or name_of(r) not in live)]
    excess = len(candidates) - limit
    for revision in candidates:
        if excess <= 0:
            break
        if name_of(revision) in live:
            continue
        try:
            store.delete("controllerrevisions", name_of(revision), namespace=namespace_of(owner),
                         uid=uid_of(revision))  # fmt: skip
        except ApiError as error:
            if error.status not in (404, 409):
                raise
        excess -= 1


def bump_collisions(store: Store, plural: str, owner: Mapping[str, Any]) -> None:
    """A hash collision: one more in the set's status.collisionCount, so the next pass hashes anew."""
    count = int((owner.get("status") or {}).get("collisionCount") or 0) + 1
    store.patch(plural, name_of(owner), {"status": {"collisionCount": count}}, namespace=namespace_of(owner),
                subresource="status")  # fmt: skip


__all__ = ["DEFAULT_HISTORY_LIMIT", "HashCollision", "bump_collisions", "record", "template_patch", "trim"]
