"""An attempt's change reviews as the API and the node page show them: its reviews with their line comments,
the comments of earlier reviews it carries (open or resolved), the review that asked for it, the
changes since that review (the diff from the reviewed change's result to this attempt's), and where on
the page's diffs each comment is drawn inline."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Prefetch

from graphs.domain.text_diffs import line_carried
from graphs.engine.change_review import attempt_review_standing, review_lineage
from graphs.models import AttemptChange, ChangeReview, ReviewComment, RunWorkspace, WorkNodeExecution
from graphs.workspaces.commit_reads import commit_file_lines, commits_diff

Decision = ChangeReview.Decision
# The decisions an attempt takes, by its standing (graphs.engine.change_review.attempt_review_standing).
DECISIONS_OF_STANDING = {
    "waiting": (Decision.APPROVE, Decision.REQUEST_CHANGES, Decision.COMMENT),
    # A landed change: a request for changes makes a follow-up run; an approval is recorded only.
    "landed": (Decision.REQUEST_CHANGES, Decision.COMMENT, Decision.APPROVE),
}


@dataclass(frozen=True)
class CommentView:
    id: int
    path: str
    line: int
    body: str
    author: str
    resolved: bool
    excerpt: list[tuple[int, str]]
    created_at: datetime
    # The attempt (its number and id) whose review resolved it; None while it is open.
    resolved_in_attempt: Any = None
    resolved_in_number: int | None = None
    # The attempt (its number) whose change it was written on, and that change's result commit.
    on_attempt: int = 0
    reviewed_commit: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "path": self.path, "line": self.line, "body": self.body, "author": self.author,
                "resolved": self.resolved, "resolved_in_attempt": self.resolved_in_attempt,
                "created_at": self.created_at}


@dataclass(frozen=True)
class ReviewView:
    id: int
    decision: str
    decision_words: str
    body: str
    author: str
    created_at: datetime
    comments: list[CommentView]
    next_attempt: Any = None

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "decision": self.decision, "body": self.body, "author": self.author,
                "created_at": self.created_at, "next_attempt": self.next_attempt,
                "comments": [comment.as_dict() for comment in self.comments]}


@dataclass(frozen=True)
class ChangeReviewPage:
    """What the node page shows of an attempt's review."""

    standing: str | None
    decisions: tuple[str, ...]
    reviews: list[ReviewView]
    # The review that asked this attempt to amend an earlier change, and the comments it carries.
    asked_by: ReviewView | None = None
    carried: list[CommentView] = field(default_factory=list)
    # The diff from the reviewed change's result to this attempt's: {"text", "cut", "bytes", "from", "to"}.
    since: dict[str, Any] | None = None

    @property
    def open_carried(self) -> list[CommentView]:
        return [comment for comment in self.carried if not comment.resolved]


def attempt_reviews(execution: WorkNodeExecution) -> list[ReviewView]:
    """The attempt's reviews, oldest first, each with its comments (two queries)."""
    return _reviews(ChangeReview.objects.filter(attempt=execution))


def change_review_page(execution: WorkNodeExecution) -> ChangeReviewPage:
    """The attempt's reviews, standing and decisions, the review it amends and what changed since."""
    standing = attempt_review_standing(execution)
    payload = (execution.input_payload or {}).get("review") or {}
    asked_by = None
    if payload.get("review_id"):
        asked = _reviews(ChangeReview.objects.filter(pk=payload["review_id"]))
        asked_by = asked[0] if asked else None
    lineage = review_lineage(execution)
    carried = _comments(ReviewComment.objects.filter(review__attempt_id__in=lineage)) if lineage else []
    decisions = DECISIONS_OF_STANDING.get(standing or "", ())
    if standing == "landed" and not execution.run.is_forkable():
        # A run still under way (or one that cannot be forked) takes no follow-up run yet.
        decisions = tuple(decision for decision in decisions if decision != Decision.REQUEST_CHANGES)
    return ChangeReviewPage(
        standing=standing, decisions=decisions,
        reviews=attempt_reviews(execution), asked_by=asked_by, carried=carried,
        since=_since(execution, reviewed_result=payload.get("result_commit") or ""),
    )


