"""Pod.waiting_reason and waiting_message: why a pod waits (`dra.pods.pod_waiting`), kept by the mirror.

Pods mirrored before it get theirs here, as 0022 gave them their rows: the mirror rewrites a pod only when its
resourceVersion moves, so a pod pending since would otherwise show no reason until it changes."""

from django.db import migrations, models

from inventory.mirror.derive.pods import pod_values

FIELDS = ("waiting_reason", "waiting_message")


def fill(apps, schema_editor):  # type: ignore[no-untyped-def]
    KubeObject = apps.get_model("inventory", "KubeObject")
    Pod = apps.get_model("inventory", "Pod")
    waiting = {}
    pods = KubeObject.objects.filter(kind="pods").order_by().values_list("uid", "raw")
    for uid, raw in pods.iterator(chunk_size=2000):
        values = pod_values(raw if isinstance(raw, dict) else {})
        if values["waiting_reason"]:  # the rest keep the default ""
            waiting[uid] = values
    uids = sorted(waiting)
    for start in range(0, len(uids), 500):
        rows = list(Pod.objects.filter(uid__in=uids[start : start + 500]))
        for row in rows:
            for field in FIELDS:
                setattr(row, field, waiting[row.uid][field])
        Pod.objects.bulk_update(rows, FIELDS, batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ('inventory', '0022_pod'),
    ]

    operations = [
        migrations.AddField(
            model_name='pod',
            name='waiting_reason',
            field=models.CharField(blank=True, default='', max_length=128),
        ),
        migrations.AddField(
            model_name='pod',
            name='waiting_message',
            field=models.CharField(blank=True, default='', max_length=1000),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
