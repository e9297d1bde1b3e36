"""The garbage collector, kube-controller-manager's: ownerReferences decide what goes when an owner goes.

Like upstream's, it keeps a graph of owners and dependents from the store's events (`observe`, called
under the store lock for every change) and works through what they queued:

- an object whose owners are all gone (deleted, or never there) is deleted, in the background unless it
  carries a finalizer of ours; an owner that is gone is dropped from a dependent that has another;
- an owner deleted with propagationPolicy Orphan (finalizer `orphan`) loses its dependents, which are
  left without the reference to it, and then the finalizer;
- an owner deleted with propagationPolicy Foreground (finalizer `foregroundDeletion`) has its dependents
  deleted (in the foreground those that have dependents of their own, so a Deployment waits for its
  ReplicaSets' pods), and keeps the finalizer until no dependent whose reference sets
  `blockOwnerDeletion` exists any more, pods still terminating included.

The collector acts with its own rights (upstream: the generic-garbage-collector service account), so who
deleted the owner need not be allowed to delete its dependents.
"""

from __future__ import annotations

import copy
import threading
from typing import Any

from dra.kinds import BY_KIND
from simcluster.controllers.common import is_deleting, meta, name_of, namespace_of, uid_of
from simcluster.errors import ApiError
from simcluster.store import FOREGROUND_FINALIZER, ORPHAN_FINALIZER, Store

JSON = dict[str, Any]
Item = tuple[str, str, str]  # (plural, namespace or "", name)