@dataclass(frozen=True)
class InlineComment:
    """A comment as the node page draws it under a line of one of its diffs: ``anchors`` are the places it
    may go, best first, each ``(diff, side, line)`` — the attempt's own diff (``change``) or the changes
    since its review (``since``), the line numbered on the old or the new side of that diff."""

    comment: CommentView
    carried: bool
    anchors: tuple[tuple[str, str, int], ...]


def review_inline(execution: WorkNodeExecution, page: ChangeReviewPage) -> list[InlineComment]:
    """Every comment the node page draws inline: the attempt's own, on the lines they name (of the file as
    it left it); and those it carries, on the line that is still theirs in its change, or, when the change
    since the review changed that line, on the line as the review read it."""
    inline = [InlineComment(comment=comment, carried=False,
                            anchors=(("change", "new", comment.line), ("since", "new", comment.line)))
              for view in page.reviews for comment in view.comments]
    if not page.carried:
        return inline
    result = AttemptChange.objects.filter(node_exec=execution).values_list("result_commit", flat=True).first()
    repository = RunWorkspace.objects.filter(run_id=execution.run_id).values_list("repository", flat=True).first()
    reviewed = (page.since or {}).get("from", "")
    files: dict[tuple[str, str], list[str] | None] = {}

    def lines(commit: str, path: str) -> list[str] | None:
        if (commit, path) not in files:
            files[commit, path] = commit_file_lines(repository, commit, path) if repository else None
        return files[commit, path]

    def moved(comment: CommentView, commit: str) -> int | None:
        if commit == comment.reviewed_commit:
            return comment.line
        old, new = lines(comment.reviewed_commit, comment.path), lines(commit, comment.path)
        return line_carried(old=old, new=new, line=comment.line) if old is not None and new is not None else None

    for comment in page.carried:
        here = moved(comment, result) if result else None
        then = moved(comment, reviewed) if reviewed else None
        anchors: list[tuple[str, str, int]] = [("change", "new", here), ("since", "new", here)] if here else []
        if then:
            anchors.append(("since", "old", then))
        inline.append(InlineComment(comment=comment, carried=True, anchors=tuple(anchors)))
    return inline


def _since(execution: WorkNodeExecution, *, reviewed_result: str) -> dict[str, Any] | None:
    if not reviewed_result:
        return None
    result = AttemptChange.objects.filter(node_exec=execution).values_list("result_commit", flat=True).first()
    repository = RunWorkspace.objects.filter(run_id=execution.run_id).values_list("repository", flat=True).first()
    if not result or not repository:
        return None
    diff = commits_diff(repository, reviewed_result, result)
    if diff is None:
        return None
    text, size = diff
    return {"text": text, "cut": len(text.encode()) < size, "bytes": size, "from": reviewed_result, "to": result}


def _reviews(reviews) -> list[ReviewView]:
    rows = reviews.select_related("author").prefetch_related(
        Prefetch("comments", queryset=_comment_rows(ReviewComment.objects.all()))).order_by("created_at", "pk")
    return [
        ReviewView(id=review.pk, decision=review.decision, decision_words=review.get_decision_display(),
                   body=review.body, author=_name(review.author), created_at=review.created_at,
                   next_attempt=review.next_attempt_id,
                   comments=[_comment(comment) for comment in review.comments.all()])
        for review in rows
    ]


def _comments(comments) -> list[CommentView]:
    return [_comment(comment) for comment in _comment_rows(comments).order_by("review__created_at", "path", "line",
                                                                              "pk")]


def _comment_rows(comments):
    return comments.select_related("author", "resolved_in_attempt", "review__attempt").defer(
        "resolved_in_attempt__input_payload", "resolved_in_attempt__output_payload",
        "review__attempt__input_payload", "review__attempt__output_payload")


def _comment(comment: ReviewComment) -> CommentView:
    resolved_in = comment.resolved_in_attempt
    return CommentView(
        id=comment.pk, path=comment.path, line=comment.line, body=comment.body, author=_name(comment.author),
        resolved=comment.resolved, excerpt=[(int(number), str(text)) for number, text in comment.excerpt or ()],
        created_at=comment.created_at, resolved_in_attempt=resolved_in.pk if resolved_in else None,
        resolved_in_number=resolved_in.attempt if resolved_in else None, on_attempt=comment.review.attempt.attempt,
        reviewed_commit=comment.review.reviewed_commit,
    )


def _name(user) -> str:
    return user.get_username() if user is not None else ""
