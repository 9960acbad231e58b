"""The orchestrator: runs a run's nodes in dependency order, judges them, retries and loops back.

State lives in the database; each node attempt is its own ``WorkNodeExecution`` row. The package's
modules, each with one reason to change:

- ``state`` — the run lock, the graph's shape, the nodes' latest rows, the progress throttle;
- ``statements`` — the statements every node of a run sends, written once per process;
- ``scheduler`` — start (or queue, past the limit of runs at once) and advance a run, admit queued
  runs, queue and dispatch attempts (``fan_in``: the cheap
  advance after a leaf of a wide fan-in; ``claims``: a queued attempt claimed for a worker about to be
  free, without a broker message, and a chain's next node claimed without the run lock);
- ``attempt`` — claim, run and record one attempt (``calls``: its agent calls; ``record``: the writes;
  ``classify``: a failed attempt classified by the rules, then the judge agent);
- ``attempt_commands`` — the commands an attempt runs, a command node's own and a command judgment's;
- ``changes`` — an attempt's change judged against the rules every attempt keeps, then landed or kept;
- ``judgment`` — judge an attempt's output with its kind's judge (graphs.domain.judgments), which asks the
  engine for the agent calls and commands it needs;
- ``on_fail`` — a failed judgment's ``on_fail`` action (graphs.domain.on_fail_actions) run on the run, and
  the transient retry with backoff;
- ``finish`` — how a stage and a run end;
- ``review`` — a reviewer's approval or rejection of a fresh plan or an append, when the project asks;
- ``change_review`` — an attempt's change held for a reviewer, and what their approval, request for changes
  or comment does to the run;
- ``external`` — nodes done outside the engine: their wait for a report, and its deadline;
- ``budget_resume`` — a run its budget stopped, given a higher budget and resumed where it stopped;
- ``recovery`` — cancel, fork, and the reaper of lost work (``fork_edits``: a fork with its node's prompt or
  argv edited);
- ``pipeline`` — the planner → coder → validator stages, and planning on request (``next_run``: a task's
  next run, its imported DAG spec again or else the pipeline);
- ``jobs`` — the typed submitters of the engine's background jobs; ``JOB_HANDLERS`` maps them to
  their handlers, installed at start-up.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError

from graphs.engine.attempt import node_execute_job, node_execution_run
from graphs.engine.external import external_deadline_job, node_attempt_finish_external
from graphs.engine.finish import pipeline_next_stage, run_wait_finished, task_wait_finished
from graphs.engine.jobs import Job
from graphs.engine.pipeline import (
    gap_round_job,
    pipeline_plan_job,
    pipeline_start,
    pipeline_step_job,
    plan_append,
    plan_append_job,
    plan_fresh,
    plan_fresh_job,
)
from graphs.engine.recovery import (
    EngineError,
    executions_reap,
    reap_job,
    run_cancel,
    run_fail_on_internal_error,
    run_fork,
)
from graphs.engine.scheduler import run_advance, run_dispatch_job, run_start, runs_admit_job

logger = logging.getLogger(__name__)


def _run_job(job: Job, handler: Callable[[str], None]) -> Callable[[str], None]:
    """``handler`` for a job whose argument starts with its run's id (``<run_id>`` or ``<run_id>:…``).

    A lost database connection propagates, for the executor to retry the job with backoff; any other
    error ends the run failed with the reason (``run_fail_on_internal_error``) — never a run left
    under way, nor a job retried on the same bug for ever.
    """

    def guarded(arg: str) -> None:
        try:
            handler(arg)
        except (OperationalError, InterfaceError):
            raise
        except Exception as error:
            logger.exception("job %s(%s) failed", job, arg)
            run_fail_on_internal_error(run_id=arg.partition(":")[0], job=str(job), error=error)

    return guarded


# A node job records its own attempt's crash (``attempt``), and the reaper guards each run it touches.
JOB_HANDLERS: dict[str, Callable[[str], None]] = {
    Job.NODE_EXECUTE: node_execute_job,
    Job.RUN_DISPATCH: _run_job(Job.RUN_DISPATCH, run_dispatch_job),
    Job.PIPELINE_PLAN: _run_job(Job.PIPELINE_PLAN, pipeline_plan_job),
    Job.PIPELINE_STEP: _run_job(Job.PIPELINE_STEP, pipeline_step_job),
    Job.PLAN_FRESH: _run_job(Job.PLAN_FRESH, plan_fresh_job),
    Job.PLAN_APPEND: _run_job(Job.PLAN_APPEND, plan_append_job),
    Job.REAP: reap_job,
    Job.RUNS_ADMIT: runs_admit_job,
    Job.EXTERNAL_DEADLINE: external_deadline_job,
    Job.GAP_ROUND: _run_job(Job.GAP_ROUND, gap_round_job),
}

__all__ = [
    "JOB_HANDLERS",
    "EngineError",
    "Job",
    "executions_reap",
    "node_attempt_finish_external",
    "node_execution_run",
    "pipeline_next_stage",
    "pipeline_start",
    "plan_append",
    "plan_fresh",
    "run_advance",
    "run_cancel",
    "run_fork",
    "run_start",
    "run_wait_finished",
    "task_wait_finished",
]
