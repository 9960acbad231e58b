"""Appends wait for a reviewer in projects that require plan approval: one AppendReview per append that
added nodes, and a run stopped by a rejected append says so in its error_code (append_rejected)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('graphs', '0020_project_allow_command_network'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='workgraphrun',
            name='error_code',
            field=models.CharField(blank=True, help_text='Why a run was stopped before its nodes ended (budget_exceeded, append_rejected); empty otherwise.', max_length=32),
        ),
        migrations.CreateModel(
            name='AppendReview',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('new_node_ids', models.JSONField(default=list, help_text='The nodes the append added: what an approval lets run.')),
                ('resume_status', models.CharField(choices=[('ready', 'Ready'), ('running', 'Running')], help_text="The run's status once approved: running (the nodes start) or ready (a lead starts the run).", max_length=24)),
                ('status', models.CharField(choices=[('pending', 'Waiting for a reviewer'), ('approved', 'Approved'), ('rejected', 'Rejected')], db_index=True, default='pending', max_length=16)),
                ('review_comment', models.TextField(blank=True)),
                ('reviewed_at', models.DateTimeField(blank=True, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('planning_execution', models.OneToOneField(help_text="The append's planning call.", on_delete=django.db.models.deletion.CASCADE, related_name='append_review', to='graphs.worknodeexecution')),
                ('reviewed_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='append_reviews', to='graphs.workgraphrun')),
            ],
            options={
                'ordering': ['created_at'],
                'constraints': [models.CheckConstraint(condition=models.Q(('resume_status__in', ['ready', 'running'])), name='append_review_resumes_ready_or_running'), models.CheckConstraint(condition=models.Q(('status', 'pending'), ('reviewed_at__isnull', False), _connector='OR'), name='append_review_decided_when')],
            },
        ),
    ]