class GarbageCollector:
    def __init__(self, store: Store) -> None:
        self.store = store
        # `observe` runs in writers' threads under the store lock, `reconcile` in the loop's: this lock
        # guards the graph and the queues, and nothing calls the store while holding it.
        self._lock = threading.Lock()
        self._owners: dict[Item, frozenset[str]] = {}  # a dependent → the uids its ownerReferences name
        self._dependents: dict[str, set[Item]] = {}  # an owner's uid → its dependents
        self._attempts: set[Item] = set()  # dependents to look at: delete, unlink or leave
        self._finalizing: set[Item] = set()  # owners deleted with `orphan` or `foregroundDeletion`

    # --- the graph ---------------------------------------------------------------------------------------

    def sync(self) -> None:
        """Read what the store holds now; call with the store lock held, before `observe` hears changes."""
        for plural in self.store.iter_plurals():
            for entry in self.store.snapshot(plural)[1]:
                self.observe("ADDED", plural, entry.obj)

    def observe(self, event_type: str, plural: str, obj: JSON) -> bool:
        """Take in one committed change; True when it gave the collector work."""
        metadata = obj["metadata"]
        refs = metadata.get("ownerReferences")
        item = (plural, str(metadata.get("namespace") or ""), str(metadata["name"]))
        deleted = event_type == "DELETED"
        with self._lock:
            before = self._owners.get(item, frozenset())
            owners = frozenset() if deleted or not refs else frozenset(str(r.get("uid")) for r in refs)
            if owners != before:
                self._relink(item, before, owners)
            work = bool(self._finalizing)  # a dependent's change may let a waiting owner go
            if deleted:
                self._finalizing.discard(item)
                dependents = self._dependents.get(str(metadata.get("uid", "")))
                if dependents:  # the owner is gone: its dependents may be garbage now
                    self._attempts.update(dependents)
                    work = True
                return work
            finalizers = metadata.get("finalizers") or ()
            if metadata.get("deletionTimestamp") and (
                ORPHAN_FINALIZER in finalizers or FOREGROUND_FINALIZER in finalizers
            ):
                self._finalizing.add(item)
                work = True
            else:
                self._finalizing.discard(item)
            if event_type == "ADDED" and owners:
                # its owners may be missing from the start (upstream's "virtual" owner nodes)
                self._attempts.add(item)
                work = True
            return work

    def _relink(self, item: Item, before: frozenset[str], after: frozenset[str]) -> None:
        for uid in before - after:
            dependents = self._dependents.get(uid)
            if dependents is not None:
                dependents.discard(item)
                if not dependents:
                    del self._dependents[uid]
        for uid in after - before:
            self._dependents.setdefault(uid, set()).add(item)
        if after:
            self._owners[item] = after
        else:
            self._owners.pop(item, None)

    def _dependents_of(self, uid: str) -> list[Item]:
        with self._lock:
            return sorted(self._dependents.get(uid, ()))

    def _has_dependents(self, uid: str) -> bool:
        with self._lock:
            return bool(self._dependents.get(uid))

    # --- the work ----------------------------------------------------------------------------------------

    def reconcile(self) -> float | None:
        with self._lock:
            finalizing = sorted(self._finalizing)
            pending = sorted(self._attempts, reverse=True)
            self._attempts.clear()
        retry = False
        try:
            for item in finalizing:
                retry = self._guarded(self._finalize, item) or retry
            while pending:
                item = pending.pop()
                if self._guarded(self._attempt_to_delete, item):
                    retry = True
                    with self._lock:
                        self._attempts.add(item)
        finally:
            if pending:  # a failed pass: what it did not reach waits for the next
                with self._lock:
                    self._attempts.update(pending)
        return 0.05 if retry else None

    @staticmethod
    def _guarded(step: Any, item: Item) -> bool:
        """Run one step; True when it met a conflict and should be tried again (gone is done)."""
        try:
            step(item)
        except ApiError as error:
            if error.status == 409:
                return True
            if error.status != 404:
                raise
        return False

    def _get(self, item: Item) -> JSON | None:
        plural, namespace, name = item
        try:
            entry = self.store.get_entry(plural, name, namespace=namespace or None)
        except ApiError as error:
            if error.status == 404:
                return None
            raise
        return entry.obj

    def _owner(self, dependent: JSON, ref: JSON) -> tuple[bool, JSON | None]:
        """(known, owner): the live owner a reference names, None when it is gone (absent, or another object
        by that name now); known is False when the collector cannot tell (a kind this server does not serve,
        a namespaced owner of a cluster-scoped object)."""
        kind = BY_KIND.get(str(ref.get("kind", "")))
        if kind is None or kind.api_version != ref.get("apiVersion", kind.api_version):
            return False, None
        namespace = namespace_of(dependent) if kind.namespaced else ""
        if kind.namespaced and not namespace:
            return False, None
        owner = self._get((kind.plural, namespace, str(ref.get("name", ""))))
        if owner is None or uid_of(owner) != ref.get("uid"):
            return True, None
        return True, owner

    def _attempt_to_delete(self, item: Item) -> None:
        """Upstream's attemptToDeleteItem for a dependent that is not itself waiting on its dependents."""
        dependent = self._get(item)
        if dependent is None or is_deleting(dependent):
            return  # "being deleted is a one-way trip": its dependents follow once it is gone
        refs = meta(dependent).get("ownerReferences") or []
        if not refs:
            return
        solid: list[JSON] = []
        dangling: list[JSON] = []
        waiting: list[JSON] = []
        for ref in refs:
            known, owner = self._owner(dependent, ref)
            if not known:
                return  # upstream retries such an item forever; it is never collected
            if owner is None:
                dangling.append(ref)
            elif is_deleting(owner) and FOREGROUND_FINALIZER in (meta(owner).get("finalizers") or ()):
                waiting.append(ref)
            else:
                solid.append(ref)
        if solid:
            gone = {str(r.get("uid")) for r in dangling + waiting}
            if gone:
                self._unlink(item, dependent, gone)
            return
        finalizers = meta(dependent).get("finalizers") or ()
        if waiting and self._has_dependents(uid_of(dependent)):
            policy = "Foreground"  # its owner waits for it, and it for its own dependents
        elif ORPHAN_FINALIZER in finalizers:
            policy = "Orphan"
        elif FOREGROUND_FINALIZER in finalizers:
            policy = "Foreground"
        else:
            policy = "Background"
        self.store.delete(
            item[0],
            name_of(dependent),
            namespace=item[1] or None,
            uid=uid_of(dependent),
            propagation_policy=policy,
        )

    def _finalize(self, item: Item) -> None:
        owner = self._get(item)
        if owner is None or not is_deleting(owner):
            return
        uid = uid_of(owner)
        finalizers = meta(owner).get("finalizers") or []
        if ORPHAN_FINALIZER in finalizers:
            for dependent_item in self._dependents_of(uid):
                dependent = self._get(dependent_item)
                if dependent is not None:
                    self._unlink(dependent_item, dependent, {uid})
            self._drop_finalizer(item, owner, ORPHAN_FINALIZER)
        elif FOREGROUND_FINALIZER in finalizers:
            blocking = False
            for dependent_item in self._dependents_of(uid):
                dependent = self._get(dependent_item)
                if dependent is None:
                    continue
                blocking = blocking or any(
                    r.get("uid") == uid and r.get("blockOwnerDeletion")
                    for r in meta(dependent).get("ownerReferences") or []
                )
                self._attempt_to_delete(dependent_item)
            if not blocking:
                self._drop_finalizer(item, owner, FOREGROUND_FINALIZER)

    def _unlink(self, item: Item, dependent: JSON, uids: set[str]) -> None:
        """Drop the references to `uids` from a dependent: upstream's strategic merge patch, which deletes
        them by uid whatever else changed meanwhile, on the dependent of this uid only."""
        deletions = [{"$patch": "delete", "uid": uid} for uid in sorted(uids)]
        self.store.patch(
            item[0],
            item[2],
            {"metadata": {"ownerReferences": deletions, "uid": uid_of(dependent)}},
            content_type="application/strategic-merge-patch+json",
            namespace=item[1] or None,
        )

    def _drop_finalizer(self, item: Item, owner: JSON, finalizer: str) -> None:
        updated = copy.deepcopy(owner)
        kept = [f for f in meta(updated).get("finalizers") or [] if f != finalizer]
        if kept:
            updated["metadata"]["finalizers"] = kept
        else:
            updated["metadata"].pop("finalizers", None)
        self.store.update(item[0], updated)
