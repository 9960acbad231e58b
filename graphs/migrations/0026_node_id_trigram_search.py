from django.contrib.postgres.indexes import GinIndex, OpClass
from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations
from django.db.models.functions import Upper


class AddIndexOnPostgres(migrations.AddIndex):
    """An index only PostgreSQL can build (GIN, pg_trgm): recorded in the state everywhere, built only
    there. The embedded SQLite mode answers the same search by scanning the (node_id, run) index."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)


class Migration(migrations.Migration):

    dependencies = [
        ('graphs', '0025_run_fork_edit'),
    ]

    operations = [
        # CreateExtension does nothing on another database.
        TrigramExtension(),
        AddIndexOnPostgres(
            model_name='worknodeexecution',
            index=GinIndex(OpClass(Upper('node_id'), name='gin_trgm_ops'), name='execution_node_trigram'),
        ),
    ]
