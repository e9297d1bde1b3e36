"""The exceptions the allocator raises."""

from __future__ import annotations

from collections.abc import Mapping


class AllocationError(Exception):
    """Invalid input (missing class, unknown mode, unsupported field …) or a CEL error.

    Upstream treats these as fatal for the scheduling attempt of the pod, as opposed to
    "cannot be allocated on this node", which `allocate` reports as ``None``. Messages use
    upstream's words, so they can be compared with the scheduler's events.
    """

    #: True when only this node is affected (see `NodeAllocationError`)
    node_local: bool = False


class NodeAllocationError(AllocationError):
    """Allocation failed on this node for a reason worth reporting; other nodes may still fit.

    Upstream wraps these in ``ErrFailedAllocationOnNode``: the scheduler records the message as
    the node's reason and goes on with the next node. Today the one case is an invalid pool
    on a node where nothing else serves the claims ("invalid resource pools were encountered");
    ``pools`` maps each invalid pool (``driver/pool``) to what is wrong with it.
    """

    node_local = True

    def __init__(self, message: str, *, pools: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.pools = dict(pools or {})


class AllocationTimeout(AllocationError):
    """The search ran past its deadline or step budget (upstream: the per-node filter timeout)."""
