"""Pod: one row per mirrored pod for the Pods list (kubectl's STATUS, the claims it uses), kept by the mirror.

Pods mirrored before it get their rows here: the mirror rewrites a pod only when its resourceVersion moves,
so a pod that does not change would otherwise be missing from the list."""

from django.db import migrations, models

from inventory.mirror.derive.pods import pod_values


def fill(apps, schema_editor):  # type: ignore[no-untyped-def]
    KubeObject = apps.get_model("inventory", "KubeObject")
    Pod = apps.get_model("inventory", "Pod")
    fields = {f.name for f in Pod._meta.concrete_fields} - {"id"}
    rows = []
    pods = KubeObject.objects.filter(kind="pods").order_by().values_list("uid", "raw")
    for uid, raw in pods.iterator(chunk_size=2000):
        values = {k: v for k, v in pod_values(raw if isinstance(raw, dict) else {}).items() if k in fields}
        rows.append(Pod(**(values | {"uid": uid})))
        if len(rows) >= 5000:
            Pod.objects.bulk_create(rows, batch_size=1000)
            rows = []
    Pod.objects.bulk_create(rows, batch_size=1000)


class Migration(migrations.Migration):

    dependencies = [
        ('inventory', '0021_counters_pause'),
    ]

    operations = [
        migrations.CreateModel(
            name='Pod',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('uid', models.CharField(max_length=64, unique=True)),
                ('namespace', models.CharField(max_length=63)),
                ('name', models.CharField(max_length=253)),
                ('node_name', models.CharField(blank=True, default='', max_length=253)),
                ('phase', models.CharField(default='Unknown', max_length=16)),
                ('status', models.CharField(blank=True, default='', max_length=128)),
                ('ready', models.CharField(blank=True, default='', max_length=16)),
                ('restarts', models.IntegerField(default=0)),
                ('claims', models.JSONField(blank=True, default=list)),
                ('claim_count', models.IntegerField(default=0)),
                ('extended_resources', models.JSONField(blank=True, default=list)),
                ('created', models.CharField(blank=True, default='', max_length=40)),
            ],
            options={
                'ordering': ['namespace', 'name'],
                'indexes': [models.Index(fields=['namespace', 'name'], name='pod_ns_name'), models.Index(fields=['node_name'], name='pod_node'), models.Index(fields=['phase'], name='pod_phase')],
            },
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
