"""kube-scheduler's node filters in `dra.nodefit`: NodeUnschedulable, TaintToleration, NodeAffinity, in that
order and in its words."""

from __future__ import annotations

from typing import Any

import pytest

from dra.nodefit import AFFINITY_MISMATCH, UNSCHEDULABLE, UNTOLERATED_TAINT, node_refusal
from dra.selection import SelectorError


def node(
    *, unschedulable: bool = False, taints: list[dict[str, Any]] | None = None, **labels: str
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = taints
    return {"metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1", **labels}}, "spec": spec}


def pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}], **spec}}


CORDON_TOLERATION = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
CORDON_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
ZONE_A = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
        }
    }
}


@pytest.mark.parametrize(
    ("the_pod", "the_node", "refusal"),
    [
        pytest.param(pod(), node(), None, id="plain node"),
        pytest.param(pod(), node(unschedulable=True), UNSCHEDULABLE, id="cordoned, taint not yet added"),
        pytest.param(pod(), node(unschedulable=True, taints=[CORDON_TAINT]), UNSCHEDULABLE, id="cordoned"),
        pytest.param(
            pod(tolerations=[CORDON_TOLERATION]),
            node(unschedulable=True, taints=[CORDON_TAINT]),
            None,
            id="cordoned, tolerated (a DaemonSet pod)",
        ),  # fmt: skip
        pytest.param(
            pod(tolerations=[{"operator": "Exists"}]),
            node(unschedulable=True),
            None,
            id="tolerates everything",
        ),  # fmt: skip
        pytest.param(
            pod(),
            node(taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
            UNTOLERATED_TAINT,
            id="NoSchedule taint",
        ),  # fmt: skip
        pytest.param(
            pod(), node(taints=[{"key": "k", "effect": "NoExecute"}]), UNTOLERATED_TAINT, id="NoExecute"
        ),
        pytest.param(
            pod(),
            node(taints=[{"key": "k", "effect": "PreferNoSchedule"}]),
            None,
            id="PreferNoSchedule only scores",
        ),  # fmt: skip
        pytest.param(
            pod(tolerations=[{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}]),
            node(taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
            None,
            id="tolerated taint",
        ),  # fmt: skip
        pytest.param(
            pod(tolerations=[{"key": "k", "operator": "Equal", "value": "w"}]),
            node(taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
            UNTOLERATED_TAINT,
            id="toleration of another value",
        ),  # fmt: skip
        pytest.param(pod(nodeSelector={"zone": "a"}), node(zone="b"), AFFINITY_MISMATCH, id="nodeSelector"),
        pytest.param(pod(nodeSelector={"zone": "a"}), node(zone="a"), None, id="nodeSelector matches"),
        pytest.param(pod(affinity=ZONE_A), node(zone="b"), AFFINITY_MISMATCH, id="required affinity"),
        pytest.param(pod(affinity=ZONE_A), node(zone="a"), None, id="required affinity matches"),
        pytest.param(
            pod(nodeSelector={"zone": "b"}),
            node(unschedulable=True, zone="a"),
            UNSCHEDULABLE,
            id="NodeUnschedulable comes first",
        ),  # fmt: skip
        pytest.param(
            pod(nodeSelector={"zone": "b"}),
            node(taints=[{"key": "k", "effect": "NoSchedule"}], zone="a"),
            UNTOLERATED_TAINT,
            id="TaintToleration before NodeAffinity",
        ),  # fmt: skip
    ],
)
def test_node_refusal(the_pod: dict[str, Any], the_node: dict[str, Any], refusal: str | None) -> None:
    assert node_refusal(the_pod, the_node) == refusal


def test_an_invalid_required_affinity_is_an_error_not_a_match() -> None:
    bad = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "Gt", "values": ["x"]}]}]}}}  # fmt: skip
    with pytest.raises(SelectorError):
        node_refusal(pod(affinity=bad), node(zone="a"))
