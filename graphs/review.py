"""Plan review: a reviewer approves or rejects a fresh plan before it runs, when the project asks."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from graphs.engine import run_start, task_outcome_record
from graphs.errors import InvalidTransitionError
from graphs.events import run_event_emit
from graphs.models import WorkGraphRun

Status = WorkGraphRun.Status


def run_plan_approve(*, run: WorkGraphRun, reviewer: AbstractBaseUser, comment: str = "") -> WorkGraphRun:
    """Approve a plan awaiting approval; a pipeline run then starts executing at once."""
    _decide(run=run, reviewer=reviewer, comment=comment, decision="approved", status=Status.READY)
    if run.pipeline:
        run_start(run=run)
        run.refresh_from_db()
    return run


def run_plan_reject(*, run: WorkGraphRun, reviewer: AbstractBaseUser, comment: str) -> WorkGraphRun:
    """Reject a plan awaiting approval: the run fails with the reviewer's comment as its reason."""
    _decide(run=run, reviewer=reviewer, comment=comment, decision="rejected", status=Status.FAILED)
    task_outcome_record(run=run, error=run.error)
    return run


def _decide(*, run: WorkGraphRun, reviewer: AbstractBaseUser, comment: str, decision: str, status: str) -> None:
    now = timezone.now()
    error = f"plan rejected by {reviewer}: {comment}" if decision == "rejected" else ""
    changed = WorkGraphRun.objects.filter(pk=run.pk, status=Status.AWAITING_APPROVAL).update(
        status=status, review_decision=decision, reviewed_by=reviewer, review_comment=comment, reviewed_at=now,
        error=error, finished_at=now if status == Status.FAILED else None,
    )
    if changed != 1:
        run.refresh_from_db()
        raise InvalidTransitionError(entity="run", current=run.status, requested=status)
    run.refresh_from_db()
    run_event_emit(run_id=run.pk, event="run_status", status=run.status, error=error)
