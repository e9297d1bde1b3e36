"""Device.slice_created: the ResourceSlice's creationTimestamp, the Devices table's Age.

The column is added with SQL: Django would remake the SQLite table for the AddField, and a remade table
loses the triggers and indexes earlier migrations made with SQL (`read_counters`, the covering indexes).
Devices mirrored before it take their slice's timestamp here, not at their pool's next change."""

from django.db import migrations, models


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    schema_editor.execute(
        "ALTER TABLE inventory_device ADD COLUMN slice_created varchar(40) NOT NULL DEFAULT ''"
    )
    schema_editor.execute(
        "UPDATE inventory_device SET slice_created = COALESCE((SELECT o.creation_timestamp"
        " FROM inventory_kubeobject o WHERE o.kind = 'resourceslices' AND o.uid = inventory_device.slice_uid"
        " LIMIT 1), '')"
    )


def backwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    schema_editor.execute("ALTER TABLE inventory_device DROP COLUMN slice_created")


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0019_device_attribute_composite_key"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(
                    model_name="device",
                    name="slice_created",
                    field=models.CharField(blank=True, default="", max_length=40),
                ),
            ],
            database_operations=[migrations.RunPython(forwards, backwards)],
        ),
    ]
