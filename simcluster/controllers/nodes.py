"""Node checks the scheduler makes before it tries to allocate devices on a node."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simcluster.controllers.common import meta, name_of


def node_selector_matches(selector: Mapping[str, Any] | None, node: Mapping[str, Any]) -> bool:
    """core/v1 NodeSelector: terms are ORed, requirements in a term ANDed; nil matches every node."""
    if not selector:
        return True
    labels = meta(node).get("labels") or {}
    fields = {"metadata.name": name_of(node)}
    for term in selector.get("nodeSelectorTerms") or []:
        expressions = [(r, labels) for r in term.get("matchExpressions") or []]
        expressions += [(r, fields) for r in term.get("matchFields") or []]
        if expressions and all(_requirement(r, values) for r, values in expressions):
            return True
    return False


def _requirement(requirement: Mapping[str, Any], values: Mapping[str, Any]) -> bool:
    key, operator = str(requirement.get("key", "")), requirement.get("operator")
    wanted = [str(v) for v in requirement.get("values") or []]
    present = key in values
    actual = str(values.get(key, ""))
    if operator == "In":
        return present and actual in wanted
    if operator == "NotIn":
        return not present or actual not in wanted
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and wanted:
        try:
            left, right = int(actual), int(wanted[0])
        except ValueError:
            return False
        return left > right if operator == "Gt" else left < right
    return False


def tolerates_node_taints(pod: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(_tolerates(t, taint) for t in tolerations):
            return False
    return True


def _tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration["key"] == taint.get("key")
    return bool(
        toleration.get("key") == taint.get("key")
        and (toleration.get("value") or "") == (taint.get("value") or "")
    )


def node_ready(node: Mapping[str, Any]) -> bool:
    if (node.get("spec") or {}).get("unschedulable"):
        return False
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = [c for c in conditions if c.get("type") == "Ready"]
    return not ready or ready[0].get("status") == "True"
