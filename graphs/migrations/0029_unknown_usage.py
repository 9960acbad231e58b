from django.db import migrations, models

# Both columns are added in place, on PostgreSQL and SQLite alike: Django's own AddField would rebuild the
# table on SQLite, and the rebuild would create every index of the model's state, the PostgreSQL-only
# trigram index (0026) among them, which SQLite cannot build.
_COLUMNS = ("calls_without_usage", "calls_without_cost")


def _add(column: str) -> migrations.RunSQL:
    return migrations.RunSQL(
        sql=f'ALTER TABLE graphs_worknodeexecution ADD COLUMN "{column}" smallint NOT NULL DEFAULT 0'
            f' CHECK ("{column}" >= 0)',
        reverse_sql=f'ALTER TABLE graphs_worknodeexecution DROP COLUMN "{column}"',
    )


class Migration(migrations.Migration):

    dependencies = [
        ('graphs', '0028_agent_profiles'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[_add(column) for column in _COLUMNS],
            state_operations=[
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
            ],
        ),
    ]
