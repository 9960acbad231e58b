from django.core.management.base import BaseCommand, CommandError

from graphs.engine import run_start, run_wait_finished
from graphs.errors import WorkGraphError
from graphs.management.args import uuid_or_none
from graphs.models import WorkGraphRun


class Command(BaseCommand):
    help = "Execute a planned run's nodes and wait for it to finish (embedded mode runs them in this process)."

    def add_arguments(self, parser):
        parser.add_argument("run_id")
        parser.add_argument("--timeout", type=float, default=3600.0, help="seconds to wait for the run")
        parser.add_argument("--no-wait", action="store_true", help="queue the run and return at once")

    def handle(self, *args, run_id: str, timeout: float, no_wait: bool, **options):
        run_uuid = uuid_or_none(run_id)
        run = WorkGraphRun.objects.filter(pk=run_uuid).first() if run_uuid else None
        if run is None:
            raise CommandError(f"no run {run_id}")
        try:
            run_start(run=run)
        except WorkGraphError as error:
            raise CommandError(str(error)) from error
        if no_wait:
            self.stdout.write(f"run {run.run_id} queued")
            return
        run = run_wait_finished(run_id=run.run_id, timeout=timeout)
        self.stdout.write(f"run {run.run_id}: {run.status}{' — ' + run.error if run.error else ''}")
        if run.status != WorkGraphRun.Status.SUCCEEDED:
            raise CommandError(f"run ended {run.status}")

