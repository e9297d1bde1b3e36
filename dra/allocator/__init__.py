"""A pure Python implementation of the Kubernetes DRA structured allocator (v1.37 semantics).

No Django, no ``kubernetes`` import: Kubernetes JSON dicts in, ``status.allocation`` dicts out.
It follows upstream ``k8s.io/dynamic-resource-allocation/structured`` ("incubating" variant,
"experimental" with ListTypeAttributes) and gives upstream's answer on all 223 cases of its
allocator table (ported in ``tests/dra/test_allocator_upstream_*.py``; ``python -m
tests.dra.upstream_report`` prints the figure), apart from the differences listed at the end.

One-shot use::

    from dra.allocator import allocate, AllocationError, DEFAULT_FEATURES

    results = allocate(classes=[...], slices=[...], allocated_claims=[...], claims=[claim],
                       node=node_json, taint_rules=[...], features=DEFAULT_FEATURES)

``results`` is one ``status.allocation`` dict per claim (same order), or ``None`` when the
claims cannot be allocated together on that node. `AllocationError` means invalid input
(missing class, unknown allocation mode, empty or unknown constraint, fields the enabled
features do not allow, more than 32 results) or a CEL error, which aborts as upstream does.
Its subclass `NodeAllocationError` (``node_local`` is True) fails only this node: upstream's
errors wrapping ``ErrFailedAllocationOnNode``, today "invalid resource pools were
encountered" when an invalid pool is reachable and nothing else serves the claims; a
scheduler records it as the node's reason and tries the next node (``pools`` names each
invalid pool and why). Messages are upstream's (its Go format strings), so they can be
compared with scheduler events. ``features`` holds upstream names (``AdminAccess``,
``PrioritizedList``, ``PartitionableDevices``, ``DeviceTaints``, ``DeviceTaintRules``,
``ConsumableCapacity``, ``DeviceBindingAndStatus``, ``ListTypeAttributes``,
``FractionalCapacityRange``, ``DerivedAttributes``, ``DeviceCompatibilityGroups``,
``OptionalNodeOperations``; a ``DRA`` prefix is accepted, and the gates ``DRADeviceBindingConditions`` plus ``DRAResourceClaimDeviceStatus``
give ``DeviceBindingAndStatus`` as in kube-scheduler); the default of `allocate` is *no* optional feature, `DEFAULT_FEATURES` is what
1.37 enables.

Repeated use (a scheduler trying node after node, headroom counting) should build one
`Allocator` (upstream ``NewAllocator``) and keep one `AllocatedState` current::

    state = AllocatedState.from_claims(allocated_claims)
    allocator = Allocator(classes=..., slices=..., state=state, taint_rules=..., features=...)
    claim = prepare_claim(claim_json)            # convert once, reuse for every node
    for node in nodes:
        result = allocator.allocate(node, [claim])
        if result is not None:
            state.add_claim({**claim_json, "status": {"allocation": result[0]}})
            break

Pools per node, compiled CEL, selector results per (expression, device) and claim
validation are cached in the `Allocator`; the per-call cost does not depend on how many
claims are allocated, and a node whose devices are all in use is rejected in O(1) until the
next `AllocatedState.remove_claim`. Build a new `Allocator` when classes, slices or taint
rules change; do not mutate input dicts while it is in use; use one `Allocator` per thread.
``max_search_steps`` bounds one call and ``deadline`` (a ``time.monotonic()`` value) bounds its
time, checked every 64 search steps (`AllocationTimeout`, an `AllocationError`, beyond either;
upstream's per-node filter timeout); ``allocator.search_steps`` counts steps like upstream's statistic.

What it does (upstream ``k8s.io/dynamic-resource-allocation/structured``, "incubating" variant):

* pools: only the highest ``generation`` of a pool counts; a pool with fewer slices than
  ``resourceSliceCount`` is incomplete (never allocated from; ``All`` requests then fail
  with an error), one with a newer generation elsewhere is obsolete (ignored), one with a
  device name twice among this node's slices, a counter set declared twice, or a device (of
  any node) consuming a counter set or counter the pool does not declare is invalid
  (`dra.objects.pool_problem`; never allocated from, and the node's `NodeAllocationError`
  when nothing else fits). Slices reach a node through ``nodeName``, ``nodeSelector``
  (NodeSelector semantics incl. ``matchFields`` on ``metadata.name``), ``allNodes`` or
  ``perDeviceNodeSelection``; counter slices likewise, but when a pool looks incomplete from
  the node all its slices decide, so counter sets published for another node count.
  Pools are ordered by driver and pool name, pools with binding conditions last; slices by
  name; devices in slice order.
* search: first fit, depth first with backtracking; within one request only combinations
  (not permutations) are tried; ``firstAvailable`` subrequests in order (result request
  ``req/sub``); ``ExactCount`` and ``All``; ``matchAttribute`` and ``distinctAttribute``
  constraints (``requests`` may name ``req`` or ``req/sub``); at most 32 results per claim.
* admin access ignores other claims' use of a device. The namespace label
  ``resource.kubernetes.io/admin-access`` cannot be checked here (only claims are given),
  so ``adminAccess: true`` is taken as authorised.
* taints from slices and from DeviceTaintRules (selector driver/pool/device; ``{}`` selects
  all devices, a missing selector none): NoSchedule and NoExecute block unless tolerated,
  None and unknown effects never block. Tolerations are copied into the result.
* partitionable devices: counters are shared pool-wide, including devices allocated on
  other nodes; consumable capacity with request policies (default, validValues, validRange
  rounding), ``allowMultipleAllocations`` and a fresh ``shareID`` per allocation (pass
  ``id_factory`` for deterministic ids).
* 1.37 betas and alphas, each only with its feature: fractional ``validRange`` bounds are rounded
  in milli-units (FractionalCapacityRange; without it upstream's whole-unit rounding); a request's
  ``derivedAttributes`` are CEL values computed per device after its selectors matched, which its
  constraints compare in place of (or shadowing) device attributes, a CEL error or a value of no
  attribute type aborting allocation (DerivedAttributes; without it such a request is refused);
  ``compatibilityGroups`` keep devices on one counter set to those sharing a group, already
  allocated ones included (DeviceCompatibilityGroups; without it, as upstream, slices declaring
  groups are ignored and their pools look incomplete); a slice's ``skipNodeOperations`` is copied
  into each result (OptionalNodeOperations; without it such devices are not allocated, as KEP-5945
  says). Node allocatable resources are computed after allocation (`dra.node_allocatable`);
  DRAWorkloadResourceClaims changes nothing here.
* binding conditions are copied into results and set ``allocationTimestamp`` (pass
  ``clock`` for a deterministic time); ``bindsToNode`` and node-local devices produce a
  ``metadata.name`` node selector, otherwise slice node selectors are AND-merged, and
  ``allNodes`` devices give no node selector.

What upstream does that looks odd is kept, because the goal is upstream's answer:
``distinctAttribute`` holds one value per request name (a request's next device is compared
with its latest one only); counters taken for a device that is then refused (taint,
constraint, capacity), and those of a shared device the search backtracks past, stay taken
for the rest of the attempt; a matchAttribute intersection over list values only narrows;
without ListTypeAttributes a list value is accepted as the first device of a constraint and
never matches after; an attribute with no value of a known type is an error naming it
("attribute X: unsupported attribute value") as soon as a selector looks at the device. For
feature sets upstream serves with its "stable" allocator (only AdminAccess, PrioritizedList,
PartitionableDevices, DeviceTaints) its deterministic differences are followed too:
``distinctAttribute`` is an "empty constraint (unsupported constraint type?)", capacity
requests are ignored, ``bindsToNode`` does not pin the node selector.

Deliberate differences from upstream: ``allocationTimestamp`` is set when a result has binding
conditions (upstream's scheduler plugin does that after the allocator); input the API server
would refuse is refused naming the field (unknown fields such as ``derivedAttributes``, an
ExactCount ``count`` below 1, both or neither of ``exactly``/``firstAvailable``, both
constraint kinds, malformed quantities), where upstream's allocator ignores or accepts it;
a device refused for its compatibility groups gives its counters back (upstream's code for that
step was not available; see `search`); a derived attribute's empty list is an error;
messages append what upstream leaves out (the invalid pools and why, the lister's "not found");
pools are keyed by driver and name everywhere (upstream keys its counter bookkeeping by pool
name only, so two drivers' pools of one name share counters there); stable's own search order
(permutations, pools in Go map order) is not imitated. The admin-access namespace label
cannot be checked here (only claims are given), so ``adminAccess: true`` is taken as
authorised. Quantities use this package's exact `quantity` module, not the CEL Quantity type.

Modules: ``model`` (JSON to frozen dataclasses, strict for claims), ``pools`` (gathering),
``state`` (allocated devices), ``allocator`` (caches and claim plans), ``search`` (the
depth-first search), ``results`` (result JSON), ``capacity``, ``constraints``, ``groups``
(compatibility groups), ``explain``.
Tests: ``tests/dra/test_allocator*.py`` (our named cases, upstream's table ported, upstream
step counts, a brute-force oracle over random cases); benchmark: ``bench/bench_allocator.py``.

Explanations for what-if: `explain` returns a `DeviceVerdict` per (device reachable from
the node, request or subrequest) with one reason from `REASONS`: ``usable``, ``pool
incomplete`` (also for slices ignored because they declare compatibility groups), ``pool
invalid``, ``node mismatch``, ``binding conditions not supported``, ``node operations not
supported``, ``class selector false``, ``request selector false``, ``selector error``,
``derived attribute error``, ``already in use`` (names the claims), ``taint not tolerated``
(names key, value, effect and whether the ResourceSlice or which DeviceTaintRule put it there),
``counters exhausted``, ``incompatible groups`` ("incompatible with <device> on counter set X
(groups A vs B)"), ``capacity short`` or ``constraint unmet`` (the device lacks the attribute,
or too few usable devices share its matchAttribute value). Derived attribute values are shown
in the detail ("derived attribute derived/numa: 1"). It is slower than `allocate` and meant for
one claim at a time; pass ``allocator=`` to reuse an `Allocator` (then ``classes``,
``slices``, ``allocated_claims``, ``taint_rules`` and ``features`` are ignored).
`summarize(claim, verdicts)` condenses them per request: needed, usable, blocked counts per
reason and one sentence ("gpu: needs 2, only 1 usable (3 already in use)").

CEL selectors go through `dra.allocator.cel` (imported on first use); tests may pass
another `SelectorBackend`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from .allocator import Allocator
from .errors import AllocationError, AllocationTimeout, NodeAllocationError
from .explain import REASONS, DeviceVerdict, RequestSummary, explain, summarize
from .features import DEFAULT_FEATURES
from .memo import SelectorMemo
from .model import Json, PreparedClaim, prepare_claim
from .selectors import SelectorBackend
from .state import AllocatedState

__all__ = [
    "SelectorMemo",
    "DEFAULT_FEATURES",
    "REASONS",
    "AllocatedState",
    "AllocationError",
    "AllocationTimeout",
    "Allocator",
    "DeviceVerdict",
    "NodeAllocationError",
    "PreparedClaim",
    "RequestSummary",
    "SelectorBackend",
    "allocate",
    "explain",
    "prepare_claim",
    "summarize",
]


def allocate(
    *,
    classes: Iterable[Json],
    slices: Iterable[Json],
    allocated_claims: Iterable[Json],
    claims: Sequence[Json | PreparedClaim],
    node: Json | None = None,
    taint_rules: Iterable[Json] = (),
    features: Iterable[str] = frozenset(),
    backend: SelectorBackend | None = None,
    id_factory: Callable[[], str] | None = None,
    clock: Callable[[], datetime] | None = None,
) -> list[dict[str, Any]] | None:
    """Allocate all ``claims`` together on ``node``: one ``status.allocation`` each, or None."""
    allocator = Allocator(
        classes=classes,
        slices=slices,
        allocated_claims=allocated_claims,
        taint_rules=taint_rules,
        features=features,
        backend=backend,
        id_factory=id_factory,
        clock=clock,
    )
    return allocator.allocate(node, claims)
