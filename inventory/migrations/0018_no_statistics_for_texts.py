"""No planner statistics for the device texts no query filters on (PostgreSQL only; see migration 0015).

ANALYZE samples 30,000 rows of a table, so at 30,000 devices and above it reads every device, and it spent a
third of its 1.2 s on these: the classes list (the class filter reads `class_index`), the blocked and health
sentences (pages filter on `blocked` and `health`), the slice's name (lookups go by `slice_uid`).
"""

from django.db import migrations

TEXT_COLUMNS = {"inventory_device": ["classes", "blocked_reason", "health_message", "slice_name"]}


def _set(schema_editor, target: int) -> None:  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, columns in TEXT_COLUMNS.items():
        alters = ", ".join(f"ALTER COLUMN {column} SET STATISTICS {target}" for column in columns)
        schema_editor.execute(f"ALTER TABLE {table} {alters}")


def without_statistics(apps, schema_editor):  # type: ignore[no-untyped-def]
    _set(schema_editor, 0)


def with_statistics(apps, schema_editor):  # type: ignore[no-untyped-def]
    _set(schema_editor, -1)


class Migration(migrations.Migration):
    dependencies = [("inventory", "0017_device_slice_uid_index")]
    operations = [migrations.RunPython(without_statistics, with_statistics)]
