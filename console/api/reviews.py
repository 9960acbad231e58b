"""Change reviews of an attempt: read them, and approve its change, request changes to it or comment on it."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from ninja import Field, Router, Schema, Status

from console.api.errors import ApiError
from console.api.schemas import ERRORS, InSchema
from console.permissions import execution_for_member, require
from graphs.collaboration.change_reviews import ReviewInvalid, change_review_submit
from graphs.engine.change_review import NotReviewable
from graphs.models import ChangeReview
from graphs.reads.change_reviews import attempt_reviews

router = Router(tags=["reviews"])


class ReviewCommentIn(InSchema):
    path: str = Field(..., description="A file the attempt changed, as its change names it.")
    line: int = Field(..., description="A line number of that file as the attempt left it (1 is the first).")
    body: str


class ReviewIn(InSchema):
    decision: str = Field(..., json_schema_extra={"enum": ChangeReview.Decision.values},
                          description="approve, request_changes or comment.")
    body: str = Field("", description="At most 20,000 characters.")
    comments: list[ReviewCommentIn] = Field([], description="At most 200 comments on lines of the change.")
    resolve: list[int] = Field([], description="Open comments of earlier reviews of this change, resolved by this one.")


class ReviewCommentOut(Schema):
    id: int
    path: str
    line: int
    body: str
    author: str
    resolved: bool
    resolved_in_attempt: UUID | None = Field(None, description="The attempt whose review resolved it.")
    created_at: datetime


class ReviewOut(Schema):
    id: int
    decision: str
    body: str
    author: str
    created_at: datetime
    comments: list[ReviewCommentOut]
    next_attempt: UUID | None = Field(None, description="The attempt a request for changes started (in this run, "
                                                        "or the first of a follow-up run).")


@router.get("/executions/{node_exec_id}/reviews", response={200: list[ReviewOut], **ERRORS})
def executions_reviews(request, node_exec_id: UUID):
    execution, _ = execution_for_member(request.auth, node_exec_id)
    return [review.as_dict() for review in attempt_reviews(execution)]


@router.post("/executions/{node_exec_id}/reviews", response={201: ReviewOut, **ERRORS})
def executions_review(request, node_exec_id: UUID, payload: ReviewIn):
    """Review the attempt's change. ``approve`` lands a change awaiting review and the run goes on;
    ``request_changes`` gives its node a new attempt that amends it (on a finished run's landed attempt: a
    follow-up run forked from the node); ``comment`` records the review alone."""
    execution, role = execution_for_member(request.auth, node_exec_id)
    require(role, "review_change")
    try:
        review = change_review_submit(
            execution=execution, author=request.auth, decision=payload.decision, body=payload.body,
            comments=[comment.dict() for comment in payload.comments], resolve=payload.resolve,
        )
    except NotReviewable as refused:
        raise ApiError(409, "not_reviewable", str(refused)) from None
    except ReviewInvalid as invalid:
        fields = [{"field": field, "message": message} for field, message in invalid.problems]
        raise ApiError(400, "invalid_review", str(invalid), fields) from None
    (view,) = [seen for seen in attempt_reviews(execution) if seen.id == review.pk]
    return Status(201, view.as_dict())
