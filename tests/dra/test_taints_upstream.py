"""Upstream's toleration table (dynamic-resource-allocation ``resourceclaim/devicetoleration_test.go``,
TestTolerationToleratesTaint) against ``dra.taints.tolerates``; ids are upstream's descriptions."""

from __future__ import annotations

import pytest

from dra.taints import tolerates

NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "NoExecute"
CASES = {
    "toleration and taint have the same key and effect, and operator is Exists, and taint has no value, "
    "expect tolerated": (
        {"key": "foo", "operator": "Exists", "effect": NO_SCHEDULE},
        {"key": "foo", "effect": NO_SCHEDULE},
        True,
    ),
    "toleration and taint have the same key and effect, and operator is Exists, and taint has some value, "
    "expect tolerated": (
        {"key": "foo", "operator": "Exists", "effect": NO_SCHEDULE},
        {"key": "foo", "value": "bar", "effect": NO_SCHEDULE},
        True,
    ),
    "toleration and taint have the same effect, toleration has empty key and operator is Exists, means match "
    "all taints, expect tolerated": (
        {"key": "", "operator": "Exists", "effect": NO_SCHEDULE},
        {"key": "foo", "value": "bar", "effect": NO_SCHEDULE},
        True,
    ),
    "toleration and taint have the same key, effect and value, and operator is Equal, expect tolerated": (
        {"key": "foo", "operator": "Equal", "value": "bar", "effect": NO_SCHEDULE},
        {"key": "foo", "value": "bar", "effect": NO_SCHEDULE},
        True,
    ),
    "toleration and taint have the same key and effect, but different values, and operator is Equal, "
    "expect not tolerated": (
        {"key": "foo", "operator": "Equal", "value": "value1", "effect": NO_SCHEDULE},
        {"key": "foo", "value": "value2", "effect": NO_SCHEDULE},
        False,
    ),
    "toleration and taint have the same key and value, but different effects, and operator is Equal, "
    "expect not tolerated": (
        {"key": "foo", "operator": "Equal", "value": "bar", "effect": NO_SCHEDULE},
        {"key": "foo", "value": "bar", "effect": NO_EXECUTE},
        False,
    ),
}


@pytest.mark.parametrize(("toleration", "taint", "tolerated"), CASES.values(), ids=list(CASES))
def test_it_tolerates_as_upstream(toleration: dict, taint: dict, tolerated: bool) -> None:
    assert tolerates(toleration, taint) is tolerated
