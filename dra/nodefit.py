"""Whether a pod may go to a node regardless of devices: kube-scheduler's node filters of the default
profile, in its order and words (NodeUnschedulable, TaintToleration, NodeAffinity). One rule for simcluster's
scheduler and the what-if answers, so both refuse the same nodes.

- NodeUnschedulable: a cordoned node (`spec.unschedulable`) takes only pods that tolerate the taint
  `node.kubernetes.io/unschedulable:NoSchedule` (a DaemonSet's pods do), whether or not the node carries it
  yet (the node lifecycle controller adds it a moment after the cordon).
- TaintToleration: every NoSchedule and NoExecute taint of the node is tolerated (PreferNoSchedule only
  scores).
- NodeAffinity: `spec.nodeSelector` and the required node affinity match the node.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dra.selection import SelectorError, node_selector_matches
from dra.taints import BLOCKING_EFFECTS, NO_SCHEDULE, Taint, parse_taint, untolerated

UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"
UNSCHEDULABLE_TAINT = Taint(key=UNSCHEDULABLE_TAINT_KEY, value="", effect=NO_SCHEDULE)

UNSCHEDULABLE = "node(s) were unschedulable"
UNTOLERATED_TAINT = "node(s) had untolerated taint(s)"
AFFINITY_MISMATCH = "node(s) didn't match Pod's node affinity/selector"


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _tolerations(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [t for t in _spec(pod).get("tolerations") or () if isinstance(t, Mapping)]


def node_taints(node: Mapping[str, Any]) -> list[Taint]:
    return [parse_taint(t) for t in _spec(node).get("taints") or () if isinstance(t, Mapping)]


def unschedulable_refuses(pod: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """NodeUnschedulable: the node is cordoned and the pod does not tolerate the unschedulable taint."""
    return bool(_spec(node).get("unschedulable")) and bool(
        untolerated([UNSCHEDULABLE_TAINT], _tolerations(pod), effects=BLOCKING_EFFECTS)
    )


def untolerated_node_taints(pod: Mapping[str, Any], node: Mapping[str, Any]) -> list[Taint]:
    """TaintToleration: the node's NoSchedule/NoExecute taints the pod does not tolerate."""
    return untolerated(node_taints(node), _tolerations(pod), effects=BLOCKING_EFFECTS)


def affinity_refuses(pod: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """NodeAffinity: `spec.nodeSelector` or the required node affinity does not match the node. An invalid
    required affinity matches no node (raises SelectorError: the caller says why)."""
    spec = _spec(pod)
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {} if isinstance(meta, Mapping) else {}
    selector = spec.get("nodeSelector") or {}
    if isinstance(selector, Mapping) and any(labels.get(k) != v for k, v in selector.items()):
        return True
    affinity = spec.get("affinity") or {}
    node_affinity = affinity.get("nodeAffinity") or {} if isinstance(affinity, Mapping) else {}
    required = (
        node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(node_affinity, Mapping)
        else None
    )
    return bool(required) and not node_selector_matches(required, node)


def node_refusal(pod: Mapping[str, Any], node: Mapping[str, Any]) -> str | None:
    """The first of the node filters that refuses the pod, in kube-scheduler's words, or None.
    Raises SelectorError for a required node affinity no node can match."""
    if unschedulable_refuses(pod, node):
        return UNSCHEDULABLE
    if untolerated_node_taints(pod, node):
        return UNTOLERATED_TAINT
    if affinity_refuses(pod, node):
        return AFFINITY_MISMATCH
    return None


__all__ = [
    "AFFINITY_MISMATCH",
    "UNSCHEDULABLE",
    "UNSCHEDULABLE_TAINT",
    "UNSCHEDULABLE_TAINT_KEY",
    "UNTOLERATED_TAINT",
    "SelectorError",
    "affinity_refuses",
    "node_refusal",
    "node_taints",
    "unschedulable_refuses",
    "untolerated_node_taints",
]
