"""An attempt's run and status are no longer indexed alone: the composite indexes that lead with them
serve those lookups, and every index is written again each time an attempt's status changes."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('graphs', '0018_execution_claim_order_index'),
    ]

    operations = [
        migrations.AlterField(
            model_name='worknodeexecution',
            name='run',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='executions', to='graphs.workgraphrun'),
        ),
        migrations.AlterField(
            model_name='worknodeexecution',
            name='status',
            field=models.CharField(choices=[('pending', 'Pending'), ('queued', 'Queued'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('partial', 'Partial'), ('failed', 'Failed'), ('blocked', 'Blocked'), ('cancelled', 'Cancelled')], default='pending', max_length=16),
        ),
    ]
