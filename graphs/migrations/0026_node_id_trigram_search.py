from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations

# The runs list's search by a part of a node id, in any case (graphs.reads.run_lists): trigrams of the ids'
# upper case, as Django's icontains compares them. Built on PostgreSQL only, and kept out of the models'
# state: SQLite has no GIN index, and rebuilds a table with every index its state names whenever a later
# migration alters it. The embedded SQLite mode answers the search by scanning the (node_id, run) index.
INDEX = "execution_node_trigram"


def trigram_index_create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {INDEX} ON graphs_worknodeexecution USING gin ((UPPER(node_id)) gin_trgm_ops)"
        )


def trigram_index_drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):

    dependencies = [
        ('graphs', '0025_run_fork_edit'),
    ]

    operations = [
        # CreateExtension does nothing on another database.
        TrigramExtension(),
        migrations.RunPython(trigram_index_create, trigram_index_drop),
    ]
