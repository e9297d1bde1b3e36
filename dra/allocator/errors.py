"""The one exception the allocator raises."""


class AllocationError(Exception):
    """Invalid input (missing class, unknown mode, unsupported field …) or a CEL error.

    Upstream treats these as fatal for the scheduling attempt of the pod, as opposed to
    "cannot be allocated on this node", which `allocate` reports as ``None``.
    """

    #: True when only this node is affected (see `NodeAllocationError`)
    node_local: bool = False


class AllocationTimeout(AllocationError):
    """The search ran past its deadline or step budget (upstream: the per-node filter timeout)."""
