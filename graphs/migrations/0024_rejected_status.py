from django.db import migrations, models


def rejected_runs_relabel(apps, schema_editor):
    """Runs a reviewer turned down were recorded as failed: they read rejected now, and so do their tasks
    when such a run is their latest."""
    run_model = apps.get_model("graphs", "WorkGraphRun")
    task_model = apps.get_model("graphs", "Task")
    rejected = run_model.objects.filter(status="failed").filter(
        models.Q(review_decision="rejected") | models.Q(error_code="append_rejected")
    )
    task_ids = set(rejected.values_list("task_id", flat=True))
    rejected.update(status="rejected")
    for task in task_model.objects.filter(pk__in=task_ids, status="failed"):
        latest = run_model.objects.filter(task_id=task.pk).order_by("-created_at", "-run_id").first()
        if latest is not None and latest.status == "rejected":
            task_model.objects.filter(pk=task.pk).update(status="rejected")


class Migration(migrations.Migration):

    dependencies = [
        ('graphs', '0023_help_texts_name_the_packages'),
    ]

    operations = [
        migrations.AlterField(
            model_name='task',
            name='status',
            field=models.CharField(choices=[('draft', 'Draft'), ('planning', 'Planning'), ('awaiting_approval', 'Awaiting approval'), ('ready', 'Ready'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('incomplete', 'Incomplete'), ('failed', 'Failed'), ('rejected', 'Rejected'), ('cancelled', 'Cancelled')], db_index=True, default='draft', help_text="Derived from the task's latest run (graphs.runs.status); never set on its own.", max_length=24),
        ),
        migrations.AlterField(
            model_name='workgraphrun',
            name='status',
            field=models.CharField(choices=[('planning', 'Planning'), ('planning_failed', 'Planning failed'), ('awaiting_approval', 'Awaiting approval'), ('ready', 'Ready'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('failed', 'Failed'), ('rejected', 'Rejected'), ('cancelled', 'Cancelled')], db_index=True, default='planning', max_length=24),
        ),
        migrations.RunPython(rejected_runs_relabel, migrations.RunPython.noop),
    ]
