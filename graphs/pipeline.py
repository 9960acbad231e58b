"""The planner → coder → validator pipeline of a task, as jobs.

``pipeline_start`` plans the task with the planner and runs its nodes; each time a stage's nodes have
all succeeded the engine submits ``pipeline_step``, which lets the next org node append its own nodes
into the same run and runs them. The final verdict decides the task (``engine.task_outcome_record``).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from graphs.engine import pipeline_next_stage, run_start, task_outcome_record
from graphs.jobs import job_handler, job_submit
from graphs.models import Task, WorkGraphRun
from graphs.planning import PlanningFailedError, plan_work_graph

FIRST_STAGE = "planner"


def pipeline_start(*, task: Task) -> None:
    """Queue the pipeline for ``task``; the planner's planning call runs as a background job."""
    with transaction.atomic():
        Task.objects.filter(pk=task.pk).update(status=Task.Status.PLANNING, outcome={})
        job_submit("pipeline_plan", str(task.pk))


@job_handler("pipeline_plan")
def pipeline_plan_job(task_id: str) -> None:
    task = Task.objects.select_related("project").get(pk=task_id)
    try:
        result = plan_work_graph(FIRST_STAGE, task, task.goal_text)
    except PlanningFailedError as failure:
        Task.objects.filter(pk=task.pk).update(
            status=Task.Status.FAILED, outcome={"error": failure.reason, "stage": FIRST_STAGE}
        )
        return
    run = result.run
    WorkGraphRun.objects.filter(pk=run.pk).update(pipeline=True, stage=FIRST_STAGE)
    run.pipeline, run.stage = True, FIRST_STAGE
    Task.objects.filter(pk=task.pk).update(status=Task.Status.RUNNING)
    if run.status == WorkGraphRun.Status.READY:
        run_start(run=run)


@job_handler("pipeline_step")
def pipeline_step_job(arg: str) -> None:
    """Let the stage after ``<from_stage>`` append its nodes to the run, then run them (``<run_id>:<from_stage>``).

    Claiming the move from that exact stage makes the job idempotent: a duplicate or a redelivery finds
    the run already past it and does nothing.
    """
    run_id, _, from_stage = arg.partition(":")
    run = WorkGraphRun.objects.select_related("task__project").get(pk=run_id)
    if run.stage != from_stage or run.status != WorkGraphRun.Status.RUNNING:
        return
    stage = pipeline_next_stage(run)
    if stage is None:
        return
    claimed = WorkGraphRun.objects.filter(pk=run.pk, stage=from_stage, status=WorkGraphRun.Status.RUNNING).update(
        stage=stage
    )
    if claimed != 1:
        return
    try:
        plan_work_graph(stage, run.task, run.task.goal_text, append_to_run_id=run.run_id)
    except PlanningFailedError as failure:
        _pipeline_fail(run_id=run.run_id, reason=f"{stage} planning failed: {failure.reason}")
        return
    run.refresh_from_db()
    run_start(run=run)


def _pipeline_fail(*, run_id: Any, reason: str) -> None:
    WorkGraphRun.objects.filter(pk=run_id).update(
        status=WorkGraphRun.Status.FAILED, error=reason, finished_at=timezone.now()
    )
    task_outcome_record(run=WorkGraphRun.objects.get(pk=run_id), error=reason)


@job_handler("plan_fresh")
def plan_fresh_job(task_id: str) -> None:
    """Plan the task with the planner only (no execution); a failure is recorded on its planning node."""
    task = Task.objects.select_related("project").get(pk=task_id)
    try:
        plan_work_graph(FIRST_STAGE, task, task.goal_text)
    except PlanningFailedError:
        return


@job_handler("plan_append")
def plan_append_job(arg: str) -> None:
    """Let an org node append its nodes to a run (``<run_id>:<org_node>``); failures stay on its planning node."""
    run_id, _, org_node = arg.partition(":")
    run = WorkGraphRun.objects.select_related("task__project").get(pk=run_id)
    try:
        plan_work_graph(org_node, run.task, run.task.goal_text, append_to_run_id=run.run_id)
    except PlanningFailedError:
        return
