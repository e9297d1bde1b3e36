"""Migration 0019 makes the attribute lines' table again, keyed by (device, line): the lines a database
held survive it, both ways, and a line a device held twice is kept once (with `own` if either had it)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("inventory", "0018_no_statistics_for_texts")
AFTER = ("inventory", "0019_device_attribute_composite_key")


def _lines(with_id: bool = False) -> list[tuple[Any, ...]]:
    columns = "id, device_id, line, own" if with_id else "device_id, line, own"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns} FROM inventory_deviceattribute ORDER BY device_id, line")
        return [tuple(row) for row in cursor.fetchall()]


def test_the_attribute_lines_survive_the_new_key_both_ways() -> None:
    call_command("migrate", *BEFORE, verbosity=0)
    try:
        old = MigrationExecutor(connection).loader.project_state(BEFORE).apps
        device_model = old.get_model("inventory", "Device")
        line_model = old.get_model("inventory", "DeviceAttribute")
        a = device_model.objects.create(
            slice_uid="u1", slice_name="s1", driver="gpu.example.com", pool="p", name="gpu-0"
        )
        b = device_model.objects.create(
            slice_uid="u1", slice_name="s1", driver="gpu.example.com", pool="p", name="gpu-1"
        )
        line_model.objects.create(device_id=a.pk, line="gpu.example.com/model=H100", own=False)
        line_model.objects.create(device_id=a.pk, line="gpu.example.com/model=H100", own=True)  # twice
        line_model.objects.create(device_id=a.pk, line="x.example.com/rack=r1", own=False)
        line_model.objects.create(device_id=b.pk, line="gpu.example.com/model=H100", own=True)

        call_command("migrate", *AFTER, verbosity=0)
        kept = [
            (a.pk, "gpu.example.com/model=H100", True),
            (a.pk, "x.example.com/rack=r1", False),
            (b.pk, "gpu.example.com/model=H100", True),
        ]
        assert _lines() == kept

        call_command("migrate", *BEFORE, verbosity=0)
        assert [row[1:] for row in _lines(with_id=True)] == kept
    finally:
        call_command("migrate", verbosity=0)
