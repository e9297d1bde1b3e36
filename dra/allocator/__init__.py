"""A pure Python implementation of the Kubernetes DRA structured allocator (v1.37 semantics).

No Django, no ``kubernetes`` import: Kubernetes JSON dicts in, ``status.allocation`` dicts out.

One-shot use::

    from dra.allocator import allocate, AllocationError, DEFAULT_FEATURES

    results = allocate(classes=[...], slices=[...], allocated_claims=[...], claims=[claim],
                       node=node_json, taint_rules=[...], features=DEFAULT_FEATURES)

``results`` is one ``status.allocation`` dict per claim (same order), or ``None`` when the
claims cannot be allocated together on that node. `AllocationError` means invalid input
(missing class, unknown allocation mode, empty or unknown constraint, fields the enabled
features do not allow, more than 32 results) or a CEL error, which aborts as upstream does.
``features`` holds upstream names (``AdminAccess``, ``PrioritizedList``,
``PartitionableDevices``, ``DeviceTaints``, ``DeviceTaintRules``, ``ConsumableCapacity``,
``DeviceBindingAndStatus``, ``ListTypeAttributes``; a ``DRA`` prefix is accepted); the
default of `allocate` is *no* optional feature, `DEFAULT_FEATURES` is what 1.37 enables.

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
  with an error), one with a newer generation elsewhere is obsolete (ignored), one with
  duplicate device names or unknown counter references is invalid (never allocated from).
  Slices reach a node through ``nodeName``, ``nodeSelector`` (NodeSelector semantics incl.
  ``matchFields`` on ``metadata.name``), ``allNodes`` or ``perDeviceNodeSelection``.
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
* binding conditions are copied into results and set ``allocationTimestamp`` (pass
  ``clock`` for a deterministic time); ``bindsToNode`` and node-local devices produce a
  ``metadata.name`` node selector, otherwise slice node selectors are AND-merged, and
  ``allNodes`` devices give no node selector.

Deliberate differences from upstream: ``distinctAttribute`` compares every device, not one
value per request name (an upstream quirk); counters taken for a device that is then
rejected (taint, constraint) are given back (upstream leaks them within the attempt); a
claim config naming several requests is copied once, not once per request. Where upstream
returns a node-local error ("invalid resource pools were encountered") this returns ``None``
(explain shows ``pool invalid``). Quantities use this package's exact `quantity` module,
not the CEL Quantity type.

Modules: ``model`` (JSON to frozen dataclasses, strict for claims), ``pools`` (gathering),
``state`` (allocated devices), ``allocator`` (caches and claim plans), ``search`` (the
depth-first search), ``results`` (result JSON), ``capacity``, ``constraints``, ``explain``.
Tests: ``tests/allocation/test_allocator*.py`` (named cases, upstream step counts, and a
brute-force oracle over random cases); benchmark: ``bench/bench_allocator.py``.

Explanations for what-if: `explain` returns a `DeviceVerdict` per (device reachable from
the node, request or subrequest) with one reason from `REASONS`: ``usable``, ``pool
incomplete``, ``pool invalid``, ``node mismatch``, ``binding conditions not supported``,
``class selector false``, ``request selector false``, ``selector error``, ``already in
use`` (names the claims), ``taint not tolerated`` (names key, value, effect and whether
the ResourceSlice or which DeviceTaintRule put it there), ``counters exhausted``,
``capacity short`` or ``constraint unmet`` (the device lacks the attribute, or too few
usable devices share its matchAttribute value). It is slower than `allocate` and meant for
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
from .errors import AllocationError, AllocationTimeout
from .explain import REASONS, DeviceVerdict, RequestSummary, explain, summarize
from .features import DEFAULT_FEATURES
from .model import Json, PreparedClaim, prepare_claim
from .selectors import SelectorBackend
from .state import AllocatedState

__all__ = [
    "DEFAULT_FEATURES",
    "REASONS",
    "AllocatedState",
    "AllocationError",
    "AllocationTimeout",
    "Allocator",
    "DeviceVerdict",
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
