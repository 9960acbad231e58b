from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('graphs', '0028_agent_profiles'),
    ]

    operations = [
        migrations.AddField(
            model_name='worknodeexecution',
            name='calls_without_usage',
            field=models.PositiveSmallIntegerField(default=0, help_text='Calls that reported no usage: the token counts are then a lower bound, or unknown.'),
        ),
        migrations.AddField(
            model_name='worknodeexecution',
            name='calls_without_cost',
            field=models.PositiveSmallIntegerField(default=0, help_text='Calls that reported no cost: the cost is then a lower bound, or unknown.'),
        ),
    ]
