from datetime import timedelta

from django.db import migrations, models
from django.utils import timezone


def tokens_expire_in_90_days(apps, schema_editor):
    # Tokens made before expiry existed get the default lifetime from now, not from their creation:
    # none stops working the moment the console is upgraded.
    ApiToken = apps.get_model("graphs", "ApiToken")
    ApiToken.objects.filter(expires_at__isnull=True).update(expires_at=timezone.now() + timedelta(days=90))


class Migration(migrations.Migration):

    dependencies = [
        ("graphs", "0005_task_status_derived"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="expires_at",
            field=models.DateTimeField(null=True),
        ),
        migrations.RunPython(tokens_expire_in_90_days, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="apitoken",
            name="expires_at",
            field=models.DateTimeField(help_text="Chosen at creation; the token is refused from then on."),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="read_only",
            field=models.BooleanField(default=False, help_text="The token may only read (GET, HEAD, OPTIONS)."),
        ),
    ]
