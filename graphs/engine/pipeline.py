"""The planner → coder → validator pipeline of a task, and planning on request, as jobs.

``pipeline_start`` creates the task's run (``planning``) and queues the planner's planning call; the
run then executes its nodes. Each time a stage's nodes have all succeeded the engine submits
``pipeline_step``, which lets the next org node append its own nodes into the same run and runs them —
once a reviewer approves them, where the project requires plan approval (``graphs.planning.append_review``).
The final verdict decides the task (``graphs.runs.status``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import transaction

from graphs.engine.finish import gap_stage, pipeline_next_stage, run_finish
from graphs.engine.jobs import pipeline_plan_submit, plan_append_submit, plan_fresh_submit
from graphs.engine.scheduler import run_stage_start, run_start
from graphs.engine.state import RunStatus, Status
from graphs.errors import InvalidTransitionError
from graphs.models import Task, WorkGraphRun
from graphs.planning.planner import plan_work_graph
from graphs.planning.planning_node import PlanningFailedError
from graphs.runs.status import planning_run_create, run_stopped_finish

FIRST_STAGE = "planner"


def pipeline_start(*, task: Task, max_cost_usd: Decimal | None = None, start_commit: str = "",
                   revision_pins: dict[str, Any] | None = None) -> WorkGraphRun:
    """Create the task's pipeline run and queue its first planning call; return the run.

    Refused (``TaskBusyError``) while another run of the task is under way, as ``plan_fresh`` is.
    ``max_cost_usd`` is the run's budget; without it, the project's ``max_run_cost_usd``. ``start_commit``
    and ``revision_pins`` (an experiment's) are where its branch starts and the revisions it runs with."""
    return _planning_run_create(task=task, pipeline=True, max_cost_usd=max_cost_usd,
                                run_fields={"start_commit": start_commit, "revision_pins": revision_pins or {}})


def plan_fresh(*, task: Task, org_node: str = FIRST_STAGE, max_cost_usd: Decimal | None = None) -> WorkGraphRun:
    """Create a run for the task and queue ``org_node``'s planning call, without executing it.

    Any org node may plan a task from scratch, with its own catalog and prompt: a coding task needs no
    documents first. ``max_cost_usd`` is the run's budget; without it, the project's ``max_run_cost_usd``."""
    return _planning_run_create(task=task, pipeline=False, max_cost_usd=max_cost_usd, org_node=org_node)


def plan_append(*, run: WorkGraphRun, org_node: str) -> None:
    """Queue ``org_node``'s planning call that appends its own nodes to ``run``."""
    plan_append_submit(run_id=run.run_id, org_node=org_node)


def _planning_run_create(*, task: Task, pipeline: bool, max_cost_usd: Decimal | None,
                         org_node: str = FIRST_STAGE, run_fields: dict[str, Any] | None = None) -> WorkGraphRun:
    # The run exists from the request on, so the task reads "planning" at once and the plan can be
    # cancelled before its job starts.
    with transaction.atomic():
        # A gap-driven task's pipeline is its planner's rounds; a plan on request is one round like any.
        first_stage = gap_stage(1) if task.planning_mode == Task.PlanningMode.GAP_DRIVEN else FIRST_STAGE
        # A plan on request keeps its org node as its stage, so a reaper that finds it unplanned asks the same node.
        run = planning_run_create(task=task, pipeline=pipeline, stage=first_stage if pipeline else org_node,
                                  max_cost_usd=max_cost_usd, **(run_fields or {}))
        if pipeline:
            pipeline_plan_submit(run_id=run.run_id)
        else:
            plan_fresh_submit(run_id=run.run_id, org_node=org_node)
    return run


def pipeline_plan_job(run_id: str) -> None:
    """Plan a pipeline run's first stage, then start it (unless its plan awaits approval)."""
    run = WorkGraphRun.objects.select_related("task__project").get(pk=run_id)
    try:
        result = plan_work_graph(FIRST_STAGE, run.task, run.task.goal_text, run=run)
    except PlanningFailedError:
        return  # the planning call and the run record why
    if result.run.status == RunStatus.READY:
        run_start(run=result.run)


def plan_fresh_job(arg: str) -> None:
    """Plan a run with one org node only, no execution (``<run_id>:<org_node>``; the planner when the
    argument names none); a failure is recorded on its planning node."""
    run_id, _, org_node = arg.partition(":")
    run = WorkGraphRun.objects.select_related("task__project").get(pk=run_id)
    try:
        plan_work_graph(org_node or FIRST_STAGE, run.task, run.task.goal_text, run=run)
    except PlanningFailedError:
        return


def pipeline_step_job(arg: str) -> None:
    """Let the stage after ``<from_stage>`` append its nodes to the run, then run them (``<run_id>:<from_stage>``).

    Claiming the move from that exact stage makes the job idempotent: a duplicate or a redelivery finds
    the run already past it and does nothing.
    """
    run_id, _, from_stage = arg.partition(":")
    run = WorkGraphRun.objects.select_related("task__project").get(pk=run_id)
    if run.stage != from_stage or run.status != RunStatus.RUNNING:
        return
    stage = pipeline_next_stage(run)
    if stage is None:
        return
    claimed = WorkGraphRun.objects.filter(pk=run.pk, stage=from_stage, status=RunStatus.RUNNING).update(stage=stage)
    if claimed != 1:
        return
    try:
        result = plan_work_graph(stage, run.task, run.task.goal_text, append_to_run_id=run.run_id)
    except PlanningFailedError as failure:
        _append_failed(run_id=run.run_id, reason=f"{stage} planning failed: {failure.reason}", end_run=True)
        return
    if result.run.status == RunStatus.AWAITING_APPROVAL:
        return  # the stage's nodes wait for a reviewer, whose approval starts them (graphs.engine.review)
    run.refresh_from_db()
    try:
        run_stage_start(run=run)
    except InvalidTransitionError:
        _append_failed(run_id=run.run_id, reason="the run was cancelled while its stage planned", end_run=True)


def gap_round_job(arg: str) -> None:
    """Ask a gap-driven run's planner for round ``<round>`` and run the tasks it plans (``<run_id>:<round>``).

    Claiming the move from the round before makes the job idempotent. A round that fails to plan ends
    the run ``planning_failed`` with the reason (cancelled, when a cancel was waiting for it).
    """
    run_id, _, number = arg.partition(":")
    round_number = int(number)
    claimed = WorkGraphRun.objects.filter(pk=run_id, stage=gap_stage(round_number - 1),
                                          status=RunStatus.RUNNING).update(stage=gap_stage(round_number))
    if claimed != 1:
        return
    run = WorkGraphRun.objects.select_related("task__project").get(pk=run_id)
    try:
        result = plan_work_graph(FIRST_STAGE, run.task, run.task.goal_text, append_to_run_id=run.run_id)
    except PlanningFailedError as failure:
        _gap_round_failed(run_id=run.run_id, reason=f"gap round {round_number} planning failed: {failure.reason}")
        return
    if result.run.status == RunStatus.AWAITING_APPROVAL:
        return  # the round's tasks wait for a reviewer, whose approval starts them (graphs.engine.review)
    run.refresh_from_db()
    try:
        run_stage_start(run=run)
    except InvalidTransitionError:
        _gap_round_failed(run_id=run.run_id, reason="the run was cancelled while its gap round planned")


def _gap_round_failed(*, run_id: Any, reason: str) -> None:
    run = WorkGraphRun.objects.get(pk=run_id)
    if run.cancel_requested_at is not None:
        if not run.executions.filter(status=Status.RUNNING).exists():
            run_stopped_finish(run)
        return
    run_finish(run, status=RunStatus.PLANNING_FAILED, error=reason)


def plan_append_job(arg: str) -> None:
    """Let an org node append its nodes to a run (``<run_id>:<org_node>``); failures stay on its planning node."""
    run_id, _, org_node = arg.partition(":")
    run = WorkGraphRun.objects.select_related("task__project").get(pk=run_id)
    try:
        plan_work_graph(org_node, run.task, run.task.goal_text, append_to_run_id=run.run_id)
    except PlanningFailedError as failure:
        _append_failed(run_id=run.run_id, reason=failure.reason, end_run=False)


def _append_failed(*, run_id: Any, reason: str, end_run: bool) -> None:
    """An appending planning call failed. A run whose cancel was waiting for that call ends cancelled
    once nothing of it runs; otherwise a pipeline (``end_run``) fails with the reason."""
    run = WorkGraphRun.objects.get(pk=run_id)
    if run.cancel_requested_at is not None:
        if not run.executions.filter(status=Status.RUNNING).exists():
            run_stopped_finish(run)
        return
    if end_run:
        run_finish(run, status=RunStatus.FAILED, error=reason)
