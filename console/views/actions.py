"""The forms that plan, start, cancel, fork and review runs: each carries out one engine or review
call and goes back to a page saying what happened, or why the console refused."""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from console.forms.pages import BudgetForm, ForkForm, PlanForm, ReviewForm
from console.permissions import can, require, run_for_member, task_for_member
from console.views.common import redirect_back
from graphs.domain.catalogs import ORG_NODES
from graphs.engine import EngineError, plan_fresh, run_cancel, run_fork, run_start
from graphs.engine.next_run import task_run_anew
from graphs.engine.review import REASON_NEEDED, run_plan_approve, run_plan_reject
from graphs.errors import TaskBusyError, WorkGraphError
from graphs.models import WorkGraphRun
from graphs.planning.append_review import APPEND_STAGE, run_approval_wait
from graphs.planning.dag_specs import task_dag_spec
from graphs.reads.task_runs import RUN_UNDER_WAY
from graphs.runs.admission import run_queue_position


@login_required
@require_POST
def task_plan(request: HttpRequest, task_id) -> HttpResponse:
    task, role = task_for_member(request.user, task_id)
    require(role, "plan")
    form = PlanForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose who plans the task: " + ", ".join(ORG_NODES) + ".")
        return redirect("task_detail", task_id=task.pk)
    org_node = form.cleaned_data["org_node"]
    _carry_out(request, lambda: plan_fresh(task=task, org_node=org_node), f"The {org_node} is planning this task.",
               level=messages.INFO)
    return redirect("task_detail", task_id=task.pk)


@login_required
@require_POST
def task_pipeline(request: HttpRequest, task_id) -> HttpResponse:
    task, role = task_for_member(request.user, task_id)
    require(role, "start_run")
    budget = BudgetForm(request.POST)
    if not budget.is_valid():
        messages.error(request, f"The budget was refused: {_form_errors(budget)}")
        return redirect("task_detail", task_id=task.pk)
    # A task imported from a DAG spec runs its spec again, never the generic pipeline.
    success = ("A new run of the imported spec was made." if task_dag_spec(task) is not None
               else "The pipeline has started: planner, then coder, then validator.")
    _carry_out(request, lambda: task_run_anew(task=task, max_cost_usd=budget.cleaned_data["max_cost_usd"]),
               success, level=messages.INFO)
    return redirect("task_detail", task_id=task.pk)


@login_required
@require_POST
def run_start_view(request: HttpRequest, run_id) -> HttpResponse:
    run, role = run_for_member(request.user, run_id)
    require(role, "start_run")
    budget = BudgetForm(request.POST)
    if not budget.is_valid():
        messages.error(request, f"The budget was refused: {_form_errors(budget)}")
        return redirect("task_detail", task_id=run.task_id)
    return _act(request, run, lambda: run_start(run=run, max_cost_usd=budget.cleaned_data["max_cost_usd"]),
                lambda: _started_words(run))


def _started_words(run: WorkGraphRun) -> str:
    run.refresh_from_db(fields=["status", "queued_at"])
    position = run_queue_position(run)
    if position is None:
        return "The run has started."
    return f"The run is queued, position {position}: it starts when a run under way ends."


@login_required
@require_POST
def run_cancel_view(request: HttpRequest, run_id) -> HttpResponse:
    run, role = run_for_member(request.user, run_id)
    require(role, "cancel_run")
    return _act(request, run, lambda: run_cancel(run=run, by=request.user), "The run is being cancelled.")


@login_required
@require_POST
def run_fork_view(request: HttpRequest, run_id) -> HttpResponse:
    run, role = run_for_member(request.user, run_id)
    require(role, "fork_run")
    form = ForkForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose the node to fork from.")
        return redirect("task_detail", task_id=run.task_id)
    try:
        fork = run_fork(run=run, node_id=form.cleaned_data["node_id"], by=request.user)
    except (EngineError, WorkGraphError) as error:
        messages.error(request, str(error))
        return redirect("task_detail", task_id=run.task_id)
    node_id = form.cleaned_data["node_id"]
    messages.success(request, f"Forked from {node_id}: only that node and its dependants run again.")
    return redirect("run_graph", run_id=fork.run_id)


@login_required
@require_POST
def run_review_view(request: HttpRequest, run_id, decision: str) -> HttpResponse:
    run, role = run_for_member(request.user, run_id)
    require(role, "review_plan")
    form = ReviewForm(request.POST)
    comment = form.cleaned_data["comment"] if form.is_valid() else ""
    if decision == "reject" and not comment.strip():
        messages.error(request, REASON_NEEDED)
        return redirect("run_planning", run_id=run.run_id)
    wait = run_approval_wait(run)
    append = wait.label if wait is not None and wait.stage == APPEND_STAGE else None
    if decision == "reject":
        return _act(request, run, lambda: run_plan_reject(run=run, reviewer=request.user, comment=comment),
                    f"Rejected {append}: the run ends rejected." if append else "Plan rejected: the run ends rejected.",
                    to="run_planning")
    # "Approve and run": a reviewer who may also start runs starts this one with the approval.
    start = bool(request.POST.get("start")) and can(role, "start_run")

    def approve() -> None:
        approved = run_plan_approve(run=run, reviewer=request.user, comment=comment)
        if start and approved.status == WorkGraphRun.Status.READY:
            run_start(run=approved)

    if append:
        success = f"Approved {append}: its nodes go on with the run."
    elif start or run.pipeline or run.fork_edit:
        success = "Plan approved; the run has started."
    else:
        success = "Plan approved. A lead starts the run."
    # An approved run is watched on its graph, whichever page it was approved on.
    return _act(request, run, approve, success, to="run_graph", go_back=False)


def _carry_out(request: HttpRequest, action, success: str | Callable[[], str], *,
               level: int = messages.SUCCESS) -> None:
    """Run ``action``; tell the person ``success`` (or what it returns, once the action is done), or why
    the console refused."""
    try:
        action()
    except TaskBusyError:
        messages.error(request, f"Refused: {RUN_UNDER_WAY[0].lower()}{RUN_UNDER_WAY[1:]}")
    except WorkGraphError as error:
        messages.error(request, str(error))
    else:
        messages.add_message(request, level, success() if callable(success) else success)


def _act(
    request: HttpRequest, run: WorkGraphRun, action, success: str | Callable[[], str], *, to: str = "task_detail",
    go_back: bool = True,
) -> HttpResponse:
    """Carry out ``action``; then go back to the page the form was on (its ``next``), else to ``to``."""
    _carry_out(request, action, success)
    if to in ("run_planning", "run_graph"):
        where = reverse(to, args=[run.run_id])
    else:
        where = reverse("task_detail", args=[run.task_id])
    return redirect_back(request, where) if go_back else redirect(where)


def _form_errors(form: forms.Form) -> str:
    return " ".join(str(error) for errors in form.errors.values() for error in errors)
