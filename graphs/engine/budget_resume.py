"""A run its budget stopped, resumed with a higher budget where it stopped.

A budget stop (``graphs.runs.budgets``) cancels the run's waiting attempts and stops its running agents;
the run ends ``failed`` with ``budget_exceeded``. A lead may raise the budget above what the run spent:
the run goes back to ``running`` with the new budget, every node whose latest attempt the stop ended
(cancelled, or blocked behind one) gets a fresh pending attempt — one that had none yet, its first —
and the scheduler goes on from there.
What succeeded stays done; a node that failed on its own stays failed.

Everything is checked under the run's lock before anything is written: a refusal changes nothing.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Sum

from graphs.audit import audit_record, audit_run_name
from graphs.domain import manifest_graph
from graphs.engine.record import attempt_next_create
from graphs.engine.scheduler import run_advance
from graphs.engine.state import Cause, RunStatus, Status, latest_rows, run_locked
from graphs.errors import WorkGraphError
from graphs.models import AuditEntry, WorkGraphRun
from graphs.projects.roles import ACTIONS, project_role
from graphs.runs.status import run_status_set

# The latest attempts a budget stop leaves behind: those it cancelled, and those blocked behind them.
STOPPED = (Status.CANCELLED, Status.BLOCKED)


class BudgetResumeRefused(WorkGraphError):
    """The run cannot be resumed so: ``code`` says why in a stable word."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


def run_budget_raise_resume(*, run_id: Any, user: AbstractBaseUser, max_cost_usd: Decimal) -> WorkGraphRun:
    """Give the run stopped by its budget the budget ``max_cost_usd`` and resume it where it stopped.
    Only a lead of its project may; the new budget must be above what the run's agent calls cost.
    Return the run, running again."""
    with run_locked(run_id) as run:
        if project_role(user, run.task.project_id) not in ACTIONS["raise_budget"]:
            raise BudgetResumeRefused("only a lead of the project may raise a run's budget", code="not_lead")
        if run.status != RunStatus.FAILED or run.error_code != WorkGraphRun.StopCode.BUDGET_EXCEEDED:
            raise BudgetResumeRefused(f"only a run its budget stopped can be resumed; this one is {run.status}",
                                      code="not_budget_stopped")
        if run.task.runs.filter(created_at__gt=run.created_at).exists():
            raise BudgetResumeRefused("the task has a newer run: resume that one, or start another",
                                      code="not_latest_run")
        spent = run.executions.aggregate(total=Sum("cost_usd"))["total"] or Decimal(0)
        if max_cost_usd <= spent:
            raise BudgetResumeRefused(
                f"the new budget (${max_cost_usd:.4f}) must be above what the run spent (${spent:.4f})",
                code="budget_too_low")
        latest = latest_rows(run)
        node_ids = manifest_graph.manifest_node_ids(run.graph_manifest)
        for node_id in node_ids:
            row = latest.get(node_id)
            if row is None:  # stopped before its first attempt was made
                attempt_next_create(run, node_id, cause=Cause.INITIAL)
            elif row["status"] in STOPPED:
                attempt_next_create(run, node_id, cause=Cause.RETRY_SELF)
        audit_record(actor=user, action=AuditEntry.Action.RUN_BUDGET_RAISED, object_type="run", object_id=run.pk,
                     project=run.task.project, before={"max_cost_usd": run.max_cost_usd},
                     after={"max_cost_usd": max_cost_usd},
                     summary=f"Raised the budget of {audit_run_name(run)} to ${max_cost_usd} and resumed it")
        run_status_set(run=run, status=RunStatus.RUNNING, allowed_from=[RunStatus.FAILED], error="",
                       error_code="", max_cost_usd=max_cost_usd, cancel_requested_at=None, finished_at=None)
    run_advance(run_id=run_id)
    run.refresh_from_db()
    return run
