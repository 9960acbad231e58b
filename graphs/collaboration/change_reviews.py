"""A person's review of an attempt's change, checked whole before anything moves: its decision, its body,
each comment's file and line against the change as the attempt left it, and the open comments it
resolves. A review that passes is recorded and carried out by graphs.engine.change_review.

How a comment is resolved: it stays open on every later attempt of its node (the one that amends the
change, a retry of that one, a follow-up run's) until a reviewer resolves it, naming it in ``resolve``
in a later review of the node; the comment then records the attempt that review read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from graphs.domain.review_prompts import line_excerpt
from graphs.engine.change_review import (
    CommentDraft,
    NotReviewable,
    ReviewDraft,
    attempt_review_standing,
    change_review_decide,
    review_lineage,
)
from graphs.errors import WorkGraphError
from graphs.models import AttemptChange, ChangeReview, ReviewComment, RunWorkspace, WorkNodeExecution
from graphs.models.reviews import REVIEW_BODY_MAX_CHARS, REVIEW_COMMENTS_MAX
from graphs.workspaces.commit_reads import commit_file_lines

Decision = ChangeReview.Decision


class ReviewInvalid(WorkGraphError):
    """A review refused before anything moved; ``problems`` names each wrong field (``comments[2].line``)
    with what is wrong with it, all of them at once."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))
        self.problems = problems


@dataclass(frozen=True)
class _Change:
    """The reviewed attempt's change: its files and where their text as the attempt left it is read."""

    repository: str
    result_commit: str
    paths: frozenset[str]


def change_review_submit(
    *, execution: WorkNodeExecution, author: AbstractBaseUser, decision: str, body: str = "",
    comments: Sequence[Mapping[str, Any]] = (), resolve: Sequence[Any] = (),
) -> ChangeReview:
    """Check a review of ``execution`` and carry it out; return the review.

    Raises ``NotReviewable`` for an attempt nothing can be decided on (or decided on meanwhile), and
    ``ReviewInvalid`` naming every wrong field. Who may review is the caller's to check (the role table's
    ``review_change``).
    """
    if attempt_review_standing(execution) is None:
        raise NotReviewable(f"attempt {execution.attempt} of {execution.node_id} is {execution.status}: only an"
                            " attempt awaiting review, or the landed latest attempt of a node in its task's latest"
                            " run, can be reviewed")
    problems: list[tuple[str, str]] = []
    if decision not in Decision.values:
        problems.append(("decision", f"must be one of {', '.join(Decision.values)}"))
    if len(body) > REVIEW_BODY_MAX_CHARS:
        problems.append(("body", f"is {len(body):,} characters long; a review's body holds at most"
                                 f" {REVIEW_BODY_MAX_CHARS:,}"))
    if "\x00" in body:
        problems.append(("body", "holds a NUL character"))
    drafts = _comments_checked(execution, comments, problems)
    resolved = _resolve_checked(execution, resolve, problems)
    if decision == Decision.REQUEST_CHANGES and not body.strip() and not comments:
        problems.append(("body", "say what to change: a request for changes needs a body or a comment on a line"))
    if decision == Decision.COMMENT and not body.strip() and not comments and not resolve:
        problems.append(("body", "a comment needs a body, a comment on a line or comments it resolves"))
    if problems:
        raise ReviewInvalid(problems)
    draft = ReviewDraft(decision=decision, body=body, comments=tuple(drafts), resolve=tuple(resolved))
    return change_review_decide(execution=execution, author=author, draft=draft)


def _comments_checked(
    execution: WorkNodeExecution, comments: Sequence[Mapping[str, Any]], problems: list[tuple[str, str]]
) -> list[CommentDraft]:
    if len(comments) > REVIEW_COMMENTS_MAX:
        problems.append(("comments", f"holds {len(comments)} comments; a review holds at most {REVIEW_COMMENTS_MAX}"))
        return []
    change = _change_of(execution)
    lines_of: dict[str, list[str] | None] = {}
    drafts = []
    for index, comment in enumerate(comments):
        name = f"comments[{index}]"
        path, line, body = str(comment.get("path") or ""), comment.get("line"), str(comment.get("body") or "")
        known = True
        if path not in change.paths:
            problems.append((f"{name}.path", f"{path or 'an empty path'} is not a file this attempt changed"))
            known = False
        if not isinstance(line, int) or isinstance(line, bool) or line < 1:
            problems.append((f"{name}.line", "must be a line number, 1 or more"))
            known = False
        if not body.strip():
            problems.append((f"{name}.body", "a comment needs a body"))
        elif len(body) > REVIEW_BODY_MAX_CHARS or "\x00" in body:
            problems.append((f"{name}.body", f"holds more than {REVIEW_BODY_MAX_CHARS:,} characters or a NUL"))
        if not known:
            continue
        if path not in lines_of:
            lines_of[path] = commit_file_lines(change.repository, change.result_commit, path)
        lines = lines_of[path]
        if lines is None or line > len(lines):
            where = "has no lines (deleted, or binary)" if lines is None else f"has {len(lines)} lines"
            problems.append((f"{name}.line", f"line {line} is not in {path} as the attempt left it: it {where}"))
            continue
        drafts.append(CommentDraft(path=path, line=line, body=body, excerpt=line_excerpt(lines, line)))
    return drafts


def _change_of(execution: WorkNodeExecution) -> _Change:
    change = AttemptChange.objects.filter(node_exec=execution).values("result_commit", "files").first() or {}
    repository = RunWorkspace.objects.filter(run_id=execution.run_id).values_list("repository", flat=True).first()
    paths = frozenset(str(entry.get("path")) for entry in change.get("files") or () if isinstance(entry, dict))
    return _Change(repository=repository or "", result_commit=change.get("result_commit") or "", paths=paths)


def _resolve_checked(
    execution: WorkNodeExecution, resolve: Sequence[Any], problems: list[tuple[str, str]]
) -> list[int]:
    """The ids of open comments of earlier reviews of this change (of this attempt, or of the attempts whose
    change it amends) to resolve."""
    if not resolve:
        return []
    reviewed = [execution.pk, *review_lineage(execution)]
    open_ids = set(ReviewComment.objects.filter(review__attempt_id__in=reviewed, resolved=False)
                   .values_list("pk", flat=True))
    chosen = []
    for index, comment_id in enumerate(resolve):
        if not isinstance(comment_id, int) or comment_id not in open_ids:
            problems.append((f"resolve[{index}]", f"{comment_id!r} is no open comment of an earlier review of this"
                                                  " change"))
        elif comment_id not in chosen:
            chosen.append(comment_id)
    return chosen
