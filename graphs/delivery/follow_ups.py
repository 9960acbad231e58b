"""A follow-up run started for what a forge said of a delivered pull request: a check that failed on its
head, or a review that requested changes.

Either forks the delivered run from the node whose change landed last (the coder's, in a pipeline), as the
console's own request for changes on a landed attempt does (graphs.engine.change_review): that node's attempt
amends the delivered change (its worktree starts from it) and carries the failure — a ``CheckBrief`` of the
check's name, its summary and the end of its log, or a ``ReviewBrief`` of the review's body and its line
comments with the lines around them (graphs.domain.review_prompts) — and the nodes after it run again. The
follow-up run's ``ForgeFeedback`` row names the branch it updates, so its delivery pushes there and the pull
request updates (graphs.delivery.deliveries).

Each failure is acted on once: its row is keyed by the branch, its kind and what tells it apart (a check's
name and commit, a review's id), and the first to insert it acts. At most ``WORKGRAPH_FORGE_FIX_ATTEMPTS``
follow-up runs are started for failing checks of one branch; past that the row says a person is needed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from graphs.delivery.forge_clients.base import Check, Review, ReviewComment
from graphs.domain.check_prompts import CheckBrief, log_tail
from graphs.domain.review_prompts import ReviewBrief, ReviewNote, line_excerpt
from graphs.engine.recovery import run_fork
from graphs.errors import WorkGraphError
from graphs.models import PLANNING_NODE_ID, AttemptChange, ForgeFeedback, RunDelivery, RunWorkspace, WorkGraphRun
from graphs.runs.facts import node_owners, task_latest_run
from graphs.workspaces.commit_reads import commit_file_lines

logger = logging.getLogger(__name__)

Kind, Outcome = ForgeFeedback.Kind, ForgeFeedback.Outcome
FORGE_NAMES = {"github": "GitHub", "gitlab": "GitLab", "gitea": "Gitea"}
# The org node whose change a follow-up run amends, where a pipeline has one.
CODER = "coder"
# A review's comments carried at most, and how much of one review's body.
REVIEW_COMMENTS_MAX = 100
REVIEW_BODY_MAX_CHARS = 20_000


def check_failed_follow_up(delivery: RunDelivery, check: Check, *, forge: str,
                           log_read: Callable[[Check], str] | None = None) -> ForgeFeedback | None:
    """Act once on ``check``, failed on the delivered head: a follow-up run, or the word that a person is
    needed once the branch's fix attempts are spent. None when it was acted on before. ``log_read`` gives
    the log the forge serves apart from the check; it is asked only when a follow-up run starts."""
    row = _heard(delivery, kind=Kind.CHECK, key=f"{check.name}@{delivery.head_commit}"[:300], name=check.name,
                 url=check.url)
    if row is None:
        return None
    started = ForgeFeedback.objects.filter(project=row.project, remote_branch=row.remote_branch, kind=Kind.CHECK,
                                           outcome=Outcome.STARTED).count()
    cap = settings.WORKGRAPH_FORGE_FIX_ATTEMPTS
    if started >= cap:
        return _settled(row, Outcome.PERSON_NEEDED,
                        f"The check \u201c{check.name}\u201d failed again on {_pull(delivery)}, after {started}"
                        f" follow-up runs tried to fix its checks (WORKGRAPH_FORGE_FIX_ATTEMPTS is {cap}):"
                        " a person is needed.")
    brief = CheckBrief(name=check.name, conclusion=check.conclusion or "failure",
                       forge=FORGE_NAMES.get(forge, forge), url=check.url, pull_request=_pull(delivery),
                       log=_check_text(check, log_read, settings.WORKGRAPH_FORGE_CHECK_LOG_CHARS))
    return _started(row, delivery, key="forge_check", brief=brief.as_dict(),
                    words=f"the check \u201c{check.name}\u201d failed on {_pull(delivery)}")


def _check_text(check: Check, log_read: Callable[[Check], str] | None, limit: int) -> str:
    """The check's summary, then the end of the log the forge serves apart, together within ``limit``
    characters: the summary whole where it leaves the log half of them, the log's end (where it fails)."""
    summary = log_tail(check.summary, limit)
    log = log_read(check) if log_read else ""
    if not log:
        return summary
    log = log_tail(log, max(limit - len(summary), limit // 2))
    room = limit - len(log)
    summary = log_tail(summary, room) if room > 0 else ""
    return f"{summary}\n\n{log}" if summary else log


def review_follow_up(delivery: RunDelivery, review: Review, comments: Sequence[ReviewComment], *,
                     forge: str) -> ForgeFeedback | None:
    """Act once on ``review``, which requested changes: a follow-up run carrying it and its line comments.
    None when it was acted on before."""
    own = [comment for comment in comments if comment.review_id in (None, review.id) and comment.line]
    # A reviewer's state on GitLab outlives the review: a request is told apart by its comments too.
    key = review.id if review.commit else f"{review.id}:{','.join(sorted(comment.id for comment in own))}"
    row = _heard(delivery, kind=Kind.REVIEW, key=key[:300], name=review.author, url=review.url)
    if row is None:
        return None
    repository = RunWorkspace.objects.filter(run_id=delivery.run_id).values_list("repository", flat=True).first()
    lines_of: dict[str, list[str] | None] = {}
    notes = []
    for comment in own[:REVIEW_COMMENTS_MAX]:
        if comment.path not in lines_of:
            lines_of[comment.path] = commit_file_lines(repository or "", delivery.head_commit, comment.path)
        excerpt = line_excerpt(lines_of[comment.path] or [], int(comment.line or 0))
        notes.append(ReviewNote(path=comment.path, line=int(comment.line or 0), body=comment.body, excerpt=excerpt))
    who = f"{review.author or 'A reviewer'} on {FORGE_NAMES.get(forge, forge)}"
    brief = ReviewBrief(reviewer=who, body=review.body[:REVIEW_BODY_MAX_CHARS], comments=tuple(notes))
    return _started(row, delivery, key="review", brief=brief.as_dict(),
                    words=f"{who} requested changes on {_pull(delivery)}")


def _heard(delivery: RunDelivery, *, kind: str, key: str, name: str, url: str) -> ForgeFeedback | None:
    """The failure's row, made now; None when another hearing of it made it first."""
    try:
        with transaction.atomic():
            return ForgeFeedback.objects.create(
                project_id=delivery.run.task.project_id, remote_branch=delivery.remote_branch,
                pull_request_number=delivery.pull_request_number, kind=kind, key=key, name=name[:300],
                head_commit=delivery.head_commit, url=url[:1000], source_run_id=delivery.run_id,
                outcome=Outcome.NOT_STARTED)
    except IntegrityError:
        return None


def _started(row: ForgeFeedback, delivery: RunDelivery, *, key: str, brief: dict[str, Any],
             words: str) -> ForgeFeedback:
    """Fork the delivered run from its last changed node, that node's attempt carrying ``brief``."""
    run = WorkGraphRun.objects.select_related("task__project").get(pk=delivery.run_id)
    latest = task_latest_run(run.task_id)
    if latest is not None and latest.pk != run.pk:
        return _settled(row, Outcome.NOT_STARTED, f"{words.capitalize()}, but the task has a later run"
                                                  f" ({str(latest.pk)[:8]}): no follow-up run was started.")
    change = _amended(run)
    if change is None:
        return _settled(row, Outcome.NOT_STARTED, f"{words.capitalize()}, but the run landed no change to amend.")
    carried = {**brief, "reviewed_attempt": str(change.node_exec_id), "base_commit": change.base_commit,
               "result_commit": change.result_commit}
    try:
        fork = run_fork(run=run, node_id=change.node_exec.node_id, by=None,
                        awaiting_approval=run.task.project.require_plan_approval, node_input={key: carried})
    except WorkGraphError as error:
        logger.warning("no follow-up run of %s for %s: %s", run.pk, words, error)
        return _settled(row, Outcome.NOT_STARTED, f"{words.capitalize()}, but no follow-up run could start: {error}")
    ForgeFeedback.objects.filter(pk=row.pk).update(follow_up_run=fork)
    row.follow_up_run = fork
    return _settled(row, Outcome.STARTED, f"{words.capitalize()}: follow-up run {str(fork.pk)[:8]} started from"
                                          f" {change.node_exec.node_id} to update {delivery.remote_branch}.")


def _amended(run: WorkGraphRun) -> AttemptChange | None:
    """The landed change a follow-up run amends: the coder's latest (a pipeline's validator lands its test
    scripts after it), else the run's latest."""
    changes = list(AttemptChange.objects.filter(run=run).exclude(merge_commit="").select_related("node_exec")
                   .order_by("-node_exec__finished_at"))
    if not changes:
        return None
    planning = (run.executions.filter(node_id__startswith=PLANNING_NODE_ID).order_by("created_at", "attempt")
                .values_list("status", "subagent_type", "output_payload__new_node_ids"))
    owners = node_owners(planning, run.graph_manifest)
    coded = [change for change in changes if owners.get(change.node_exec.node_id) == CODER]
    return (coded or changes)[0]


def _settled(row: ForgeFeedback, outcome: str, note: str) -> ForgeFeedback:
    ForgeFeedback.objects.filter(pk=row.pk).update(outcome=outcome, note=note)
    row.outcome, row.note = outcome, note
    return row


def _pull(delivery: RunDelivery) -> str:
    if delivery.pull_request_number is not None:
        return f"pull request #{delivery.pull_request_number} ({delivery.remote_branch})"
    return f"the branch {delivery.remote_branch}"
