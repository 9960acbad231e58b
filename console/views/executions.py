"""An attempt's page (its trace, log, judgment, failure, change and its review), the review form it posts,
and the JSON the run graph's side panel shows for it."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from console.forms.reviews import review_rows_with_problems, review_submission_read
from console.permissions import can, execution_for_member, require
from console.views.common import diff_shown, pretty_json
from graphs.collaboration.change_reviews import ReviewInvalid, change_review_submit
from graphs.domain.attempt_words import attempt_cause_text, attempt_tool_failures
from graphs.domain.judgment_words import failure_reading, judgment_reading
from graphs.engine.change_review import NotReviewable
from graphs.logs.lines import log_line_summary
from graphs.logs.store import log_read
from graphs.models import AttemptChange, ChangeReview, ExecutionLogFile, WorkNodeExecution
from graphs.reads.change_reviews import change_review_page, review_inline
from graphs.reads.executions import execution_detail as execution_detail_read
from graphs.reads.node_trace import attempt_trace_header
from graphs.workspaces.worktrees import repository_of

LOG_LINES_ON_PAGE = 2000


@login_required
def execution_detail(request: HttpRequest, node_exec_id) -> HttpResponse:
    execution, role = execution_for_member(request.user, node_exec_id)
    if execution.is_planning:
        return redirect(f"/runs/{execution.run_id}/planning/#call-{execution.pk}")
    return render(request, "console/execution_detail.html", _execution_context(execution, role))


@login_required
@require_POST
def execution_review(request: HttpRequest, node_exec_id) -> HttpResponse:
    """The node page's review form: carried out, back to the page's review; refused, the page again with
    what was typed and every problem named."""
    execution, role = execution_for_member(request.user, node_exec_id)
    require(role, "review_change")
    submission = review_submission_read(request.POST)
    try:
        review = change_review_submit(execution=execution, author=request.user, decision=submission.decision,
                                      body=submission.body, comments=submission.comments, resolve=submission.resolve)
    except (NotReviewable, ReviewInvalid) as refused:
        problems = refused.problems if isinstance(refused, ReviewInvalid) else [("", str(refused))]
        context = {**_execution_context(execution, role), "review_submission": submission,
                   "review_problems": problems, "review_rows": review_rows_with_problems(submission.rows, problems)}
        return render(request, "console/execution_detail.html", context,
                      status=400 if isinstance(refused, ReviewInvalid) else 409)
    messages.success(request, _review_done_words(review))
    return redirect(reverse("execution_detail", kwargs={"node_exec_id": execution.pk}) + "#review")


def _review_done_words(review: ChangeReview) -> str:
    """What the page says once a review is carried out."""
    if review.decision == ChangeReview.Decision.APPROVE:
        return "Approved. A change awaiting review lands on the run's branch, and the run goes on."
    if review.decision == ChangeReview.Decision.COMMENT:
        return "Your comments are recorded."
    following = review.next_attempt
    if following is not None and following.run_id != review.attempt.run_id:
        return "Changes requested: a follow-up run amends the change, from this node on."
    return "Changes requested: the node's next attempt amends the change."


def _execution_context(execution: WorkNodeExecution, role: str) -> dict[str, Any]:
    attempts = list(execution.run.executions.filter(node_id=execution.node_id).order_by("attempt"))
    log_file = ExecutionLogFile.objects.filter(node_exec=execution).first()
    lines = log_read(log_file=log_file, limit=LOG_LINES_ON_PAGE) if log_file else []
    change = AttemptChange.objects.filter(node_exec=execution).select_related("run__workspace").first()
    review = change_review_page(execution)
    return {
        "execution": execution,
        "run": execution.run,
        "task": execution.run.task,
        "attempts": attempts,
        "latest_attempt": attempts[-1].attempt if attempts else execution.attempt,
        "log_file": log_file,
        "lines": [(line, log_line_summary(line)) for line in lines],
        "trace_lines": lines,
        "trace_header": attempt_trace_header(execution=execution),
        "cause_text": attempt_cause_text(execution.cause, execution.cause_node_id),
        "last_seq": lines[-1]["seq"] if lines else 0,
        # Lines may still come: the log is being written (or not begun), or it is longer than a page.
        "follow": log_file is None or log_file.status == ExecutionLogFile.Status.OPEN
        or len(lines) >= LOG_LINES_ON_PAGE,
        "input_json": pretty_json(execution.input_payload),
        "judgment_json": pretty_json(execution.judgment_result) if execution.judgment_result else "",
        "judgment": judgment_reading(execution.judgment_result),
        "failure": failure_reading(execution.failure),
        "tool_failures": attempt_tool_failures(count=execution.tool_failures, first=execution.tool_failure_first),
        "change": change,
        "diff_shown": diff_shown(change),
        "isolated": change is not None or repository_of(execution.run.task.project.target_folder) is not None,
        "review": review,
        "review_inline": review_inline(execution, review) if change is not None and change.diff else [],
        "can_review_change": can(role, "review_change") and bool(review.decisions),
        "review_open": [comment for view in review.reviews for comment in view.comments if not comment.resolved]
        + review.open_carried,
    }


@login_required
def execution_json(request: HttpRequest, node_exec_id) -> JsonResponse:
    """What the run graph's side panel shows for one attempt: prompt, output, judgment, every attempt."""
    execution, _ = execution_for_member(request.user, node_exec_id)
    return JsonResponse(execution_detail_read(execution))
