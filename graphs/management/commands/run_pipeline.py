from django.core.management.base import BaseCommand, CommandError

from graphs.engine import pipeline_start, task_wait_finished
from graphs.management.args import uuid_or_none
from graphs.models import Task
from graphs.runs.facts import task_latest_run


class Command(BaseCommand):
    help = "Run a task's planner → coder → validator pipeline and wait for its verdict."

    def add_arguments(self, parser):
        parser.add_argument("task_id")
        parser.add_argument("--timeout", type=float, default=3600.0, help="seconds to wait for the verdict")
        parser.add_argument("--no-wait", action="store_true", help="queue the pipeline and return at once")

    def handle(self, *args, task_id: str, timeout: float, no_wait: bool, **options):
        task_uuid = uuid_or_none(task_id)
        task = Task.objects.filter(pk=task_uuid).first() if task_uuid else None
        if task is None:
            raise CommandError(f"no task {task_id}")
        pipeline_start(task=task)
        if no_wait:
            self.stdout.write(f"pipeline for task {task.pk} queued")
            return
        task = task_wait_finished(task_id=task.pk, timeout=timeout)
        run = task_latest_run(task.pk)
        self.stdout.write(f"task {task.pk}: {task.status}")
        if run is not None:
            self.stdout.write(f"run {run.run_id}: {run.status}")
        if task.outcome.get("verdict"):
            self.stdout.write(f"verdict: {task.outcome['verdict']}")
        if task.status != Task.Status.SUCCEEDED:
            raise CommandError(f"task ended {task.status}: {task.outcome.get('error', '')}")
