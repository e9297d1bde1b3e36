"""Node checks the scheduler makes before it tries to allocate devices on a node.

Node selectors and taint toleration are `dra.selection` and `dra.taints`, the rules every room shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dra.taints import BLOCKING_EFFECTS, parse_taint, untolerated


def tolerates_node_taints(pod: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """The pod tolerates every NoSchedule and NoExecute taint of the node (PreferNoSchedule only scores)."""
    taints = [parse_taint(t) for t in (node.get("spec") or {}).get("taints") or [] if isinstance(t, Mapping)]
    tolerations = [t for t in (pod.get("spec") or {}).get("tolerations") or [] if isinstance(t, Mapping)]
    return not untolerated(taints, tolerations, effects=BLOCKING_EFFECTS)


def node_ready(node: Mapping[str, Any]) -> bool:
    if (node.get("spec") or {}).get("unschedulable"):
        return False
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = [c for c in conditions if c.get("type") == "Ready"]
    return not ready or ready[0].get("status") == "True"
