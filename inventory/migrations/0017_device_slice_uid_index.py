"""Device.slice_uid is looked up by equality only: one btree, without the LIKE (varchar_pattern_ops) index
PostgreSQL gets for a `db_index=True` CharField, which every device insert also had to write.

The database side is spelled out: Django would remake the SQLite table for the AlterField, and a remade table
loses the triggers and indexes earlier migrations made with SQL (`read_counters`, the covering indexes)."""

from django.db import migrations, models

OLD = "inventory_device_slice_uid_120060d1"


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    schema_editor.execute(f'DROP INDEX IF EXISTS "{OLD}"')
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f'DROP INDEX IF EXISTS "{OLD}_like"')
    schema_editor.execute('CREATE INDEX IF NOT EXISTS "device_slice_uid" ON "inventory_device" ("slice_uid")')


def backwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    schema_editor.execute('DROP INDEX IF EXISTS "device_slice_uid"')
    schema_editor.execute(f'CREATE INDEX IF NOT EXISTS "{OLD}" ON "inventory_device" ("slice_uid")')
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f'CREATE INDEX IF NOT EXISTS "{OLD}_like" ON "inventory_device" ("slice_uid" varchar_pattern_ops)'
        )


class Migration(migrations.Migration):

    dependencies = [
        ('inventory', '0016_device_attribute_qualified_lines'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='device',
                    name='slice_uid',
                    field=models.CharField(max_length=64),
                ),
                migrations.AddIndex(
                    model_name='device',
                    index=models.Index(fields=['slice_uid'], name='device_slice_uid'),
                ),
            ],
            database_operations=[migrations.RunPython(forwards, backwards)],
        ),
    ]
