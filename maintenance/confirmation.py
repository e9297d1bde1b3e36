"""The blast radius an enforcement is confirmed against, and what the operator must type for it.

The phrase grows with what is at stake (the server checks it; the page only shows it):
- nothing evicted (NoSchedule, or NoExecute that evicts no pod): no typing, the checkbox is enough;
- pods evicted on one node: the number of pods;
- pods on several nodes, or a PodDisruptionBudget broken: "<N> pods on <M> nodes", or the node's
  name when they are all on one node;
- every device in the cluster: "every device in the cluster: <count>".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from maintenance.validation import EVERY_DEVICE_PHRASE

MAX_LISTED = 20


@dataclass(frozen=True)
class BlastRadius:
    effect: str
    preview_run: str
    devices: int
    whole_cluster: bool
    node_count: int
    nodes: list[str] = field(default_factory=list)
    drivers: list[str] = field(default_factory=list)
    claims: int = 0
    pods: int = 0  # evicted by this effect
    pod_nodes: list[str] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    budgets: list[str] = field(default_factory=list)  # PodDisruptionBudgets that break (ns/name)
    unschedulable: int = 0  # pending pods that could no longer be placed
    not_reallocatable: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def blast_radius(
    *, effect: str, preview_run: str, result: dict[str, Any], scope: dict[str, Any], whole_cluster: bool
) -> BlastRadius:
    """From the preview (a taint-impact what-if computed as NoExecute) and the selection's scope."""
    summary = result.get("summary") or {}
    evicting = effect == "NoExecute"
    evicted = [p for p in result.get("pods") or [] if p.get("evicted")] if evicting else []
    budgets = (
        [f"{b.get('namespace')}/{b.get('name')}" for b in result.get("budgets") or []] if evicting else []
    )
    return BlastRadius(
        effect=effect,
        preview_run=preview_run,
        devices=int(summary.get("devices", scope.get("device_count", 0))),
        whole_cluster=whole_cluster,
        node_count=int(scope.get("node_count", 0)),
        nodes=list(scope.get("nodes") or [])[:MAX_LISTED],
        drivers=list(scope.get("drivers") or []),
        claims=int(summary.get("claims", 0)),
        pods=len(evicted),
        pod_nodes=sorted({str(p.get("node")) for p in evicted if p.get("node")}),
        namespaces=sorted({str(p.get("namespace")) for p in evicted}),
        budgets=budgets,
        unschedulable=len(result.get("pending_unschedulable") or []),
        not_reallocatable=sum(1 for p in evicted if p.get("reallocatable") is False),
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _are(n: int) -> str:
    return "is" if n == 1 else "are"


@dataclass(frozen=True)
class Challenge:
    phrase: str  # "" = no typing needed
    why: str


def challenge(blast: BlastRadius) -> Challenge:
    if blast.whole_cluster:
        return Challenge(
            f"{EVERY_DEVICE_PHRASE}: {blast.devices}",
            f"this taints every device in the cluster ({blast.devices})",
        )
    if blast.effect != "NoExecute" or blast.pods == 0:
        return Challenge("", "no pod is evicted")
    nodes = blast.pod_nodes
    if blast.budgets or len(nodes) > 1:
        if len(nodes) == 1:
            return Challenge(nodes[0], f"{_plural(blast.pods, 'pod')} on node {nodes[0]} {_are(blast.pods)} evicted, "
                             f"breaking {_plural(len(blast.budgets), 'PodDisruptionBudget')}")  # fmt: skip
        phrase = f"{_plural(blast.pods, 'pod')} on {_plural(len(nodes), 'node')}"
        why = f"{phrase} {_are(blast.pods)} evicted" + (
            f", breaking {_plural(len(blast.budgets), 'PodDisruptionBudget')}" if blast.budgets else ""
        )
        return Challenge(phrase, why)
    return Challenge(str(blast.pods), f"{_plural(blast.pods, 'pod')} {_are(blast.pods)} evicted")


def normalized(text: str) -> str:
    return " ".join(text.split()).lower()


def typed_matches(typed: str, phrase: str) -> bool:
    return normalized(typed) == normalized(phrase)
