"""What changed since a preview, worded for the counts at hand: "1 selected device was released", never
"1 selected device(s) were released" or "now select 1 devices"."""

from __future__ import annotations

from typing import Any

import pytest

from maintenance.models import AuditEntry
from maintenance.preview import basis_changes
from maintenance.services import maintenance_preview_start
from tests.inventory import factories as f
from tests.maintenance.support import create


def _basis(count: int, allocated: dict[str, str], claims: dict[str, str] | None = None) -> dict[str, object]:
    return {"draft": "d", "devices": {"count": count}, "allocated": allocated, "claims": claims or {}}


def test_one_change_of_each_kind_reads_in_the_singular() -> None:
    before = _basis(2, {"gpu/a/gpu-0": "c1", "gpu/a/gpu-1": "c2"}, {"u1": "ns/c1@1"})
    now = _basis(1, {"gpu/a/gpu-1": "c3", "gpu/a/gpu-2": "c4"}, {"u1": "ns/c1@2"})
    assert basis_changes(before, now) == [
        "the rules now select 1 device (the preview saw 2)",
        "1 selected device was allocated since: gpu/a/gpu-2",
        "1 selected device was released since: gpu/a/gpu-0",
        "1 selected device now serves another claim: gpu/a/gpu-1",
        "1 claim on these devices changed (reservations or tolerations): ns/c1",
    ]


def test_several_changes_read_in_the_plural() -> None:
    before = _basis(3, {"gpu/a/gpu-0": "c1", "gpu/a/gpu-1": "c2"})
    now = _basis(2, {})
    assert basis_changes(before, now) == [
        "the rules now select 2 devices (the preview saw 3)",
        "2 selected devices were released since: gpu/a/gpu-0, gpu/a/gpu-1",
    ]


@pytest.mark.django_db
def test_the_preview_started_entry_counts_one_claim_in_the_singular(operator: Any) -> None:
    """The timeline read "preview started over 2 devices (1 allocated, 1 claims)"."""
    f.write(
        ("resourceslices", f.resource_slice("node-0-gpu", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")])),
        ("resourceclaims", f.claim("train", results=[f.result("gpu-0")])),
    )
    maintenance = create(operator)
    maintenance_preview_start(maintenance=maintenance, user=operator)
    started = AuditEntry.objects.get(maintenance_id=maintenance.id, action="preview")
    assert started.message == "preview started over 2 devices (1 allocated, 1 claim)"
