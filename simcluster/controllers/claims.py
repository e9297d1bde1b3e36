"""The ResourceClaim controller: releases claims when their pods go away.

Reservations for pods that no longer exist (or have finished) are removed; a claim whose last reservation
goes is deallocated (`status.allocation` and `status.devices` cleared) and loses the delete-protection
finalizer (a claim allocated without ever being reserved stays allocated until it is deleted); claims generated for a pod (template or extended-resource claims) are deleted once that pod is
gone. A claim being deleted that nobody reserves is released the same way so its deletion can finish.
"""

from __future__ import annotations

import copy
from typing import Any

from dra.objects import is_extended_resource_claim
from simcluster.controllers.common import (
    DELETE_PROTECTION,
    POD_CLAIM_NAME,
    controller_of,
    is_deleting,
    is_terminal,
    meta,
    name_of,
    namespace_of,
    read_all,
    uid_of,
)
from simcluster.errors import ApiError, is_namespace_terminating
from simcluster.store import Store

JSON = dict[str, Any]
WATCHES = frozenset({"pods", "resourceclaims"})


class ClaimController:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.deallocated = 0

    def reconcile(self) -> float | None:
        # Claims first: a reservation or a generated claim always follows its pod's creation, so the
        # pods read afterwards include every pod the claims name (the other order races the scheduler).
        claims = read_all(self.store, "resourceclaims")
        live: dict[str, JSON] = {}
        for pod in read_all(self.store, "pods"):
            if not is_terminal(pod):
                live[uid_of(pod)] = pod
        retry = False
        for claim in claims:
            try:
                self._release(claim, live)
            except ApiError as error:
                if error.status not in (404, 409) and not is_namespace_terminating(error):
                    raise
                retry = error.status == 409
        return 0.05 if retry else None

    def _release(self, claim: JSON, live: dict[str, JSON]) -> None:
        status = claim.get("status") or {}
        reserved = status.get("reservedFor") or []
        kept = [r for r in reserved if r.get("resource") != "pods" or r.get("uid") in live]
        owner = controller_of(claim)
        generated = bool(
            owner
            and owner.get("kind") == "Pod"
            and (
                (meta(claim).get("annotations") or {}).get(POD_CLAIM_NAME)
                or is_extended_resource_claim(claim)
            )
        )
        orphaned = generated and owner is not None and owner.get("uid") not in live
        protected = DELETE_PROTECTION in (meta(claim).get("finalizers") or [])
        released = len(kept) < len(reserved)
        # Only the last consumer's going (or the claim's deletion) deallocates: a claim allocated with no
        # consumer yet (a driver or an admin writing status) stays allocated, as upstream's controller has it.
        deallocate = (
            not kept
            and protected
            and status.get("allocation") is not None
            and (released or is_deleting(claim))
        )
        name, ns = name_of(claim), namespace_of(claim)
        if released or deallocate:
            updated = copy.deepcopy(claim)
            new_status = updated.setdefault("status", {})
            if kept:
                new_status["reservedFor"] = kept
            else:
                new_status.pop("reservedFor", None)
            if deallocate:
                new_status.pop("allocation", None)
                new_status.pop("devices", None)
                self.deallocated += 1
            claim = self.store.update("resourceclaims", updated, subresource="status")
        unallocated = not kept and (claim.get("status") or {}).get("allocation") is None
        # The scheduler adds the finalizer just before it allocates, so only a claim this pass released
        # or one being deleted loses it; an unallocated claim may be about to be allocated.
        releasing = released or is_deleting(claim)
        if unallocated and releasing and DELETE_PROTECTION in (meta(claim).get("finalizers") or []):
            updated = copy.deepcopy(claim)
            remaining = [f for f in meta(claim)["finalizers"] if f != DELETE_PROTECTION]
            if remaining:
                updated["metadata"]["finalizers"] = remaining
            else:
                updated["metadata"].pop("finalizers")
            claim = self.store.update("resourceclaims", updated)
        if orphaned and unallocated and not is_deleting(claim):
            try:
                self.store.delete("resourceclaims", name, namespace=ns, uid=uid_of(claim))
            except ApiError as error:
                if error.status != 404:
                    raise
