"""A maintenance page shows each rule's conditions as the cluster reports them: `type=status reason`, and
`: message` only when there is a message (the eviction controller's NotStarted carries none)."""

from __future__ import annotations

from typing import Any

import pytest

from maintenance.planning import DeviceRef
from tests.e2e.browser_helpers import log_in, user
from tests.inventory import factories as f
from tests.maintenance.support import GPU, create

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def condition(reason: str, message: str) -> dict[str, str]:
    return {"type": "EvictionInProgress", "status": "False", "reason": reason, "message": message,
            "lastTransitionTime": "2026-11-29T11:00:00Z"}  # fmt: skip


@pytest.fixture
def maintenance_with_conditions(asgi_server: str) -> tuple[str, str, str]:
    """(maintenance id, its first rule, its second): set up before the browser starts (its loop owns the thread)."""
    for node in ("node-0", "node-1"):
        f.write(
            (
                "resourceslices",
                f.resource_slice(f"{node}-gpu", pool=node, node=node, devices=[f.gpu("gpu-0")]),
            )
        )
    oscar = user("oscar", "operator")
    maintenance = create(
        oscar, devices=[DeviceRef(GPU, "node-0", "gpu-0"), DeviceRef(GPU, "node-1", "gpu-0")], filters={}
    )
    first, second = (r["name"] for r in maintenance.rules)
    for name, reason, message in ((first, "NotStarted", ""), (second, "Completed", "0 pods evicted")):
        rule = f.taint_rule(name, selector={"device": "gpu-0"}, effect="NoExecute")
        rule["status"] = {"conditions": [condition(reason, message)]}
        f.write(("devicetaintrules", rule))
    return maintenance.id, first, second


def test_it_writes_no_dangling_colon_after_a_condition_without_message(
    maintenance_with_conditions: tuple[str, str, str], asgi_server: str, browser: Any
) -> None:
    maintenance_id, first, second = maintenance_with_conditions
    page = browser.new_page()
    log_in(page, asgi_server, "oscar", start=f"/maintenance/{maintenance_id}/")

    rules = page.locator("#progress-rules")
    assert rules.locator("p", has_text=first).inner_text().endswith("EvictionInProgress=False NotStarted")
    assert (
        rules.locator("p", has_text=second)
        .inner_text()
        .endswith("EvictionInProgress=False Completed: 0 pods evicted")
    )
