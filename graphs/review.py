"""Plan review: a reviewer approves or rejects a fresh plan before it runs, when the project asks."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from graphs.engine import run_start
from graphs.errors import InvalidTransitionError
from graphs.models import WorkGraphRun
from graphs.run_status import run_status_set

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
    return run


def _decide(*, run: WorkGraphRun, reviewer: AbstractBaseUser, comment: str, decision: str, status: str) -> None:
    error = f"plan rejected by {reviewer}: {comment}" if decision == "rejected" else ""
    moved = run_status_set(
        run=run, status=status, error=error, allowed_from=[Status.AWAITING_APPROVAL], review_decision=decision,
        reviewed_by=reviewer, review_comment=comment, reviewed_at=timezone.now(),
    )
    run.refresh_from_db()
    if not moved:
        raise InvalidTransitionError(entity="run", current=run.status, requested=status)
