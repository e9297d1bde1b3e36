"""kube-scheduler's node sampling and scoring, as the simulated scheduler uses them.

- `feasible_nodes_to_find`: how many feasible nodes a cycle looks for before it stops filtering
  (percentageOfNodesToScore; 0 = adaptive: 50 % − nodes/125, at least 5 %, at least 100 nodes; every node
  below 100), as `numFeasibleNodesToFind` in pkg/scheduler/schedule_one.go.
- The default profile's score plugins that decide here, with their default weights: NodeResourcesFit
  (LeastAllocated over cpu and memory, weight 1, with the scheduler's non-zero defaults for pods that request
  nothing: 100m cpu, 200Mi memory — so request-less pods spread), NodeAffinity (preferred terms, weight 2)
  and TaintToleration (PreferNoSchedule taints, weight 3). Each plugin's score is 0..100 (MaxNodeScore); the
  node with the highest weighted sum wins, ties to the first in the rotation (upstream picks one at random).
  Not simulated: NodeResourcesBalancedAllocation, ImageLocality, PodTopologySpread, InterPodAffinity.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dra.quantity import Quantity, QuantityError
from dra.selection import SelectorError, node_selector_matches
from dra.taints import parse_taint, untolerated

JSON = dict[str, Any]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
MAX_NODE_SCORE = 100
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
WEIGHT_FIT = 1
WEIGHT_NODE_AFFINITY = 2
WEIGHT_TAINT_TOLERATION = 3


def feasible_nodes_to_find(total: int, percentage: int = 0) -> int:
    """How many feasible nodes to find before scoring (kube-scheduler's numFeasibleNodesToFind)."""
    if total < MIN_FEASIBLE_NODES_TO_FIND:
        return total
    if percentage <= 0:
        percentage = max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - total // 125)
    return max(MIN_FEASIBLE_NODES_TO_FIND, total * min(percentage, 100) // 100)


def _quantity(value: object) -> Quantity | None:
    try:
        return Quantity.parse(str(value).strip())
    except QuantityError:
        return None


def _container_requests(container: Mapping[str, Any]) -> tuple[int, int]:
    requests = (container.get("resources") or {}).get("requests") or {}
    cpu = _quantity(requests["cpu"]) if "cpu" in requests else None
    memory = _quantity(requests["memory"]) if "memory" in requests else None
    return (
        cpu.milli_value() if cpu is not None else DEFAULT_MILLI_CPU_REQUEST,
        memory.value() if memory is not None else DEFAULT_MEMORY_REQUEST,
    )


def pod_requests(pod: Mapping[str, Any]) -> tuple[int, int]:
    """(milli-cpu, memory bytes) the scorer counts for the pod: the containers' requests, each resource a
    container does not request at the non-zero default; init containers by their maximum; plus overhead."""
    spec = pod.get("spec") or {}
    cpu = memory = 0
    for container in spec.get("containers") or []:
        c, m = _container_requests(container)
        cpu, memory = cpu + c, memory + m
    for container in spec.get("initContainers") or []:
        c, m = _container_requests(container)
        cpu, memory = max(cpu, c), max(memory, m)
    overhead = spec.get("overhead") or {}
    if "cpu" in overhead and (q := _quantity(overhead["cpu"])) is not None:
        cpu += q.milli_value()
    if "memory" in overhead and (q := _quantity(overhead["memory"])) is not None:
        memory += q.value()
    return cpu, memory


def node_allocatable(node: Mapping[str, Any]) -> tuple[int, int]:
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    cpu = _quantity(allocatable.get("cpu", "0"))
    memory = _quantity(allocatable.get("memory", "0"))
    return (cpu.milli_value() if cpu else 0, memory.value() if memory else 0)


def least_allocated(requested: tuple[int, int], allocatable: tuple[int, int]) -> int:
    """NodeResourcesFit's LeastAllocated score (cpu and memory, weight 1 each), 0..100."""
    total = 0
    for used, capacity in zip(requested, allocatable, strict=True):
        if capacity > 0 and used <= capacity:
            total += (capacity - used) * MAX_NODE_SCORE // capacity
    return total // 2


def preferred_terms(pod: Mapping[str, Any]) -> list[tuple[int, JSON]]:
    """The pod's preferredDuringSchedulingIgnoredDuringExecution node affinity: (weight, NodeSelector of
    the one preference term); unreadable terms count for nothing (the API server validates them)."""
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    terms = []
    for term in affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []:
        weight = term.get("weight") if isinstance(term, Mapping) else None
        preference = term.get("preference") if isinstance(term, Mapping) else None
        if isinstance(weight, int) and weight > 0 and isinstance(preference, Mapping):
            terms.append((weight, {"nodeSelectorTerms": [dict(preference)]}))
    return terms


def preference_score(terms: list[tuple[int, JSON]], node: Mapping[str, Any]) -> int:
    """NodeAffinity's raw score: the weights of the preferred terms the node matches."""
    score = 0
    for weight, selector in terms:
        try:
            if node_selector_matches(selector, node):
                score += weight
        except SelectorError:
            continue
    return score


def prefer_no_schedule_taints(node: Mapping[str, Any]) -> list[Any]:
    return [
        parse_taint(t)
        for t in (node.get("spec") or {}).get("taints") or []
        if isinstance(t, Mapping) and t.get("effect") == "PreferNoSchedule"
    ]


def untolerated_preferences(taints: list[Any], pod: Mapping[str, Any]) -> int:
    """TaintToleration's raw score: PreferNoSchedule taints the pod does not tolerate (fewer is better)."""
    if not taints:
        return 0
    tolerations = [t for t in (pod.get("spec") or {}).get("tolerations") or [] if isinstance(t, Mapping)]
    return len(untolerated(taints, tolerations, effects=frozenset({"PreferNoSchedule"})))


def normalize(raw: list[int], *, reverse: bool = False) -> list[int]:
    """The framework's DefaultNormalizeScore: scaled to 0..100 by the highest; reversed for "fewer is better"."""
    highest = max(raw, default=0)
    if highest == 0:
        return [MAX_NODE_SCORE if reverse else 0 for _ in raw]
    scaled = [r * MAX_NODE_SCORE // highest for r in raw]
    return [MAX_NODE_SCORE - s for s in scaled] if reverse else scaled
