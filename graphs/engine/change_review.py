"""Change review: an attempt's change held for a reviewer, and what a reviewer's decision does to the run.

When its project requires change review, an attempt whose change passed its judgment is recorded
``awaiting_review`` (its change kept on its own ref, graphs.engine.changes) instead of landing; its
dependants wait, and the run goes on running. A reviewer then

- approves: the kept change lands on the run's branch as a passed judgment's would, the attempt succeeds
  and the run goes on;
- requests changes: the attempt ends ``changes_requested`` and the node gets a new attempt (cause
  ``review``) whose worktree starts from the reviewed change and whose prompt carries the review;
- comments: the review is recorded, nothing moves.

A landed attempt of its task's latest run is reviewable too: a request for changes on a finished run makes
a follow-up run forked from the node, whose first attempt carries the review the same way. Every decision
is taken in one transaction with its review rows and its audit entry, from a conditional update of the
attempt's status: of two decisions at once, one wins and the other is refused (``NotReviewable``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from graphs.audit import audit_record, audit_run_name
from graphs.domain.check_prompts import CheckBrief
from graphs.domain.judgments import Judgment
from graphs.domain.review_prompts import ReviewBrief, ReviewNote
from graphs.engine.on_fail import attempt_judgment_failed
from graphs.engine.record import Recorder, attempt_finish, attempt_next_create, attempt_passed_recorder
from graphs.engine.recovery import run_fork
from graphs.engine.scheduler import advance_after, run_advance
from graphs.engine.state import Cause, RunStatus, Status, manifest_node, run_locked
from graphs.errors import WorkGraphError
from graphs.logs.events import node_states_emit
from graphs.logs.store import log_append, log_file_close
from graphs.models import AttemptChange, AuditEntry, ChangeReview, ReviewComment, WorkNodeExecution
from graphs.notifications import REVIEW_WAITING, notify
from graphs.runs.facts import node_latest_attempt, task_latest_run_id
from graphs.workspaces.worktrees import MergeConflictError, WorkspaceError, kept_change_land

Decision = ChangeReview.Decision
# How far back a chain of reviews is followed (each attempt amending the one before it).
LINEAGE_MAX = 200
_AUDIT_ACTION = {
    Decision.APPROVE: AuditEntry.Action.CHANGE_REVIEW_APPROVED,
    Decision.REQUEST_CHANGES: AuditEntry.Action.CHANGE_REVIEW_CHANGES_REQUESTED,
    Decision.COMMENT: AuditEntry.Action.CHANGE_REVIEW_COMMENTED,
}


class NotReviewable(WorkGraphError):
    """The attempt is neither awaiting review nor a landed attempt of its task's latest run (or a decision
    on it was taken meanwhile), or the decision cannot be carried out on it."""


@dataclass(frozen=True)
class CommentDraft:
    """A comment to record: a line of ``path`` as the attempt left it, with the lines around it."""

    path: str
    line: int
    body: str
    excerpt: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class ReviewDraft:
    """A review checked and ready to record (graphs.collaboration.change_reviews checks it): its decision,
    body, comments, and the open comments of earlier reviews it resolves."""

    decision: str
    body: str = ""
    comments: tuple[CommentDraft, ...] = ()
    resolve: tuple[int, ...] = ()


def attempt_review_standing(execution: WorkNodeExecution) -> str | None:
    """``"waiting"`` for an attempt awaiting review, ``"landed"`` for the node's latest attempt of its
    task's latest run whose change landed; None for any other attempt (nothing to decide on)."""
    if execution.status == Status.AWAITING_REVIEW:
        return "waiting"
    if execution.status != Status.SUCCEEDED:
        return None
    if task_latest_run_id(execution.run.task_id) != execution.run_id:
        return None
    latest = node_latest_attempt(run=execution.run, node_id=execution.node_id)
    if latest is None or latest.pk != execution.pk:
        return None
    landed = AttemptChange.objects.filter(node_exec=execution).exclude(merge_commit="").exists()
    return "landed" if landed else None


