"""PodDisruptionBudget arithmetic (upstream's disruption controller), shared by simcluster and the drain."""

from __future__ import annotations

import pytest

from dra.disruption import (
    BudgetError,
    describe_block,
    disruptions_allowed,
    expected_and_desired,
    is_healthy,
    scaled,
)


def test_scaled_rounds_percentages_as_intstr_does() -> None:
    assert scaled(3, 10, round_up=True) == 3
    assert scaled("25%", 10, round_up=True) == 3
    assert scaled("25%", 10, round_up=False) == 2
    with pytest.raises(BudgetError):
        scaled("ten", 10, round_up=True)


def test_expected_and_desired_follow_the_spec() -> None:
    def scale() -> int:
        return 12

    assert expected_and_desired({"minAvailable": 10}, selected=11, expected_scale=scale) == (11, 10)
    assert expected_and_desired({"minAvailable": "50%"}, selected=11, expected_scale=scale) == (12, 6)
    assert expected_and_desired({"maxUnavailable": 2}, selected=11, expected_scale=scale) == (12, 10)
    assert expected_and_desired({"maxUnavailable": "10%"}, selected=11, expected_scale=scale) == (12, 10)
    assert expected_and_desired({"maxUnavailable": 20}, selected=11, expected_scale=scale) == (12, 0)
    assert expected_and_desired({}, selected=11, expected_scale=scale) == (0, 0)


def test_disruptions_allowed_is_never_negative_and_zero_without_expected_pods() -> None:
    assert disruptions_allowed(healthy=12, desired=10, expected=12) == 2
    assert disruptions_allowed(healthy=9, desired=10, expected=12) == 0
    assert disruptions_allowed(healthy=3, desired=0, expected=0) == 0


def test_healthy_pods_are_ready_not_deleting_and_not_disrupted() -> None:
    ready = {"metadata": {"name": "a"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    assert is_healthy(ready)
    assert not is_healthy(ready, disrupted={"a": "2026-01-01T00:00:00Z"})
    assert not is_healthy({**ready, "metadata": {"name": "a", "deletionTimestamp": "x"}})
    assert not is_healthy({"metadata": {"name": "b"}, "status": {"phase": "Running"}})


def test_the_block_reads_as_the_operator_is_told() -> None:
    assert describe_block({"minAvailable": 10}, {"currentHealthy": 10, "disruptionsAllowed": 0}) == (
        "minAvailable 10, 10 healthy"
    )
