"""The allocator's working data: candidates per node, validated requests, results."""

from __future__ import annotations

from dataclasses import dataclass, field

from dra.quantity import Quantity

from .model import Attr, Device, DeviceClass, Node, RequestSpec, Slice
from .pools import Pool


class ResultLimitExceeded(Exception):
    """More than 32 results would be needed; lets callers backtrack aggressively."""


@dataclass(eq=False, slots=True)
class Candidate:
    device: Device
    slice: Slice
    pool: Pool


@dataclass(eq=False, slots=True)
class NodeView:
    """Pools of one node, computed once per node and reused while the slices stay the same."""

    node: Node | None
    pools: list[Pool]
    #: devices of usable pools in search order (pool, slice, device); per-device node
    #: selection already applied
    candidates: list[Candidate]
    #: the same, per pool (index into `pools`)
    pool_candidates: list[list[Candidate]]
    #: device keys of `candidates`
    keys: list[str]
    #: some candidate may be shared (allowMultipleAllocations with ConsumableCapacity)
    has_multi: bool
    #: invalid pools ("driver/pool" -> why): reported when nothing fits on the node
    invalid: dict[str, str]
    #: `AllocatedState.releases` when every candidate was last seen in use (-1: never)
    full_since: int = -1


@dataclass(eq=False, slots=True)
class RequestData:
    """A validated request or subrequest; cached per claim, independent of node and call."""

    spec: RequestSpec
    device_class: DeviceClass
    #: name in results: "req" or "req/sub"
    name: str
    parent: str | None
    #: claim reference for error messages
    where: str
    num_devices: int
    all_mode: bool
    admin: bool
    #: indices into the claim's constraints that apply to this request
    constraint_ids: tuple[int, ...]
    #: device key -> class and request selectors all true (static: slices do not change)
    selectable_cache: dict[str, bool] = field(default_factory=dict)
    #: device key -> derived attribute name -> value (for requests with derivedAttributes)
    derived_cache: dict[str, dict[str, Attr]] = field(default_factory=dict)


@dataclass(eq=False, slots=True)
class ClaimPlan:
    """Everything about a claim that does not depend on the node: validated once. It does not refer back
    to its claim (which caches it in `PreparedClaim.plans`): that cycle left every pool's availability
    to the cyclic collector."""

    requests: list[list[RequestData]]
    has_sub: list[bool]
    #: (is matchAttribute, attribute) per constraint
    constraints: list[tuple[bool, str]]
    #: lower bound of devices (All requests count as one)
    min_devices: int
    #: no adminAccess and no All request: a node with fewer free devices cannot fit it
    simple: bool
    has_all: bool


@dataclass(slots=True)
class DeviceResult:
    request: RequestData
    candidate: Candidate
    share_id: str | None
    consumed: dict[str, Quantity] | None