def review_lineage(execution: WorkNodeExecution) -> list[Any]:
    """The ids of the attempts whose reviewed changes ``execution`` amends, nearest first: the attempt its
    review was made on, the one that attempt amended, and so on (across follow-up runs too)."""
    chain: list[Any] = []
    reviewed = ((execution.input_payload or {}).get("review") or {}).get("reviewed_attempt")
    while reviewed and len(chain) < LINEAGE_MAX and reviewed not in chain:
        chain.append(reviewed)
        payload = WorkNodeExecution.objects.filter(pk=reviewed).values_list("input_payload", flat=True).first()
        reviewed = ((payload or {}).get("review") or {}).get("reviewed_attempt")
    return chain


def attempt_review_brief(execution: WorkNodeExecution) -> ReviewBrief | None:
    """The change review an attempt is to amend, as its prompt tells it; None when it amends none."""
    review = (execution.input_payload or {}).get("review")
    return ReviewBrief.from_dict(review) if review else None


def attempt_check_brief(execution: WorkNodeExecution) -> CheckBrief | None:
    """The forge's failing check an attempt of a follow-up run is to fix (graphs.delivery.follow_ups); None
    for any other attempt."""
    check = (execution.input_payload or {}).get("forge_check")
    return CheckBrief.from_dict(check) if check else None


def attempt_review_wait_recorder(
    execution: WorkNodeExecution, *, worker: str, output: dict, judgment: Judgment
) -> Recorder:
    """How an attempt whose change passed its judgment waits for a reviewer: recorded ``awaiting_review``
    with its output and judgment, and announced (``review.waiting``), as a function the caller calls in the
    transaction that advances the run."""

    def record_waiting() -> str | None:
        if not attempt_finish(execution, worker=worker, status=Status.AWAITING_REVIEW, output=output,
                              judgment=judgment):
            return None
        notify(REVIEW_WAITING, run=execution.run_id, node_id=execution.node_id, node_exec_id=str(execution.pk))
        return Status.AWAITING_REVIEW

    return record_waiting


def change_review_decide(*, execution: WorkNodeExecution, author: AbstractBaseUser, draft: ReviewDraft) -> ChangeReview:
    """Record ``draft`` on ``execution`` and carry out its decision (see the module's docstring); return the
    review. Raises ``NotReviewable`` when the attempt is not (or no longer) reviewable so."""
    standing = attempt_review_standing(execution)
    if standing == "waiting" and draft.decision == Decision.APPROVE:
        return _approve(execution, author=author, draft=draft)
    if standing == "waiting" and draft.decision == Decision.REQUEST_CHANGES:
        return _changes_request(execution, author=author, draft=draft)
    if standing == "landed" and draft.decision == Decision.REQUEST_CHANGES:
        return _follow_up(execution, author=author, draft=draft)
    if standing is not None:
        return _record_only(execution, author=author, draft=draft)
    raise NotReviewable(_not_reviewable_reason(execution))


def _not_reviewable_reason(execution: WorkNodeExecution) -> str:
    return (f"attempt {execution.attempt} of {execution.node_id} is {execution.status}: only an attempt awaiting"
            " review, or the landed latest attempt of a node in its task's latest run, can be reviewed")


