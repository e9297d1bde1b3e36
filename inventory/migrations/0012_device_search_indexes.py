"""Indexes for a substring search of device names, pools and nodes (the Devices list's `q`, issue 12).

PostgreSQL: trigram GIN indexes (pg_trgm) serve `LIKE '%…%'` on each column; where the extension cannot be
created (no privilege) the search stays a sequential scan and nothing fails. SQLite: one covering index in
the list's order (driver, pool, name) that also holds node_name, so a count walks the index instead of
rows that carry their JSON, and a page stops after its rows.
"""

from django.db import migrations

TRIGRAM_COLUMNS = ["name", "pool", "node_name"]


def create(apps, schema_editor):  # type: ignore[no-untyped-def]
    connection = schema_editor.connection
    if connection.vendor == "sqlite":
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS device_search ON inventory_device (driver, pool, name, node_name)"
        )
        return
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
        present = cursor.fetchone() is not None
        if not present:
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")
            if cursor.fetchone() is None:
                return
            cursor.execute("SAVEPOINT device_search_trgm")
            try:
                cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            except Exception:  # no privilege: the search works without the index
                cursor.execute("ROLLBACK TO SAVEPOINT device_search_trgm")
                return
            cursor.execute("RELEASE SAVEPOINT device_search_trgm")
    for column in TRIGRAM_COLUMNS:
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS device_{column}_trgm ON inventory_device USING gin ({column} gin_trgm_ops)"
        )


def drop(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute("DROP INDEX IF EXISTS device_search")
    elif schema_editor.connection.vendor == "postgresql":
        for column in TRIGRAM_COLUMNS:
            schema_editor.execute(f"DROP INDEX IF EXISTS device_{column}_trgm")


class Migration(migrations.Migration):
    dependencies = [("inventory", "0011_read_counters")]
    operations = [migrations.RunPython(create, drop)]
