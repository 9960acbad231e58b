"""A task's next run as "Run pipeline" (or, for an imported DAG spec, "Run again") makes it: the spec the task
was imported from, translated again and started, or else the planner → coder → validator pipeline."""

from __future__ import annotations

from decimal import Decimal

from graphs.engine.pipeline import pipeline_start
from graphs.engine.scheduler import run_start
from graphs.models import Task, WorkGraphRun
from graphs.planning.dag_specs import dag_spec_run_again, task_dag_spec


def task_run_anew(*, task: Task, max_cost_usd: Decimal | None = None) -> WorkGraphRun:
    """Make and start the task's next run; return it. An imported task runs its spec again — never the
    generic pipeline — and starts at once unless its project wants the plan approved first.

    Refused (``TaskBusyError``) while another run of the task is under way."""
    if task_dag_spec(task) is None:
        return pipeline_start(task=task, max_cost_usd=max_cost_usd)
    run = dag_spec_run_again(task=task, max_cost_usd=max_cost_usd)
    if run.status == WorkGraphRun.Status.READY:
        run_start(run=run)
    return run
