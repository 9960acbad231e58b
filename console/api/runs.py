"""Runs, planning calls, node executions and their logs, and the actions on runs."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from uuid import UUID

from django.core.paginator import Paginator
from ninja import Field, Query, Router, Status

from console.api.errors import ApiError
from console.api.schemas import (
    ERRORS,
    AcceptedOut,
    BudgetIn,
    CommentIn,
    ExecutionDetailOut,
    ExecutionOut,
    ForkIn,
    InSchema,
    LogPage,
    OrgNodeIn,
    PlanningCallOut,
    RejectIn,
    RunOut,
    RunPage,
)
from console.permissions import execution_for_member, require, run_for_member
from graphs.delivery.reads import run_delivery, run_delivery_out
from graphs.domain.fork_edits import ForkEditError
from graphs.engine import plan_append, run_cancel, run_fork, run_start
from graphs.engine.fork_edits import run_fork_edited
from graphs.engine.review import run_plan_approve, run_plan_reject
from graphs.logs.store import log_read
from graphs.models import ExecutionLogFile, WorkGraphRun
from graphs.planning.append_review import append_label, append_reviews_of, run_approval_wait
from graphs.reads.changes import attempt_change
from graphs.reads.executions import execution_detail, planning_calls
from graphs.reads.run_lists import RunRow, run_rows, runs_for_user
from graphs.reads.todo_tree import FailureGroup, run_failures
from graphs.runs.accounting import spend_by_org_node, spend_of
from graphs.runs.admission import run_queue_position

router = Router(tags=["runs"])
MAX_LOG_PAGE = 1000
MAX_PAGE_SIZE = 100


class RunFilters(InSchema):
    """The runs list's filters, as ``graphs.reads.run_lists.runs_for_user`` reads them."""

    project: str = Field("", description="A project's slug.")
    # Declared here, checked in the operation (as page_size): the check answers with its own error code.
    status: str = Field("", json_schema_extra={"enum": ["", *WorkGraphRun.Status.values]})
    org_node: str = Field("", max_length=100, pattern=r"^[A-Za-z0-9_.-]*$",
                          description="Runs in which this org node ran a node or made a planning call.")
    created_from: date | None = Field(None, description="Created on this day or later (the console's time zone).")
    created_to: date | None = Field(None, description="Created on this day or earlier.")
    min_cost: Decimal | None = Field(None, ge=0, max_digits=14, decimal_places=6,
                                     description="Runs whose attempts reported at least this cost in USD, summed.")
    q: str = Field("", max_length=200,
                   description="In the task's title, or in the id of a node the run has attempted (any case).")
    experiment: int | None = Field(None, description="The runs an experiment made of its dataset's cases.")
    page: int = 1
    page_size: int = Field(25, json_schema_extra={"minimum": 1, "maximum": MAX_PAGE_SIZE})


@router.get("/runs", response={200: RunPage, **ERRORS})
def runs_list(request, filters: Query[RunFilters]):
    if not 1 <= filters.page_size <= MAX_PAGE_SIZE:
        raise ApiError(400, "bad_page_size", f"page_size must be between 1 and {MAX_PAGE_SIZE}")
    if filters.status and filters.status not in WorkGraphRun.Status.values:
        raise ApiError(400, "bad_status", f"status must be one of {', '.join(WorkGraphRun.Status.values)}")
    runs = runs_for_user(
        request.auth, project_slug=filters.project, status=filters.status, org_node=filters.org_node,
        created_from=filters.created_from, created_to=filters.created_to, min_cost_usd=filters.min_cost,
        text=filters.q.strip(), experiment=filters.experiment,
    )
    paginator = Paginator(runs, filters.page_size)
    page = paginator.get_page(filters.page)
    return {"items": [_run_list_item(row) for row in run_rows(list(page.object_list))],
            "count": paginator.count, "page": page.number, "pages": paginator.num_pages}


