"""PostgreSQL gathers no planner statistics for the mirror's document columns (PostgreSQL only).

The mirror ANALYZEs its tables after a (re-)list (`inventory.mirror.writer`), and most of that time went
to sampling the JSON documents and long texts, which no query compares as a whole: the objects' `raw`, and a
device's attributes, capacity, taints and allocations (the attribute filter and search read
`DeviceAttribute` lines and the indexed name columns; a LIKE on `attribute_index` gets the default
estimate either way). With their statistics target at 0, ANALYZE skips them: 0.46 → 0.17 s for 10,000
devices, 0.19 → 0.11 s for their objects.
"""

from django.db import migrations

DOCUMENT_COLUMNS = {
    "inventory_kubeobject": ["raw"],
    "inventory_device": [
        "attributes",
        "attributes_flat",
        "attribute_index",
        "capacity",
        "consumes_counters",
        "binding_conditions",
        "slice_taints",
        "taints",
        "allocations",
        "statuses",
        "health_reports",
    ],
}


def _set(schema_editor, target: int) -> None:  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, columns in DOCUMENT_COLUMNS.items():
        alters = ", ".join(f"ALTER COLUMN {column} SET STATISTICS {target}" for column in columns)
        schema_editor.execute(f"ALTER TABLE {table} {alters}")


def without_statistics(apps, schema_editor):  # type: ignore[no-untyped-def]
    _set(schema_editor, 0)


def with_statistics(apps, schema_editor):  # type: ignore[no-untyped-def]
    _set(schema_editor, -1)  # the default target


class Migration(migrations.Migration):
    dependencies = [("inventory", "0014_device_search_on_lower")]
    operations = [migrations.RunPython(without_statistics, with_statistics)]
