"""DeviceAttribute keyed by (device, line), without its id column and the index of `device` (issue 12: the
attribute lines were the largest part of a PostgreSQL initial sync's database time). Django cannot alter a
table to a composite primary key, so the lines are copied aside, the table is made again and they are
copied back (a line a device held twice is kept once)."""

from django.db import migrations, models

ASIDE = "inventory_deviceattribute_aside"


def _copy(schema_editor, source: str, target: str) -> None:  # type: ignore[no-untyped-def]
    schema_editor.execute(
        f"INSERT INTO {target} (device_id, line, own) SELECT device_id, line, own FROM {source}"
    )


def set_aside(apps, schema_editor):  # type: ignore[no-untyped-def]
    schema_editor.execute(
        f"CREATE TABLE {ASIDE} (device_id bigint NOT NULL, line text NOT NULL, own boolean NOT NULL)"
    )
    _copy(schema_editor, "inventory_deviceattribute", ASIDE)


def put_back(apps, schema_editor):  # type: ignore[no-untyped-def]
    schema_editor.execute(
        "INSERT INTO inventory_deviceattribute (device_id, line, own) SELECT device_id, line, bool_or_own "
        f"FROM (SELECT device_id, line, MAX(CASE WHEN own THEN 1 ELSE 0 END) = 1 AS bool_or_own FROM {ASIDE} "
        "GROUP BY device_id, line) AS lines"
    )
    schema_editor.execute(f"DROP TABLE {ASIDE}")


def set_aside_back(apps, schema_editor):  # type: ignore[no-untyped-def]
    """Backwards: the lines of the composite-key table aside, before it is dropped."""
    set_aside(apps, schema_editor)


def put_back_back(apps, schema_editor):  # type: ignore[no-untyped-def]
    """Backwards: into the table with an id again."""
    _copy(schema_editor, ASIDE, "inventory_deviceattribute")
    schema_editor.execute(f"DROP TABLE {ASIDE}")


class Migration(migrations.Migration):
    dependencies = [("inventory", "0018_no_statistics_for_texts")]

    operations = [
        migrations.RunPython(set_aside, put_back_back),
        migrations.DeleteModel(name="DeviceAttribute"),
        migrations.CreateModel(
            name="DeviceAttribute",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "device", "line", blank=True, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("line", models.TextField()),
                ("own", models.BooleanField(default=False)),
                (
                    "device",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=models.deletion.CASCADE,
                        related_name="attribute_lines",
                        to="inventory.device",
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["line", "own", "device"], name="deviceattribute_line_own")],
            },
        ),
        migrations.RunPython(put_back, set_aside_back),
    ]
