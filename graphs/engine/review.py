"""Plan review: when the project asks, a reviewer approves or rejects what a run waits for — its fresh
plan before it runs, or the nodes an append added before they run (``graphs.planning.append_review``).

The decision is taken under the run's lock, where what the run waits for is read: an append that
lands meanwhile can never have a plan's decision taken for it.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from graphs.audit import audit_record, audit_run_name
from graphs.engine import run_start
from graphs.engine.scheduler import run_append_start
from graphs.errors import InvalidTransitionError, WorkGraphError
from graphs.models import AppendReview, AuditEntry, WorkGraphRun, WorkNodeExecution
from graphs.planning.append_review import append_reviews_waiting, appends_label
from graphs.runs.status import run_status_set

Status = WorkGraphRun.Status
# What a rejection without a comment is told, on every page and in the API.
REASON_NEEDED = "Say why it is rejected: a rejection needs a comment, its reason."


def run_plan_approve(*, run: WorkGraphRun, reviewer: AbstractBaseUser, comment: str = "") -> WorkGraphRun:
    """Approve what the run waits for. Its plan: a pipeline run then starts executing at once. The
    appends waiting: their nodes start, or the run is ready again when it had not started."""
    with transaction.atomic():
        waiting = _appends_waiting_locked(run)
        if waiting:
            _appends_approve(run=run, waiting=waiting, reviewer=reviewer, comment=comment)
        else:
            _decide(run=run, reviewer=reviewer, comment=comment, decision="approved", status=Status.READY)
    # A pipeline run, or a fork waiting for its approval (an edited fork, a change review's follow-up run),
    # goes on at once.
    if not waiting and (run.pipeline or run.forked_from_id is not None):
        run_start(run=run)
    run.refresh_from_db()
    return run


def run_plan_reject(*, run: WorkGraphRun, reviewer: AbstractBaseUser, comment: str) -> WorkGraphRun:
    """Reject what the run waits for, its plan or the appends waiting: the run ends ``rejected`` with the
    reviewer's comment as its reason (``review_decision`` ``rejected`` for a plan, ``error_code``
    ``append_rejected`` for an append). A rejection without a reason is refused before anything moves."""
    if not comment.strip():
        raise WorkGraphError(REASON_NEEDED)
    with transaction.atomic():
        waiting = _appends_waiting_locked(run)
        if waiting:
            _appends_reject(run=run, waiting=waiting, reviewer=reviewer, comment=comment)
        else:
            _decide(run=run, reviewer=reviewer, comment=comment, decision="rejected", status=Status.REJECTED)
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
    approved = decision == "approved"
    what = "a fork's edited node" if run.fork_edit else "the plan"
    _audit(run=run, reviewer=reviewer, comment=comment,
           action=AuditEntry.Action.PLAN_APPROVED if approved else AuditEntry.Action.PLAN_REJECTED,
           summary=f"{'Approved' if approved else 'Rejected'} {what} of {audit_run_name(run)}")


def _appends_waiting_locked(run: WorkGraphRun) -> list[AppendReview]:
    """Lock the run and return its appends waiting for a reviewer (none: the run waits for its plan)."""
    WorkGraphRun.objects.select_for_update(no_key=True).filter(pk=run.pk).values_list("pk", flat=True).get()
    return append_reviews_waiting(run.pk)


def _appends_approve(
    *, run: WorkGraphRun, waiting: list[AppendReview], reviewer: AbstractBaseUser, comment: str
) -> None:
    # The run goes back to what it was when the first of them began to wait.
    resume = waiting[0].resume_status
    _appends_check(run=run, requested=resume)
    unrecorded = [review for review in waiting if review.call_status != WorkNodeExecution.Status.SUCCEEDED]
    if unrecorded:
        # Its planning call is still being recorded (a moment), or it broke: a reviewer may reject it.
        raise WorkGraphError(f"{appends_label(unrecorded)} cannot be approved while its planning call is"
                             f" {unrecorded[0].call_status}")
    _appends_mark(waiting, reviewer=reviewer, comment=comment, status=AppendReview.Status.APPROVED)
    _audit(run=run, reviewer=reviewer, comment=comment, action=AuditEntry.Action.APPEND_APPROVED,
           summary=f"Approved {appends_label(waiting)} of {audit_run_name(run)}")
    if resume == Status.RUNNING:
        run_append_start(run=run)
    else:
        run_status_set(run=run, status=Status.READY, allowed_from=[Status.AWAITING_APPROVAL])


def _appends_reject(
    *, run: WorkGraphRun, waiting: list[AppendReview], reviewer: AbstractBaseUser, comment: str
) -> None:
    _appends_check(run=run, requested=Status.REJECTED)
    _appends_mark(waiting, reviewer=reviewer, comment=comment, status=AppendReview.Status.REJECTED)
    _audit(run=run, reviewer=reviewer, comment=comment, action=AuditEntry.Action.APPEND_REJECTED,
           summary=f"Rejected {appends_label(waiting)} of {audit_run_name(run)}")
    run_status_set(run=run, status=Status.REJECTED, error=f"{appends_label(waiting)} rejected by {reviewer}: {comment}",
                   error_code=WorkGraphRun.StopCode.APPEND_REJECTED, allowed_from=[Status.AWAITING_APPROVAL])


def _audit(*, run: WorkGraphRun, reviewer: AbstractBaseUser, comment: str, action: str, summary: str) -> None:
    audit_record(actor=reviewer, action=action, object_type="run", object_id=run.pk, project=run.task.project,
                 summary=f"{summary}: {comment}" if comment.strip() else summary)


def _appends_check(*, run: WorkGraphRun, requested: str) -> None:
    """Refuse a decision on appends of a run that no longer waits for one (cancelled while they waited)."""
    run.refresh_from_db(fields=["status", "review_decision", "error_code", "cancel_requested_at"])
    if run.status != Status.AWAITING_APPROVAL or run.cancel_requested_at is not None:
        current = "cancelling" if run.cancel_requested_at is not None else run.state_label()
        raise InvalidTransitionError(entity="run", current=current, requested=requested)


def _appends_mark(waiting: list[AppendReview], *, reviewer: AbstractBaseUser, comment: str, status: str) -> None:
    AppendReview.objects.filter(pk__in=[review.pk for review in waiting], status=AppendReview.Status.PENDING).update(
        status=status, reviewed_by=reviewer, review_comment=comment, reviewed_at=timezone.now()
    )
