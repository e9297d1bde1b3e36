"""PodDisruptionBudget arithmetic, as upstream's disruption controller computes it
(pkg/controller/disruption/disruption.go, `getExpectedPodCount` and `updatePdbStatus`).

* `scaled` — intstr.GetScaledValueFromIntOrPercent: an int as is, "N%" of `total` rounded up or down.
* `expected_and_desired` — (expectedPods, desiredHealthy) from the spec: `maxUnavailable` (int or %)
  needs the controllers' expected scale, desiredHealthy = expected - maxUnavailable (rounded up, never
  below 0); `minAvailable` as an int is compared with the selected pods (expected = their number), as a
  percentage with the expected scale (rounded up); neither: (0, 0).
* `disruptions_allowed` — currentHealthy - desiredHealthy, never negative, 0 with no expected pods.
* `is_healthy` — a selected pod counts when it is Ready, not being deleted and not recorded in the
  budget's `disruptedPods` by an eviction the controller has not yet seen through.
* `describe_block` — why a budget refuses an eviction, in the words dradash shows:
  "minAvailable 10, 10 healthy".

simcluster's disruption controller and dradash's drain (its preview and its progress) use these, so the
number the simulated API server enforces and the number dradash predicts are one computation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any


class BudgetError(ValueError):
    """A spec the controller cannot compute (an invalid IntOrString, or no scale for a percentage)."""


def scaled(value: Any, total: int, *, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value)
    if not text.endswith("%") or not text[:-1].isdigit():
        raise BudgetError(f"invalid value for IntOrString: invalid value {text!r}")
    fraction = int(text[:-1]) * total / 100
    return math.ceil(fraction) if round_up else math.floor(fraction)


def needs_scale(spec: Mapping[str, Any]) -> bool:
    """Whether the budget needs its pods' controllers' expected scale (maxUnavailable, or a % minAvailable)."""
    if spec.get("maxUnavailable") is not None:
        return True
    min_available = spec.get("minAvailable")
    return min_available is not None and not (
        isinstance(min_available, int) and not isinstance(min_available, bool)
    )


def expected_and_desired(
    spec: Mapping[str, Any], *, selected: int, expected_scale: Callable[[], int]
) -> tuple[int, int]:
    """(expectedPods, desiredHealthy). `expected_scale` is asked only when the spec needs it (it may
    raise BudgetError when a pod has no controller with a scale)."""
    min_available = spec.get("minAvailable")
    max_unavailable = spec.get("maxUnavailable")
    if max_unavailable is not None:
        expected = expected_scale()
        return expected, max(0, expected - scaled(max_unavailable, expected, round_up=True))
    if min_available is not None:
        if isinstance(min_available, int) and not isinstance(min_available, bool):
            return selected, min_available
        expected = expected_scale()
        return expected, scaled(min_available, expected, round_up=True)
    return 0, 0


def disruptions_allowed(*, healthy: int, desired: int, expected: int) -> int:
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        return 0
    return allowed


def is_ready(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def is_healthy(pod: Mapping[str, Any], *, disrupted: Mapping[str, Any] | None = None) -> bool:
    metadata = pod.get("metadata") or {}
    if metadata.get("deletionTimestamp"):
        return False
    if disrupted and metadata.get("name") in disrupted:
        return False
    return is_ready(pod)


def describe_spec(spec: Mapping[str, Any]) -> str:
    """ "minAvailable 10" / "maxUnavailable 25%" / "no minimum"."""
    if spec.get("maxUnavailable") is not None:
        return f"maxUnavailable {spec['maxUnavailable']}"
    if spec.get("minAvailable") is not None:
        return f"minAvailable {spec['minAvailable']}"
    return "no minimum"


def describe_block(spec: Mapping[str, Any], status: Mapping[str, Any]) -> str:
    """ "minAvailable 10, 10 healthy" (and the disruptions allowed when the status says more than 0)."""
    healthy = status.get("currentHealthy")
    text = describe_spec(spec)
    if isinstance(healthy, int):
        text += f", {healthy} healthy"
    allowed = status.get("disruptionsAllowed")
    if isinstance(allowed, int) and allowed > 0:
        text += f", {allowed} disruptions allowed"
    return text


__all__ = [
    "BudgetError",
    "describe_block",
    "describe_spec",
    "disruptions_allowed",
    "expected_and_desired",
    "is_healthy",
    "is_ready",
    "needs_scale",
    "scaled",
]
