"""Request and response shapes of the REST API. Validation lives here, not in the operations."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Literal
from uuid import UUID

from ninja import Field, Schema
from pydantic import field_validator

from console.api.change_schemas import AttemptChangeOut
from console.api.delivery_schemas import DeliveryOut
from console.api.usage_schemas import AttemptSpendOut
from graphs.models import Task, WorkGraphRun
from graphs.tokens import DEFAULT_LIFETIME_DAYS, MAX_LIFETIME_DAYS


def _status_field(statuses: list[str]) -> Any:
    """A status the schema names every value of (a reviewer's no reads ``rejected``, not ``failed``)."""
    return Field(..., json_schema_extra={"enum": statuses})


def _refuse_nul(value: Any) -> Any:
    # PostgreSQL cannot store NUL in text or JSON: refused here, it is a 400 instead of a failed write.
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if "\x00" in item:
                raise ValueError("must not contain a NUL character")
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return value


class InSchema(Schema):
    """What a client sends: no text anywhere in it may hold a NUL character.

    Nested schemas check their own fields, so an error names the innermost field.
    """

    _no_nul = field_validator("*")(_refuse_nul)


class ErrorOut(Schema):
    code: str
    message: str
    fields: list[dict[str, Any]] = []


class SpendOut(Schema):
    agent_calls: int
    cost_usd: Decimal | None = Field(..., description="Null: none reported; a lower bound if calls_without_cost.")
    usage: dict[str, int] = Field(..., description="A lower bound if calls_without_usage > 0.")
    num_turns: int
    tool_calls: int
    calls_without_usage: int
    calls_without_cost: int


class TaskOut(Schema):
    task_id: UUID
    project: str
    title: str
    goal_text: str
    deliverables: list[Any]
    acceptance_criteria: list[Any]
    constraints: list[Any]
    resources: list[Any]
    task_type: str
    workflow_id: str
    planning_mode: str
    status: str = _status_field(Task.Status.values)
    outcome: dict[str, Any]
    created_at: datetime
    spend: SpendOut = Field(..., description="What every run of the task cost, planning and judge calls included.")

    @staticmethod
    def resolve_project(task: Task) -> str:
        return task.project.slug

    @staticmethod
    def resolve_spend(task: Task) -> dict[str, Any]:
        # The endpoint sets it for the tasks it answers with: one query for a whole page.
        return task.spend.as_dict()


class TaskPage(Schema):
    items: list[TaskOut]
    count: int
    page: int
    pages: int


class FailureOut(Schema):
    category: str = Field(..., description="ProductBug, TestBug, EnvFailure, ContractMismatch, FlakyTest or Unknown.")
    confidence: float = Field(..., description="Capped: at most 0.75 on assertions, 0.6 on errors.")
    evidence: list[str]
    rule: str = Field(..., description="The deterministic rule that decided, or llm when the judge agent did.")
    note: str = Field(..., description="Why the judge agent's answer was not taken; empty otherwise.")


class FailedAttemptOut(FailureOut):
    node_exec_id: UUID
    node_id: str
    attempt: int
    role: str | None = Field(..., description="root_cause, failed_downstream or blocked, for a node's latest attempt.")
    because_of: list[str] = Field(..., description="The root causes upstream of the node.")


class FailureGroupOut(Schema):
    category: str
    attempts: list[FailedAttemptOut]


class ExecutionOut(AttemptSpendOut):
    node_exec_id: UUID
    node_id: str
    is_planning: bool
    subagent_type: str
    attempt: int
    cause: str
    cause_node_id: str
    status: str
    judgment_result: dict[str, Any] | None
    error: str
    failure: FailureOut | None = Field(..., description="A failed attempt's classification; null otherwise.")
    ready_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None


class AttemptOut(Schema):
    node_exec_id: UUID
    attempt: int
    status: str
    cause: str
    cause_node_id: str


class ExecutionDetailOut(ExecutionOut):
    run_id: UUID
    prompt: str
    output: str
    attempts: list[AttemptOut]
    input_payload: dict[str, Any]
    output_payload: dict[str, Any]
    changes: AttemptChangeOut | None = Field(..., description="What the attempt changed; null when it kept no "
                                             "change (a planning call, a folder not a repository, not finished).")


class ApprovalWaitOut(Schema):
    stage: Literal["plan", "append"] = Field(
        ..., description="plan: the run's fresh plan waits; append: the nodes one or more appends added wait."
    )
    label: str = Field(..., description="What waits, as the pages say it: the plan, the coder's append, the"
                                        " planner's gap round 2.")
    planning_node_exec_ids: list[UUID] = Field(..., description="The planning calls of the appends waiting.")


class AppendReviewOut(Schema):
    planning_node_exec_id: UUID = Field(..., description="The append's planning call.")
    org_node: str
    label: str
    new_node_ids: list[str] = Field(..., description="The nodes the append added: they run once it is approved.")
    status: Literal["pending", "approved", "rejected"]
    reviewed_by: str | None
    review_comment: str
    reviewed_at: datetime | None
    created_at: datetime


class RunOut(Schema):
    run_id: UUID
    task_id: UUID
    status: str = _status_field(WorkGraphRun.Status.values)
    manifest_version: int
    graph_manifest: dict[str, Any]
    pipeline: bool
    stage: str
    error: str
    error_code: str = Field(
        ..., description="Why the run was stopped early: budget_exceeded, append_rejected; empty otherwise."
    )
    max_cost_usd: Decimal | None = Field(..., description="The run's budget in USD; null: none.")
    forked_from_id: UUID | None
    fork_node_id: str
    fork_edit: dict[str, Any] = Field(
        ..., description="An edited fork's edit: node_id, field (task_prompt or command), before, after, by, at; "
                         "{} otherwise.",
    )
    review_decision: str = Field(..., description="The decision on the run's fresh plan: approved, rejected or empty.")
    review_comment: str
    awaiting_approval_of: ApprovalWaitOut | None = Field(
        ..., description="While the run is awaiting_approval, what waits for a reviewer; null otherwise."
    )
    append_reviews: list[AppendReviewOut] = Field(
        ..., description="Every append that waited for a reviewer (projects that require plan approval), oldest first."
    )
    created_at: datetime
    queued_at: datetime | None = Field(..., description="When it was started past the limit of runs at once and"
                                                        " queued; null for a run admitted at once.")
    queue_position: int | None = Field(..., description="While the run is queued, its place: 1 is admitted next;"
                                                        " null otherwise.")
    started_at: datetime | None
    finished_at: datetime | None
    executions: list[ExecutionOut]
    failures: list[FailureGroupOut] = Field(..., description="The run's failed attempts by category.")
    # Every attempt of the run, planning and judge calls included; and per org node.
    cost_usd: Decimal | None
    usage: dict[str, int]
    spend: SpendOut
    by_org_node: dict[str, SpendOut]
    delivery: DeliveryOut | None = Field(..., description="Its branch pushed and pull request opened (graphs.delivery);"
                                                          " null for a run never delivered.")


class ProgressOut(Schema):
    total: int = Field(..., description="The work nodes in the run's manifest.")
    done: int = Field(..., description="Those whose latest attempt has finished, whatever the outcome.")
    succeeded: int
    partial: int
    failed: int
    blocked: int
    cancelled: int
    active: int
    awaiting_review: int = Field(..., description="Those whose change waits for a reviewer.")
    summary: str


class RunListItemOut(Schema):
    run_id: UUID
    task_id: UUID
    task_title: str
    project: str = Field(..., description="The project's slug.")
    status: str = _status_field(WorkGraphRun.Status.values)
    stage: str = Field(..., description="The org node whose nodes were planned last.")
    pipeline: bool
    forked_from_id: UUID | None
    error_code: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    duration_seconds: float | None = Field(
        ..., description="Start to finish, or so far while the run has not finished; null before it starts."
    )
    progress: ProgressOut
    spend: SpendOut = Field(..., description="What every attempt of the run cost, planning and judge calls included.")


class RunPage(Schema):
    items: list[RunListItemOut]
    count: int
    page: int
    pages: int


class PlanningCallOut(Schema):
    node_exec_id: UUID
    node_id: str
    org_node: str
    attempt: int
    status: str
    error: str
    prompt: str
    raw_response: str
    repair_prompt: str | None
    repair_response: str | None
    extracted_manifest: Any
    manifest: dict[str, Any] | None
    normalization_notes: list[str]
    validation_errors: list[str]
    new_node_ids: list[str]


class LogPage(Schema):
    lines: list[dict[str, Any]]
    next_after: int
    complete: bool


class BudgetIn(InSchema):
    max_cost_usd: Decimal | None = Field(
        None, gt=0, max_digits=12, decimal_places=4,
        description="The run's budget in USD; left out, the project's max_run_cost_usd.",
    )


ORG_NODE_PATTERN = r"^[A-Za-z0-9_.-]+$"


class OrgNodeIn(InSchema):
    org_node: str = Field(..., min_length=1, max_length=100, pattern=ORG_NODE_PATTERN)


class PlanIn(BudgetIn):
    org_node: str = Field(
        "planner", min_length=1, max_length=100, pattern=ORG_NODE_PATTERN,
        description="Who plans the task from scratch, with its own catalog and prompt: planner, coder, validator"
                    " or another org node; left out, the planner.",
    )


class CommentIn(InSchema):
    comment: str = Field("", max_length=5000)


class RejectIn(InSchema):
    comment: str = Field(..., min_length=1, max_length=5000,
                         description="Why the plan or the append is rejected: needed, the run ends rejected.")

    @field_validator("comment")
    @classmethod
    def _says_why(cls, comment: str) -> str:
        # As the console's form: blanks around it are dropped, and blanks alone say nothing.
        if not comment.strip():
            raise ValueError("say why it is rejected: a rejection needs a comment, its reason")
        return comment.strip()


class ForkIn(InSchema):
    node_id: str = Field(..., min_length=1, max_length=200,
                         description="The node the fork runs again, with its dependants.")
    prompt: str | None = Field(
        None, max_length=100_000,
        description="An agent node's new prompt (its task_prompt): the fork runs the node with it. Null: no edit.",
    )
    argv: list[str] | None = Field(
        None, description="A command node's new argv (the program and its arguments). Null: no edit.",
    )


class DagSpecIn(InSchema):
    spec: dict[str, Any] = Field(..., description="The loop-agent DAG spec: its tasks, prompts, gates and policies.")
    prompt_files: dict[str, str] = Field(
        default_factory=dict,
        description="The markdown prompts its tasks name, keyed by the path they name; a file no task names, or "
                    "one over WORKGRAPH_DAG_SPEC_PROMPT_FILE_MAX_BYTES, makes the import a 422.",
    )
    source_name: str = Field("", max_length=255, description="The spec's file name, kept with it.")


class DagSpecImportOut(Schema):
    run_id: UUID
    task_id: UUID
    status: str = Field(..., description="ready, or awaiting_approval when the project requires plan approval.")
    warnings: list[str] = Field(..., description="What the run cannot do as its project stands (commands not allowed).")


class AcceptedOut(Schema):
    accepted: bool = True
    detail: str


class TokenIn(InSchema):
    name: str = Field(..., min_length=1, max_length=100)
    expires_in_days: int = Field(DEFAULT_LIFETIME_DAYS, ge=1, le=MAX_LIFETIME_DAYS)
    read_only: bool = Field(False, description="A read-only token may only make GET, HEAD and OPTIONS requests.")


class TokenOut(Schema):
    id: int
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime
    read_only: bool
    revoked_at: datetime | None


class TokenCreatedOut(TokenOut):
    token: str = Field(..., description="Shown once: store it now, it cannot be read again.")


# Every operation may answer with these; declaring them keeps the OpenAPI document honest.
ERRORS = {status: ErrorOut for status in (400, 401, 403, 404, 409, 413)}
