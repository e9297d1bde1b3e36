"""Counters of devices kept by the database itself (DeviceCount, NodeDeviceCount), so the Overview, the classes
and the Nodes list read a few rows instead of every device on every live change (issue 12).

Triggers keep them equal to inventory_device in the statement that changes it, whoever writes: the mirror's
bulk upserts and updates, a deletion, a test's factory. SQLite: row triggers (its updates are in place),
the UPDATE ones only when a counted column changed. PostgreSQL: statement triggers over the transition
tables, one aggregate per statement (row triggers would update the same counter row thousands of times in
one transaction, each a new row version). The rows that exist when it runs are counted once.
"""

from django.db import migrations, models

GROUP = [
    "driver",
    "class_index",
    "allocation_state",
    "tainted",
    "taint_none",
    "taint_no_schedule",
    "taint_no_execute",
    "blocked",
    "pool_complete",
]
COLS = ", ".join(GROUP)
NOT_FREE = "CASE WHEN allocation_state <> 'free' THEN 1 ELSE 0 END"
TAINTED = "CASE WHEN tainted THEN 1 ELSE 0 END"

BACKFILL = [
    f"INSERT INTO inventory_devicecount ({COLS}, n) SELECT {COLS}, COUNT(*) FROM inventory_device GROUP BY {COLS}",
    "INSERT INTO inventory_nodedevicecount (node_name, driver, total, allocated, tainted) "
    f"SELECT node_name, driver, COUNT(*), SUM({NOT_FREE}), SUM({TAINTED}) FROM inventory_device "
    "GROUP BY node_name, driver",
]


def _match(row: str, columns: list[str]) -> str:
    return " AND ".join(f"{c} = {row}.{c}" for c in columns)


def _sqlite_add(row: str) -> str:
    values = ", ".join(f"{row}.{c}" for c in GROUP)
    return (
        f"INSERT INTO inventory_devicecount ({COLS}, n) VALUES ({values}, 1) "
        f"ON CONFLICT ({COLS}) DO UPDATE SET n = n + 1;"
    )


def _sqlite_remove(row: str) -> str:
    where = _match(row, GROUP)
    return (
        f"UPDATE inventory_devicecount SET n = n - 1 WHERE {where}; "
        f"DELETE FROM inventory_devicecount WHERE {where} AND n = 0;"
    )


def _sqlite_node_add(row: str) -> str:
    return (
        "INSERT INTO inventory_nodedevicecount (node_name, driver, total, allocated, tainted) "
        f"VALUES ({row}.node_name, {row}.driver, 1, {row}.allocation_state <> 'free', {row}.tainted) "
        "ON CONFLICT (node_name, driver) DO UPDATE SET total = total + 1, "
        "allocated = allocated + excluded.allocated, tainted = tainted + excluded.tainted;"
    )


def _sqlite_node_remove(row: str) -> str:
    where = _match(row, ["node_name", "driver"])
    return (
        "UPDATE inventory_nodedevicecount SET total = total - 1, "
        f"allocated = allocated - ({row}.allocation_state <> 'free'), tainted = tainted - {row}.tainted "
        f"WHERE {where}; DELETE FROM inventory_nodedevicecount WHERE {where} AND total = 0;"
    )


NODE_COLUMNS = ["node_name", "driver", "allocation_state", "tainted"]
SQLITE = [
    f"CREATE UNIQUE INDEX devicecount_key ON inventory_devicecount ({COLS})",
    "CREATE TRIGGER device_counts_insert AFTER INSERT ON inventory_device BEGIN "
    f"{_sqlite_add('NEW')} {_sqlite_node_add('NEW')} END",
    "CREATE TRIGGER device_counts_delete AFTER DELETE ON inventory_device BEGIN "
    f"{_sqlite_remove('OLD')} {_sqlite_node_remove('OLD')} END",
    f"CREATE TRIGGER device_counts_update AFTER UPDATE OF {COLS} ON inventory_device WHEN "
    + " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in GROUP)
    + f" BEGIN {_sqlite_remove('OLD')} {_sqlite_add('NEW')} END",
    f"CREATE TRIGGER device_node_counts_update AFTER UPDATE OF {', '.join(NODE_COLUMNS)} ON inventory_device "
    "WHEN OLD.node_name IS NOT NEW.node_name OR OLD.driver IS NOT NEW.driver OR OLD.tainted IS NOT NEW.tainted "
    "OR (OLD.allocation_state = 'free') IS NOT (NEW.allocation_state = 'free') "
    f"BEGIN {_sqlite_node_remove('OLD')} {_sqlite_node_add('NEW')} END",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS device_counts_insert",
    "DROP TRIGGER IF EXISTS device_counts_delete",
    "DROP TRIGGER IF EXISTS device_counts_update",
    "DROP TRIGGER IF EXISTS device_node_counts_update",
    "DROP INDEX IF EXISTS devicecount_key",
]

PG_KEY = ", ".join("md5(class_index)" if c == "class_index" else c for c in GROUP)
PG_NODE_COLUMNS = ", ".join(GROUP + ["node_name"])