def _approve(execution: WorkNodeExecution, *, author: AbstractBaseUser, draft: ReviewDraft) -> ChangeReview:
    """Take the attempt from its reviewer's wait (the one decision that does), then land its kept change and
    record it passed — or failed, when what landed meanwhile conflicts with it — and advance the run."""
    with run_locked(execution.run_id) as run:
        _running_check(run, execution)
        # The attempt beats again while it lands, so the reaper never takes the landing for lost work.
        claimed = WorkNodeExecution.objects.filter(pk=execution.pk, status=Status.AWAITING_REVIEW).update(
            status=Status.RUNNING, heartbeat_at=timezone.now())
        if claimed != 1:
            raise NotReviewable(f"a decision on attempt {execution.attempt} of {execution.node_id} was taken meanwhile")
        review = _review_record(execution, author=author, draft=draft)
        node = manifest_node(run.graph_manifest, execution.node_id) or {}
    execution.refresh_from_db()
    log_append(execution=execution, event="change_review", decision=draft.decision, review=review.pk,
               by=author.get_username())
    stored = dict(execution.judgment_result or {})
    judgment = Judgment(ok=bool(stored.pop("ok", True)), kind=str(stored.pop("kind", "")),
                        issues=list(stored.pop("issues", [])), detail=stored)
    try:
        change = kept_change_land(execution)
    except MergeConflictError as conflict:
        log_append(execution=execution, event="merge_conflict", files=conflict.files)
        failed = Judgment(ok=False, kind="merge_conflict", issues=[str(conflict)], detail={"files": conflict.files})
        attempt_judgment_failed(execution, worker=execution.worker, node=node, judgment=failed,
                                output=execution.output_payload)
        _decided(execution)
        return review
    except WorkspaceError as error:
        attempt_finish(execution, worker=execution.worker, status=Status.FAILED, error=f"workspace error: {error}")
        _decided(execution)
        return review
    log_append(execution=execution, event="change_landed", commit=change.result_commit, merge=change.merge_commit,
               files=len(change.files))
    record = attempt_passed_recorder(execution, worker=execution.worker, node=node,
                                     output=execution.output_payload, judgment=judgment)
    advance_after(run_id=execution.run_id, node_id=execution.node_id, record=record,
                  close_log=lambda: log_file_close(execution=execution))
    return review


def _decided(execution: WorkNodeExecution) -> None:
    log_file_close(execution=execution)
    advance_after(run_id=execution.run_id, node_id=execution.node_id)


def _changes_request(execution: WorkNodeExecution, *, author: AbstractBaseUser, draft: ReviewDraft) -> ChangeReview:
    """End the attempt ``changes_requested`` and give its node the next attempt, which amends its change."""
    with run_locked(execution.run_id) as run:
        _running_check(run, execution)
        moved = WorkNodeExecution.objects.filter(pk=execution.pk, status=Status.AWAITING_REVIEW).update(
            status=Status.CHANGES_REQUESTED)
        if moved != 1:
            raise NotReviewable(f"a decision on attempt {execution.attempt} of {execution.node_id} was taken meanwhile")
        execution.status = Status.CHANGES_REQUESTED
        node_states_emit(run_id=run.pk, rows=[execution])
        review = _review_record(execution, author=author, draft=draft)
        following = attempt_next_create(run, execution.node_id, cause=Cause.REVIEW,
                                        review=_carried(execution, review=review, author=author))
        ChangeReview.objects.filter(pk=review.pk).update(next_attempt=following)
        review.next_attempt = following
        log_append(execution=execution, event="change_review", decision=draft.decision, review=review.pk,
                   by=author.get_username(), next_attempt=str(following.pk))
        log_file_close(execution=execution)
    run_advance(run_id=execution.run_id)
    return review


def _follow_up(execution: WorkNodeExecution, *, author: AbstractBaseUser, draft: ReviewDraft) -> ChangeReview:
    """A request for changes on a landed attempt of a finished run: a follow-up run forked from its node,
    whose first attempt amends the change (waiting for approval first where the project requires it)."""
    run = execution.run
    if not run.is_finished():
        raise NotReviewable(f"run {str(run.pk)[:8]} is {run.status}: request changes on its landed attempts once"
                            " it has ended, or cancel it first")
    if not run.is_forkable():
        raise NotReviewable(f"run {str(run.pk)[:8]} is {run.state_label()}: a run that cannot be forked takes no"
                            " follow-up run")
    with transaction.atomic():
        # The attempt's row, locked, orders two requests at once: the second finds the run no longer latest.
        locked = WorkNodeExecution.objects.select_for_update(no_key=True).filter(pk=execution.pk)
        locked.values_list("pk", flat=True).get()
        if attempt_review_standing(execution) != "landed":
            raise NotReviewable(f"run {str(run.pk)[:8]} is no longer its task's latest run")
        review = _review_record(execution, author=author, draft=draft)
        fork = run_fork(run=run, node_id=execution.node_id, by=author,
                        awaiting_approval=run.task.project.require_plan_approval,
                        node_input={"review": _carried(execution, review=review, author=author)})
        first = fork.executions.get(node_id=execution.node_id)
        ChangeReview.objects.filter(pk=review.pk).update(next_attempt=first)
        review.next_attempt = first
    return review


