from django.db import migrations

# The runs and task lists' search in task titles, in any case (graphs.reads.run_lists, task_lists): trigrams
# of the titles' upper case, as Django's icontains compares them, so the titles that hold the text are
# found from the index, not by reading every task. On PostgreSQL only and out of the models' state, as
# 0026's index of node ids is, for the same reasons; its extension is made there.
INDEX = "task_title_trigram"


def trigram_index_create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {INDEX} ON graphs_task USING gin ((UPPER(title)) gin_trgm_ops)")


def trigram_index_drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):

    dependencies = [
        ('graphs', '0041_inbox_and_live_indexes'),
    ]

    operations = [
        migrations.RunPython(trigram_index_create, trigram_index_drop),
    ]
