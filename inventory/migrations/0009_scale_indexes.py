"""Covering indexes for the reads that look at every device, on SQLite (the embedded default).

The Overview's totals and the classes' counts group a few narrow columns, and the attribute filter matches a
substring of `attribute_index`: with these indexes SQLite walks an index instead of rows that carry their JSON
(5 ms instead of 22 ms for a count at 10,000 devices). Not on PostgreSQL: a B-tree entry is limited to about
2.7 kB, which a device's attribute text or class list may pass, and its parallel sequential scans serve there.
"""

from django.db import migrations

INDEXES = {
    "device_summary": "class_index, allocation_state, taint_none, taint_no_schedule, taint_no_execute, "
    "blocked, tainted, pool_complete",
    "device_attribute_index": "attribute_index",
}


def create(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "sqlite":
        return
    for name, columns in INDEXES.items():
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON inventory_device ({columns})")


def drop(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "sqlite":
        return
    for name in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("inventory", "0008_device_name_index")]
    operations = [migrations.RunPython(create, drop)]