def _record_only(execution: WorkNodeExecution, *, author: AbstractBaseUser, draft: ReviewDraft) -> ChangeReview:
    """A comment (or an approval of a change already landed): recorded, nothing moves. The attempt's row is
    locked, so a decision taken at the same time comes before or after it, whole."""
    with transaction.atomic():
        status = WorkNodeExecution.objects.select_for_update(no_key=True).filter(pk=execution.pk).values_list(
            "status", flat=True).get()
        if status != execution.status:
            raise NotReviewable(f"a decision on attempt {execution.attempt} of {execution.node_id} was taken meanwhile")
        return _review_record(execution, author=author, draft=draft)


def _running_check(run, execution: WorkNodeExecution) -> None:
    if run.status != RunStatus.RUNNING or run.cancel_requested_at is not None:
        state = "stopping" if run.cancel_requested_at is not None else run.status
        raise NotReviewable(f"run {str(run.pk)[:8]} is {state}: attempt {execution.attempt} of {execution.node_id}"
                            " can no longer be decided on")


def _review_record(execution: WorkNodeExecution, *, author: AbstractBaseUser, draft: ReviewDraft) -> ChangeReview:
    """The review's rows, the comments it resolves, and its audit entry (call inside the decision's transaction)."""
    result = AttemptChange.objects.filter(node_exec=execution).values_list("result_commit", flat=True).first() or ""
    review = ChangeReview.objects.create(attempt=execution, decision=draft.decision, body=draft.body, author=author,
                                         reviewed_commit=result)
    ReviewComment.objects.bulk_create([
        ReviewComment(review=review, path=comment.path, line=comment.line, body=comment.body, author=author,
                      excerpt=[list(pair) for pair in comment.excerpt])
        for comment in draft.comments
    ])
    if draft.resolve:
        ReviewComment.objects.filter(pk__in=draft.resolve, resolved=False).update(
            resolved=True, resolved_in_attempt=execution, resolved_by=author, resolved_at=timezone.now())
    run = execution.run
    audit_record(
        actor=author, action=_AUDIT_ACTION[draft.decision], object_type="attempt", object_id=execution.pk,
        project=run.task.project,
        after={"decision": draft.decision, "comments": len(draft.comments), "resolved": list(draft.resolve)},
        summary=f"{Decision(draft.decision).label} attempt {execution.attempt} of {execution.node_id} in"
                f" {audit_run_name(run)}",
    )
    return review


def _carried(execution: WorkNodeExecution, *, review: ChangeReview, author: AbstractBaseUser) -> dict[str, Any]:
    """What the attempt amending ``execution``'s change carries: the review for its prompt, and the commits
    its worktree starts from (graphs.workspaces.worktrees.amended_change)."""
    change = AttemptChange.objects.filter(node_exec=execution).values("base_commit", "result_commit").first() or {}
    earlier = [execution.pk, *review_lineage(execution)]
    still_open = ReviewComment.objects.filter(review__attempt_id__in=earlier, resolved=False).exclude(review=review)
    brief = ReviewBrief(
        reviewer=author.get_username(), body=review.body,
        comments=_notes(review.comments.order_by("path", "line", "pk")),
        still_open=_notes(still_open.order_by("review__created_at", "path", "line", "pk")),
    )
    return {"review_id": review.pk, "reviewed_attempt": str(execution.pk),
            "base_commit": change.get("base_commit", ""), "result_commit": change.get("result_commit", ""),
            **brief.as_dict()}


def _notes(comments: Sequence[ReviewComment]) -> tuple[ReviewNote, ...]:
    return tuple(ReviewNote(path=comment.path, line=comment.line, body=comment.body,
                            excerpt=tuple((int(number), str(text)) for number, text in comment.excerpt or ()))
                 for comment in comments)
