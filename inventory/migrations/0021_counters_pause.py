"""SQLite's device counter triggers (migration `read_counters`) skip their work while a DeviceCountPause
row exists: the mirror writes a page of device rows and recounts once (`inventory.mirror.derive.counts`)
instead of two upserts per row. PostgreSQL's statement triggers are unchanged."""

import importlib

from django.db import migrations, models

read_counters = importlib.import_module("inventory.migrations.0011_read_counters")
NOT_PAUSED = "NOT EXISTS (SELECT 1 FROM inventory_devicecountpause)"


def _triggers(paused_check: bool) -> list[str]:
    rc = read_counters
    when = f"WHEN {NOT_PAUSED} " if paused_check else ""
    both = f"{NOT_PAUSED} AND " if paused_check else ""
    changed = " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in rc.GROUP)
    node_changed = (
        "OLD.node_name IS NOT NEW.node_name OR OLD.driver IS NOT NEW.driver OR OLD.tainted IS NOT NEW.tainted "
        "OR (OLD.allocation_state = 'free') IS NOT (NEW.allocation_state = 'free')"
    )
    return [
        f"CREATE TRIGGER device_counts_insert AFTER INSERT ON inventory_device {when}BEGIN "
        f"{rc._sqlite_add('NEW')} {rc._sqlite_node_add('NEW')} END",
        f"CREATE TRIGGER device_counts_delete AFTER DELETE ON inventory_device {when}BEGIN "
        f"{rc._sqlite_remove('OLD')} {rc._sqlite_node_remove('OLD')} END",
        f"CREATE TRIGGER device_counts_update AFTER UPDATE OF {rc.COLS} ON inventory_device "
        f"WHEN {both}({changed}) BEGIN {rc._sqlite_remove('OLD')} {rc._sqlite_add('NEW')} END",
        f"CREATE TRIGGER device_node_counts_update AFTER UPDATE OF {', '.join(rc.NODE_COLUMNS)} "
        f"ON inventory_device WHEN {both}({node_changed}) "
        f"BEGIN {rc._sqlite_node_remove('OLD')} {rc._sqlite_node_add('NEW')} END",
    ]


def _replace(schema_editor, paused_check: bool) -> None:  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "sqlite":
        return
    for sql in read_counters.SQLITE_DROP[:4]:  # the triggers, not the counters' index
        schema_editor.execute(sql)
    for sql in _triggers(paused_check):
        schema_editor.execute(sql)


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    _replace(schema_editor, True)


def backwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    _replace(schema_editor, False)


class Migration(migrations.Migration):
    dependencies = [("inventory", "0020_device_slice_created")]

    operations = [
        migrations.CreateModel(
            name="DeviceCountPause",
            fields=[("id", models.IntegerField(primary_key=True, serialize=False))],
        ),
        migrations.RunPython(forwards, backwards),
    ]
