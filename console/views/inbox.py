"""The inbox ("Waiting on you"), the navigation's count of it alone, and the form that raises a stopped run's
budget and resumes it."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_POST

from console.permissions import run_for_member
from console.views.common import redirect_back
from graphs.engine.budget_resume import BudgetResumeRefused, run_budget_raise_resume
from graphs.reads.inbox import APPROVAL, BUDGET, CHANGE_REVIEW, EXTERNAL, InboxItem, inbox_items
from graphs.reads.live import runs_fingerprint_read

ACT_WORDS = {APPROVAL: "Review", EXTERNAL: "Open the node", BUDGET: "Raise the budget",
             CHANGE_REVIEW: "Review the change"}


class BudgetRaiseForm(forms.Form):
    """The budget a stopped run resumes with: above what it spent (the domain checks that)."""

    max_cost_usd = forms.DecimalField(label="New budget (USD)", min_value=0, max_digits=12, decimal_places=4)


def inbox_link(item: InboxItem) -> str:
    """Where a person acts on ``item``: the plan's review, the waiting attempt, the change to review (its
    diff), the run stopped."""
    if item.kind == APPROVAL:
        return reverse("run_planning", kwargs={"run_id": item.run_id})
    if item.kind == EXTERNAL:
        return reverse("execution_detail", kwargs={"node_exec_id": item.node_exec_id})
    if item.kind == CHANGE_REVIEW:
        return reverse("execution_detail", kwargs={"node_exec_id": item.node_exec_id}) + "#changes"
    return reverse("run_graph", kwargs={"run_id": item.run_id})


@login_required
def inbox(request: HttpRequest) -> HttpResponse:
    activity = runs_fingerprint_read(user=request.user)  # read first: it never holds a change the list misses
    items = [(item, inbox_link(item), ACT_WORDS[item.kind]) for item in inbox_items(request.user)]
    return render(request, "console/inbox.html", {"items": items, "activity": activity})


@login_required
def inbox_count_badge(request: HttpRequest) -> HttpResponse:
    """The navigation's inbox count alone, as every page renders it: what nav-inbox.js swaps in when the
    inbox socket says the count changed."""
    response = render(request, "console/_inbox_count.html")
    patch_cache_control(response, private=True, no_store=True)
    return response


@login_required
@require_POST
def run_budget_resume_view(request: HttpRequest, run_id) -> HttpResponse:
    run, _ = run_for_member(request.user, run_id)
    form = BudgetRaiseForm(request.POST)
    if not form.is_valid():
        errors = " ".join(str(error) for errors in form.errors.values() for error in errors)
        messages.error(request, f"The budget was refused: {errors}")
    else:
        try:
            run_budget_raise_resume(run_id=run.pk, user=request.user, max_cost_usd=form.cleaned_data["max_cost_usd"])
        except BudgetResumeRefused as refused:
            messages.error(request, f"Refused: {refused}")
        else:
            messages.success(request, f"Budget raised to ${form.cleaned_data['max_cost_usd']:.4f}: the run goes on.")
    return redirect_back(request, reverse("run_graph", args=[run.pk]))