def _run_list_item(row: RunRow) -> dict:
    run = row.run
    return {
        **{name: getattr(run, name) for name in (
            "run_id", "task_id", "status", "stage", "pipeline", "forked_from_id", "error_code", "created_at",
            "started_at", "finished_at",
        )},
        "task_title": run.task.title, "project": run.task.project.slug,
        "duration_seconds": row.duration.total_seconds() if row.duration is not None else None,
        "progress": row.progress.as_dict(), "spend": row.spend.as_dict(),
    }


class LogQuery(InSchema):
    # Declared here, checked in the operation: the checks answer with their own error codes.
    after: int = Field(0, description="The seq of the last line already read.", json_schema_extra={"minimum": 0})
    limit: int = Field(200, json_schema_extra={"minimum": 1, "maximum": MAX_LOG_PAGE})


@router.get("/runs/{run_id}", response={200: RunOut, **ERRORS})
def runs_detail(request, run_id: UUID):
    run, _ = run_for_member(request.auth, run_id)
    run.executions_list = list(run.executions.defer("input_payload", "output_payload").order_by("created_at"))
    return _run_out(run)


@router.get("/runs/{run_id}/planning", response={200: list[PlanningCallOut], **ERRORS})
def runs_planning(request, run_id: UUID):
    run, _ = run_for_member(request.auth, run_id)
    return planning_calls(run)


@router.get("/executions/{node_exec_id}", response={200: ExecutionDetailOut, **ERRORS})
def executions_detail(request, node_exec_id: UUID):
    execution, _ = execution_for_member(request.auth, node_exec_id)
    return {**execution_detail(execution), "input_payload": execution.input_payload,
            "output_payload": execution.output_payload, "changes": attempt_change(execution)}


@router.get("/executions/{node_exec_id}/attempts", response={200: list[ExecutionOut], **ERRORS})
def executions_attempts(request, node_exec_id: UUID):
    execution, _ = execution_for_member(request.auth, node_exec_id)
    return list(execution.run.executions.filter(node_id=execution.node_id).order_by("attempt"))


@router.get("/executions/{node_exec_id}/log", response={200: LogPage, **ERRORS})
def executions_log(request, node_exec_id: UUID, page: Query[LogQuery]):
    execution, _ = execution_for_member(request.auth, node_exec_id)
    after, limit = page.after, page.limit
    if not 1 <= limit <= MAX_LOG_PAGE:
        raise ApiError(400, "bad_limit", f"limit must be between 1 and {MAX_LOG_PAGE}")
    if after < 0:
        raise ApiError(400, "bad_after", "after must be 0 or more")
    log_file = ExecutionLogFile.objects.filter(node_exec=execution).first()
    if log_file is None:
        return {"lines": [], "next_after": after, "complete": execution.is_finished()}
    lines = log_read(log_file=log_file, after=after, limit=limit)
    next_after = lines[-1]["seq"] if lines else after
    complete = log_file.status == ExecutionLogFile.Status.CLOSED and len(lines) < limit
    return {"lines": lines, "next_after": next_after, "complete": complete}


@router.post("/runs/{run_id}/append", response={202: AcceptedOut, **ERRORS})
def runs_append(request, run_id: UUID, payload: OrgNodeIn):
    run, role = run_for_member(request.auth, run_id)
    require(role, "plan")
    if run.is_finished():
        raise ApiError(409, "invalid_state", f"run is {run.status}; nodes can no longer be appended")
    plan_append(run=run, org_node=payload.org_node)
    return Status(202, {"detail": f"{payload.org_node} is planning nodes to append"})


@router.post("/runs/{run_id}/approve", response={200: RunOut, **ERRORS})
def runs_approve(request, run_id: UUID, payload: CommentIn):
    run, role = run_for_member(request.auth, run_id)
    require(role, "review_plan")
    return _run_out(run_plan_approve(run=run, reviewer=request.auth, comment=payload.comment))


