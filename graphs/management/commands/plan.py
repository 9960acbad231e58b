from collections.abc import Iterator
from contextlib import contextmanager

from django.core.management.base import BaseCommand, CommandError

from graphs.engine import plan_fresh
from graphs.errors import WorkGraphError
from graphs.executors import InlineExecutor, executor_set
from graphs.management.args import uuid_or_none
from graphs.models import PLANNING_NODE_ID, Task, WorkGraphRun, WorkNodeExecution
from graphs.planning.planner import plan_work_graph
from graphs.planning.planning_node import PlanningFailedError
from graphs.runs.facts import node_latest_attempt

# Who plans when --org-node is left out, as on the page and in the API (``plan_fresh``).
DEFAULT_ORG_NODE = "planner"
PLANNED = (WorkGraphRun.Status.READY, WorkGraphRun.Status.AWAITING_APPROVAL)


class Command(BaseCommand):
    help = ("Plan a graph for a task as the page and the API do (any org node, under the project's budget, refused"
            " while another run of the task is under way), or let an org node append to a run; print what it made.")

    def add_arguments(self, parser):
        parser.add_argument("task_id")
        parser.add_argument("--org-node", default=DEFAULT_ORG_NODE,
                            help="who plans: planner, coder, validator or another org node; with --append-to it"
                                 " appends its own nodes to that run, without it it plans the task from scratch")
        parser.add_argument("--append-to", dest="append_to", default=None, help="a run_id to append nodes to")

    def handle(self, *args, task_id: str, org_node: str, append_to: str | None, **options):
        task_uuid = uuid_or_none(task_id)
        task = Task.objects.select_related("project").filter(pk=task_uuid).first() if task_uuid else None
        if task is None:
            raise CommandError(f"no task {task_id}")
        if append_to is None:
            self._plan_fresh(task, org_node=org_node)
            return
        if uuid_or_none(append_to) is None:
            raise CommandError(f"--append-to needs a run id, got {append_to!r}")
        try:
            result = plan_work_graph(org_node, task, task.goal_text, append_to_run_id=append_to)
        except PlanningFailedError as failure:
            where = f" (planning execution {failure.planning_execution.pk})" if failure.planning_execution else ""
            raise CommandError(f"planning failed{where}: {failure.reason}") from failure
        self._print(result.run, new_node_ids=result.new_node_ids, planning=result.planning_execution)

    def _plan_fresh(self, task: Task, *, org_node: str) -> None:
        with _jobs_run_here() as jobs:
            try:
                # The one way a planning run is made: the project's budget, one run under way per task.
                run = plan_fresh(task=task, org_node=org_node)
            except WorkGraphError as refusal:
                raise CommandError(f"refused: {refusal}") from refusal
            jobs.drain()
        run.refresh_from_db()
        planning = node_latest_attempt(run=run, node_id=PLANNING_NODE_ID)
        if run.status not in PLANNED or planning is None:
            where = f" (planning execution {planning.pk})" if planning else ""
            reason = run.error or (planning.error if planning else "") or f"the run is {run.status}"
            raise CommandError(f"planning failed{where}: {reason}")
        self._print(run, new_node_ids=planning.output_payload.get("new_node_ids", []), planning=planning)

    def _print(self, run: WorkGraphRun, *, new_node_ids: list[str], planning: WorkNodeExecution) -> None:
        self.stdout.write(f"run: {run.run_id} ({run.status})")
        self.stdout.write(f"new nodes: {', '.join(new_node_ids) or '(none)'}")
        self.stdout.write(f"planning execution: {planning.pk}")


@contextmanager
def _jobs_run_here() -> Iterator[InlineExecutor]:
    """This process's jobs, run when drained, whatever executor the settings name: the command prints
    the plan its planning job made, so it makes it here and waits for it, as it always has."""
    executor = InlineExecutor()
    previous = executor_set(executor)
    try:
        yield executor
    finally:
        executor_set(previous)
