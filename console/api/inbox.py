"""The inbox (what waits on the caller's roles) and raising a stopped run's budget to resume it."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from uuid import UUID

from django.utils import timezone
from django.utils.timesince import timesince
from ninja import Field, Router, Schema

from console.api.errors import ApiError
from console.api.schemas import ERRORS, InSchema
from console.permissions import require, run_for_member
from console.views.inbox import inbox_link
from graphs.engine.budget_resume import BudgetResumeRefused, run_budget_raise_resume
from graphs.reads.inbox import inbox_items

router = Router(tags=["inbox"])


class InboxItemOut(Schema):
    kind: str = Field(..., description="approval (a plan or appends to review), change_review (an attempt's "
                                       "change waiting for a reviewer), external (a node waiting for its report) "
                                       "or budget (a run its budget stopped).")
    since: datetime = Field(..., description="When it began to wait.")
    waiting_for: str = Field(..., description="How long it has waited, in words: '3 hours, 5 minutes'.")
    label: str = Field(..., description="What waits: 'the plan', \"the coder's append\", \"node deploy's report\"…")
    run_id: UUID
    task_id: UUID
    task_title: str
    project: str = Field(..., description="The project's slug.")
    nodes_waiting: int = Field(..., description="How many of the run's nodes cannot go on until it is dealt with.")
    node_exec_id: UUID | None = Field(None, description="The attempt waiting for its report or its review "
                                                         "(external and change_review only).")
    node_id: str = ""
    budget_usd: Decimal | None = Field(None, description="The run's budget (budget only).")
    spent_usd: Decimal | None = Field(None, description="What the run's agent calls cost (budget only).")
    url: str = Field(..., description="The console page where it is acted on.")


class InboxOut(Schema):
    count: int
    items: list[InboxItemOut]


class BudgetRaiseIn(InSchema):
    max_cost_usd: Decimal = Field(..., gt=0, max_digits=12, decimal_places=4,
                                  description="The run's new budget in USD: above what it spent.")


class BudgetRaisedOut(Schema):
    run_id: UUID
    status: str
    max_cost_usd: Decimal


@router.get("/inbox", response={200: InboxOut, **ERRORS})
def inbox_list(request):
    now = timezone.now()
    items = [
        {"kind": item.kind, "since": item.since, "waiting_for": timesince(item.since, now), "label": item.label,
         "run_id": item.run_id, "task_id": item.task_id, "task_title": item.task_title,
         "project": item.project_slug, "nodes_waiting": item.nodes_waiting, "node_exec_id": item.node_exec_id,
         "node_id": item.node_id, "budget_usd": item.budget_usd, "spent_usd": item.spent_usd,
         "url": inbox_link(item)}
        for item in inbox_items(request.auth)
    ]
    return {"count": len(items), "items": items}


@router.post("/runs/{run_id}/budget", response={200: BudgetRaisedOut, **ERRORS})
def runs_budget_raise(request, run_id: UUID, payload: BudgetRaiseIn):
    run, role = run_for_member(request.auth, run_id)
    require(role, "start_run")
    try:
        run = run_budget_raise_resume(run_id=run.pk, user=request.auth, max_cost_usd=payload.max_cost_usd)
    except BudgetResumeRefused as refused:
        raise ApiError(409, refused.code, str(refused)) from None
    return {"run_id": run.pk, "status": run.status, "max_cost_usd": run.max_cost_usd}