@router.post("/runs/{run_id}/reject", response={200: RunOut, **ERRORS})
def runs_reject(request, run_id: UUID, payload: RejectIn):
    run, role = run_for_member(request.auth, run_id)
    require(role, "review_plan")
    return _run_out(run_plan_reject(run=run, reviewer=request.auth, comment=payload.comment))


@router.post("/runs/{run_id}/start", response={200: RunOut, **ERRORS})
def runs_start(request, run_id: UUID, payload: BudgetIn | None = None):
    run, role = run_for_member(request.auth, run_id)
    require(role, "start_run")
    run_start(run=run, max_cost_usd=payload.max_cost_usd if payload else None)
    run.refresh_from_db()
    return _run_out(run)


@router.post("/runs/{run_id}/cancel", response={200: RunOut, **ERRORS})
def runs_cancel(request, run_id: UUID):
    run, role = run_for_member(request.auth, run_id)
    require(role, "cancel_run")
    run_cancel(run=run, by=request.auth)
    run.refresh_from_db()
    return _run_out(run)


@router.post("/runs/{run_id}/fork", response={201: RunOut, **ERRORS})
def runs_fork(request, run_id: UUID, payload: ForkIn):
    """Fork the run from a node; with ``prompt`` or ``argv``, that node runs the edit (waiting for a
    reviewer first where the project requires plan approval)."""
    run, role = run_for_member(request.auth, run_id)
    require(role, "fork_run")
    if payload.prompt is None and payload.argv is None:
        return Status(201, _run_out(run_fork(run=run, node_id=payload.node_id, by=request.auth)))
    try:
        fork = run_fork_edited(run=run, node_id=payload.node_id, by=request.auth, prompt=payload.prompt,
                               argv=payload.argv)
    except ForkEditError as error:
        fields = [{"field": field, "message": message} for field, messages in error.errors.items()
                  for message in messages]
        raise ApiError(400, "invalid_edit", str(error), fields) from error
    return Status(201, _run_out(fork))


def _run_out(run) -> dict:
    executions = getattr(run, "executions_list", None)
    if executions is None:
        executions = list(run.executions.defer("input_payload", "output_payload").order_by("created_at"))
    fields = (
        "run_id", "task_id", "status", "manifest_version", "graph_manifest", "pipeline", "stage", "error", "error_code",
        "max_cost_usd",
        "forked_from_id", "fork_node_id", "fork_edit", "review_decision", "review_comment", "created_at", "queued_at",
        "started_at", "finished_at",
    )
    spend = spend_of(run.executions.all())
    wait = run_approval_wait(run)
    return {
        **{name: getattr(run, name) for name in fields}, "executions": executions,
        "queue_position": run_queue_position(run),
        "awaiting_approval_of": None if wait is None else {
            "stage": wait.stage, "label": wait.label, "planning_node_exec_ids": wait.planning_execution_ids},
        "append_reviews": [
            {"planning_node_exec_id": review.planning_execution_id, "org_node": review.org_node,
             "label": append_label(review), "new_node_ids": review.new_node_ids, "status": review.status,
             "reviewed_by": review.reviewed_by.get_username() if review.reviewed_by else None,
             "review_comment": review.review_comment, "reviewed_at": review.reviewed_at,
             "created_at": review.created_at}
            for review in append_reviews_of(run.pk)
        ],
        "failures": [_failure_group_out(group) for group in run_failures(run, executions)],
        "cost_usd": spend.cost_usd, "usage": spend.usage, "spend": spend.as_dict(),
        "by_org_node": {org: part.as_dict() for org, part in spend_by_org_node(run.executions.all()).items()},
        "delivery": run_delivery_out(run_delivery(run)),
    }


def _failure_group_out(group: FailureGroup) -> dict:
    return {"category": group.category, "attempts": [
        {**failed.classification.as_dict(), "node_exec_id": failed.execution.pk, "node_id": failed.execution.node_id,
         "attempt": failed.execution.attempt, "role": failed.role.role if failed.role else None,
         "because_of": list(failed.role.because_of) if failed.role else []}
        for failed in group.attempts
    ]}
