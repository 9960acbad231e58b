from django.core.management.base import BaseCommand

from graphs.engine import executions_reap


class Command(BaseCommand):
    help = "Fail and retry node executions whose worker stopped heart-beating."

    def handle(self, *args, **options):
        reaped = executions_reap()
        self.stdout.write(f"reaped {len(reaped)} execution(s)")
