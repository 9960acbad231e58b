"""The engine's background jobs, each submitted through a typed function: no caller spells a job's name.

The handlers are mapped to these names in ``graphs.engine.JOB_HANDLERS`` and installed at start-up.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from graphs.executors import REAP_JOB, job_submit
from graphs.runs.admission import RUNS_ADMIT_JOB


class Job(StrEnum):
    NODE_EXECUTE = "node_execute"
    RUN_DISPATCH = "run_dispatch"
    PIPELINE_PLAN = "pipeline_plan"
    PIPELINE_STEP = "pipeline_step"
    PLAN_FRESH = "plan_fresh"
    PLAN_APPEND = "plan_append"
    EXTERNAL_DEADLINE = "external_deadline"
    GAP_ROUND = "gap_round"
    REAP = REAP_JOB
    RUNS_ADMIT = RUNS_ADMIT_JOB


def node_execute_submit(*, node_exec_id: Any, delay: float = 0.0) -> None:
    """Run a queued attempt (after ``delay`` seconds: a backoff)."""
    job_submit(Job.NODE_EXECUTE, str(node_exec_id), delay=delay)


def run_dispatch_submit(*, run_id: Any, delay: float) -> None:
    """Give jobs to the run's queued attempts still without one ``delay`` seconds from now."""
    job_submit(Job.RUN_DISPATCH, str(run_id), delay=delay)


def pipeline_plan_submit(*, run_id: Any) -> None:
    """Plan a pipeline run's first stage, then run it."""
    job_submit(Job.PIPELINE_PLAN, str(run_id))


def pipeline_step_submit(*, run_id: Any, from_stage: str) -> None:
    """Let the stage after ``from_stage`` append its nodes; naming the stage left keeps a duplicate
    of the job from skipping one."""
    job_submit(Job.PIPELINE_STEP, f"{run_id}:{from_stage}")


def plan_fresh_submit(*, run_id: Any, org_node: str) -> None:
    """Plan a run created in ``planning`` with ``org_node`` only (empty: the planner), without executing it."""
    job_submit(Job.PLAN_FRESH, f"{run_id}:{org_node}")


def plan_append_submit(*, run_id: Any, org_node: str) -> None:
    """Let ``org_node`` append its own nodes to the run."""
    job_submit(Job.PLAN_APPEND, f"{run_id}:{org_node}")


def external_deadline_submit(*, node_exec_id: Any, delay: float) -> None:
    """Time out an external node's attempt still waiting for its report ``delay`` seconds from now."""
    job_submit(Job.EXTERNAL_DEADLINE, str(node_exec_id), delay=delay)


def gap_round_submit(*, run_id: Any, round_number: int) -> None:
    """Ask a gap-driven run's planner for round ``round_number``; naming the round keeps a duplicate of
    the job from planning two."""
    job_submit(Job.GAP_ROUND, f"{run_id}:{round_number}")
