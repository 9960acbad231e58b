"""The claim of a run's longest-waiting queued attempt reads it off an index in order, instead of sorting
the run's queued rows; the index's leading columns are the one it replaces."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('graphs', '0017_run_layouts'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='worknodeexecution',
            name='execution_run_status',
        ),
        migrations.AddIndex(
            model_name='worknodeexecution',
            index=models.Index(fields=['run', 'status', 'ready_at', 'created_at'], name='execution_run_status_ready'),
        ),
    ]
