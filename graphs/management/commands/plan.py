from django.core.management.base import BaseCommand, CommandError

from graphs.management.args import uuid_or_none
from graphs.models import Task
from graphs.planning import PlanningFailedError, plan_work_graph


class Command(BaseCommand):
    help = "Ask an org node's agent to plan a graph for a task (or append to a run) and print what it made."

    def add_arguments(self, parser):
        parser.add_argument("task_id")
        parser.add_argument("--org-node", default="planner", help="planner, coder, validator or another org node")
        parser.add_argument("--append-to", dest="append_to", default=None, help="a run_id to append nodes to")

    def handle(self, *args, task_id: str, org_node: str, append_to: str | None, **options):
        task_uuid = uuid_or_none(task_id)
        task = Task.objects.select_related("project").filter(pk=task_uuid).first() if task_uuid else None
        if task is None:
            raise CommandError(f"no task {task_id}")
        if append_to is not None and uuid_or_none(append_to) is None:
            raise CommandError(f"--append-to needs a run id, got {append_to!r}")
        try:
            result = plan_work_graph(org_node, task, task.goal_text, append_to_run_id=append_to)
        except PlanningFailedError as failure:
            where = f" (planning execution {failure.planning_execution.pk})" if failure.planning_execution else ""
            raise CommandError(f"planning failed{where}: {failure.reason}") from failure
        self.stdout.write(f"run: {result.run.run_id} ({result.run.status})")
        self.stdout.write(f"new nodes: {', '.join(result.new_node_ids) or '(none)'}")
        self.stdout.write(f"planning execution: {result.planning_execution.pk}")

