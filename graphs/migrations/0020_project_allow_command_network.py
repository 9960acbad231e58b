from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('graphs', '0019_execution_redundant_indexes'),
    ]

    operations = [
        migrations.AddField(
            model_name='project',
            name='allow_command_network',
            field=models.BooleanField(default=False, help_text="Let command nodes and command judgments reach the network. Off: their sandbox has loopback only. Agents always reach their model's API."),
        ),
    ]