def _pg_body(rows: str) -> str:
    return f"""
BEGIN
  INSERT INTO inventory_devicecount AS c ({COLS}, n)
  SELECT {COLS}, SUM(d) FROM ({rows}) AS x GROUP BY {COLS} HAVING SUM(d) <> 0
  ON CONFLICT ({PG_KEY}) DO UPDATE SET n = c.n + excluded.n;
  DELETE FROM inventory_devicecount WHERE n = 0;
  INSERT INTO inventory_nodedevicecount AS c (node_name, driver, total, allocated, tainted)
  SELECT node_name, driver, SUM(d), SUM({NOT_FREE} * d), SUM({TAINTED} * d) FROM ({rows}) AS x
  GROUP BY node_name, driver HAVING SUM(d) <> 0 OR SUM({NOT_FREE} * d) <> 0 OR SUM({TAINTED} * d) <> 0
  ON CONFLICT (node_name, driver) DO UPDATE SET total = c.total + excluded.total,
    allocated = c.allocated + excluded.allocated, tainted = c.tainted + excluded.tainted;
  DELETE FROM inventory_nodedevicecount AS c USING (SELECT DISTINCT node_name, driver FROM ({rows}) AS x) AS k
  WHERE c.node_name = k.node_name AND c.driver = k.driver AND c.total = 0;
  RETURN NULL;
END"""


PG_ROWS = {
    "insert": f"SELECT {PG_NODE_COLUMNS}, 1 AS d FROM new_rows",
    "delete": f"SELECT {PG_NODE_COLUMNS}, -1 AS d FROM old_rows",
    "update": f"SELECT {PG_NODE_COLUMNS}, 1 AS d FROM new_rows "
    f"UNION ALL SELECT {PG_NODE_COLUMNS}, -1 AS d FROM old_rows",
}
PG_REFERENCING = {
    "insert": "NEW TABLE AS new_rows",
    "delete": "OLD TABLE AS old_rows",
    "update": "OLD TABLE AS old_rows NEW TABLE AS new_rows",
}
POSTGRESQL = [
    f"CREATE UNIQUE INDEX devicecount_key ON inventory_devicecount ({PG_KEY})",
    *(
        sql
        for op, rows in PG_ROWS.items()
        for sql in (
            f"CREATE FUNCTION inventory_device_counts_{op}() RETURNS trigger LANGUAGE plpgsql AS $${_pg_body(rows)}$$",
            f"CREATE TRIGGER device_counts_{op} AFTER {op.upper()} ON inventory_device "
            f"REFERENCING {PG_REFERENCING[op]} FOR EACH STATEMENT EXECUTE FUNCTION inventory_device_counts_{op}()",
        )
    ),
]
POSTGRESQL_DROP = [
    *(f"DROP TRIGGER IF EXISTS device_counts_{op} ON inventory_device" for op in PG_ROWS),
    *(f"DROP FUNCTION IF EXISTS inventory_device_counts_{op}()" for op in PG_ROWS),
    "DROP INDEX IF EXISTS devicecount_key",
]


def create(apps, schema_editor):  # type: ignore[no-untyped-def]
    vendor = schema_editor.connection.vendor
    if vendor not in ("sqlite", "postgresql"):
        raise RuntimeError(f"the device counters need triggers written for {vendor}")
    for sql in BACKFILL + (SQLITE if vendor == "sqlite" else POSTGRESQL):
        schema_editor.execute(sql)


def drop(apps, schema_editor):  # type: ignore[no-untyped-def]
    for sql in SQLITE_DROP if schema_editor.connection.vendor == "sqlite" else POSTGRESQL_DROP:
        schema_editor.execute(sql)


class Migration(migrations.Migration):

    dependencies = [
        ('inventory', '0010_kubeobject_kind_mirrored'),
    ]

    operations = [
        migrations.CreateModel(
            name='DeviceCount',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('driver', models.CharField(max_length=253)),
                ('class_index', models.TextField(default=' ')),
                ('allocation_state', models.CharField(default='free', max_length=16)),
                ('tainted', models.BooleanField(default=False)),
                ('taint_none', models.BooleanField(default=False)),
                ('taint_no_schedule', models.BooleanField(default=False)),
                ('taint_no_execute', models.BooleanField(default=False)),
                ('blocked', models.CharField(blank=True, default='', max_length=16)),
                ('pool_complete', models.BooleanField(default=True)),
                ('n', models.BigIntegerField(default=0)),
            ],
        ),
        migrations.CreateModel(
            name='NodeDeviceCount',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('node_name', models.CharField(max_length=253)),
                ('driver', models.CharField(max_length=253)),
                ('total', models.BigIntegerField(default=0)),
                ('allocated', models.BigIntegerField(default=0)),
                ('tainted', models.BigIntegerField(default=0)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('node_name', 'driver'), name='nodedevicecount_node_driver')],
            },
        ),
        migrations.RunPython(create, drop),
    ]
