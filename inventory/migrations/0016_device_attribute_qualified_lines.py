"""Attribute lines for qualified names only, with `own` for the device driver's domain (issue 12: half the
rows the initial sync writes). The short-name lines go; `own` is set from each line's device."""

from django.db import migrations, models


def keep_qualified(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        unqualified = "strpos(split_part(line, '=', 1), '/') = 0"
    else:
        unqualified = "instr(substr(line, 1, instr(line, '=') - 1), '/') = 0"
    schema_editor.execute(f"DELETE FROM inventory_deviceattribute WHERE {unqualified}")
    schema_editor.execute(
        "UPDATE inventory_deviceattribute SET own = (SELECT substr(inventory_deviceattribute.line, 1, "
        "length(d.driver) + 1) = d.driver || '/' FROM inventory_device AS d "
        "WHERE d.id = inventory_deviceattribute.device_id) "
        "WHERE EXISTS (SELECT 1 FROM inventory_device AS d WHERE d.id = inventory_deviceattribute.device_id)"
    )


def add_short_names(apps, schema_editor):  # type: ignore[no-untyped-def]
    """Back: the short-name twin of every line of the driver's domain."""
    schema_editor.execute(
        "INSERT INTO inventory_deviceattribute (device_id, line, own) SELECT a.device_id, "
        "substr(a.line, length(d.driver) + 2), a.own FROM inventory_deviceattribute AS a "
        "JOIN inventory_device AS d ON d.id = a.device_id WHERE a.own"
    )


class Migration(migrations.Migration):

    dependencies = [
        ('inventory', '0015_no_statistics_for_documents'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='deviceattribute',
            name='deviceattribute_line',
        ),
        migrations.AddField(
            model_name='deviceattribute',
            name='own',
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(keep_qualified, add_short_names),
        migrations.AddIndex(
            model_name='deviceattribute',
            index=models.Index(fields=['line', 'own', 'device'], name='deviceattribute_line_own'),
        ),
    ]
