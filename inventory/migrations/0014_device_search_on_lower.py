"""The substring indexes of 0012 move from the bare columns to `lower(column)` (PostgreSQL only).

A trigram GIN index on a column also serves `=` and `IN` on it, and the planner chose it for the mirror's
`pool IN (…)` lookups (a hundred pools a statement): every pool name shares the trigrams of "node-", so the
index scan read every entry, about a second a statement at 10,000 devices, where the (driver, pool, name)
btree takes a millisecond. An index on the expression serves only queries written on the expression, which is
what the search writes (`inventory.selectors.common.device_text_contains`). Where pg_trgm is not installed
nothing is created, as in 0012.
"""

from django.db import migrations

TRIGRAM_COLUMNS = ["name", "pool", "node_name"]


def _has_trigrams(schema_editor) -> bool:  # type: ignore[no-untyped-def]
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
        return cursor.fetchone() is not None


def on_lower(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    for column in TRIGRAM_COLUMNS:
        schema_editor.execute(f"DROP INDEX IF EXISTS device_{column}_trgm")
    if not _has_trigrams(schema_editor):
        return
    for column in TRIGRAM_COLUMNS:
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS device_{column}_lower_trgm "
            f"ON inventory_device USING gin (lower({column}) gin_trgm_ops)"
        )


def on_columns(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    for column in TRIGRAM_COLUMNS:
        schema_editor.execute(f"DROP INDEX IF EXISTS device_{column}_lower_trgm")
    if not _has_trigrams(schema_editor):
        return
    for column in TRIGRAM_COLUMNS:
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS device_{column}_trgm ON inventory_device USING gin ({column} gin_trgm_ops)"
        )


class Migration(migrations.Migration):
    dependencies = [("inventory", "0013_device_attribute_lines")]
    operations = [migrations.RunPython(on_lower, on_columns)]
