"""Change reviews: a reviewer's decision on what one attempt changed, and the comments on its lines.

A project that requires change review holds an attempt that changed files and passed its judgment in
``awaiting_review`` until a reviewer decides (graphs.engine.change_review); a review of a landed attempt
of a finished run asks for a follow-up run instead. Rows are appended, never edited, but for a comment's
resolution.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from graphs.models.runs import WorkNodeExecution

# The longest review or comment body a reviewer may write, in characters.
REVIEW_BODY_MAX_CHARS = 20_000
# The most comments one review may carry.
REVIEW_COMMENTS_MAX = 200


class ChangeReview(models.Model):
    """One reviewer's review of an attempt's change: a decision (or only comments), a body, line comments."""

    class Decision(models.TextChoices):
        APPROVE = "approve", "Approved"
        REQUEST_CHANGES = "request_changes", "Changes requested"
        COMMENT = "comment", "Commented"

    attempt = models.ForeignKey(WorkNodeExecution, on_delete=models.CASCADE, related_name="change_reviews")
    decision = models.CharField(max_length=16, choices=Decision.choices)
    body = models.TextField(blank=True, max_length=REVIEW_BODY_MAX_CHARS)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_commit = models.CharField(
        max_length=40, blank=True, help_text="The attempt's result commit the review read (its change's).",
    )
    next_attempt = models.OneToOneField(
        WorkNodeExecution, null=True, blank=True, on_delete=models.SET_NULL, related_name="requested_by_review",
        help_text="The attempt a request for changes started: the node's next attempt, or the first one of a"
                  " follow-up run.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["attempt", "created_at"], name="change_review_attempt")]
        constraints = [
            models.CheckConstraint(condition=Q(decision__in=["approve", "request_changes", "comment"]),
                                   name="change_review_decision_valid"),
            models.CheckConstraint(condition=Q(next_attempt__isnull=True) | Q(decision="request_changes"),
                                   name="change_review_next_attempt_on_request"),
        ]

    def __str__(self) -> str:
        return f"review of {self.attempt_id} ({self.decision})"


class ReviewComment(models.Model):
    """A comment on one line of a file as the reviewed attempt left it. It stays open until a reviewer
    resolves it in a later review of the node (``resolved_in_attempt``: the attempt that review read)."""

    review = models.ForeignKey(ChangeReview, on_delete=models.CASCADE, related_name="comments")
    path = models.CharField(max_length=1000)
    line = models.PositiveIntegerField(help_text="A line number of the file as the attempt left it.")
    body = models.TextField(max_length=REVIEW_BODY_MAX_CHARS)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    excerpt = models.JSONField(
        default=list, blank=True,
        help_text="The lines around the commented one as the attempt left them: [line number, text] pairs.",
    )
    resolved = models.BooleanField(default=False, db_index=True)
    resolved_in_attempt = models.ForeignKey(
        WorkNodeExecution, null=True, blank=True, on_delete=models.SET_NULL, related_name="resolved_comments",
    )
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["review_id", "path", "line", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(line__gte=1), name="review_comment_line_positive"),
            models.CheckConstraint(condition=Q(resolved=False) | Q(resolved_at__isnull=False),
                                   name="review_comment_resolved_when"),
        ]

    def __str__(self) -> str:
        return f"comment on {self.path}:{self.line}"
