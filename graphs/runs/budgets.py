"""Run budgets: what a run may still spend on agent calls, and stopping it once its spend reaches that.

A run's budget (``max_cost_usd``) is its project's ``max_run_cost_usd`` unless it was started with its
own. Before each call the remaining budget goes to the agent (the Claude CLI's ``--max-budget-usd``);
after each call the attempt's spend so far is written and the run's total compared with the budget.
A run without a budget costs no query here.

The total counts what the run's attempts have written: another attempt running at the same moment
adds its spend when its own call ends, so parallel calls can together pass the budget by what they
were each allowed — the stop then comes as the first of them ends.
"""

from __future__ import annotations

from decimal import Decimal

from django.db import transaction
from django.db.models import Sum

from graphs.models import WorkGraphRun, WorkNodeExecution
from graphs.notifications import BUDGET_EXCEEDED, notify
from graphs.runs.accounting import accounting_of, run_cost_write
from graphs.runs.status import run_stop


class BudgetSpentError(Exception):
    """The run has nothing left to spend: the call was not made, and the run is stopping."""


def budget_for_call(execution: WorkNodeExecution) -> float | None:
    """What the attempt's next call may spend (None: no budget). A run with nothing left is stopped
    and ``BudgetSpentError`` raised instead."""
    budget = execution.run.max_cost_usd
    if budget is None:
        return None
    spent = _run_spent(execution)
    if spent >= budget:
        budget_stop(execution.run, spent=spent)
        raise BudgetSpentError(budget_exceeded_message(budget, spent))
    return float(budget - spent)


def budget_check_after_call(execution: WorkNodeExecution) -> bool:
    """Write the attempt's spend so far and stop its run if the budget is spent; return whether it is."""
    run = execution.run
    if run.max_cost_usd is None:
        return False
    with transaction.atomic():
        WorkNodeExecution.objects.filter(pk=execution.pk).update(**accounting_of(execution))
        run_cost_write(execution)
    spent = _run_spent(execution)
    if spent < run.max_cost_usd:
        return False
    budget_stop(run, spent=spent)
    return True


def budget_stop(run: WorkGraphRun, *, spent: Decimal) -> None:
    """Stop the run for its budget: it ends ``failed`` with ``budget_exceeded`` once nothing runs."""
    notify(BUDGET_EXCEEDED, run=run, budget_usd=str(run.max_cost_usd), spent_usd=str(spent))
    run_stop(run_id=run.pk, error_code=WorkGraphRun.StopCode.BUDGET_EXCEEDED,
             error=budget_exceeded_message(run.max_cost_usd, spent))


def budget_exceeded_message(budget: Decimal | None, spent: Decimal) -> str:
    return f"the run's budget of ${budget:.4f} is spent: its agent calls cost ${spent:.4f}"


def _run_spent(execution: WorkNodeExecution) -> Decimal:
    """The run's spend: every other attempt as written, this one as it stands in memory."""
    others = (
        WorkNodeExecution.objects.filter(run_id=execution.run_id).exclude(pk=execution.pk)
        .aggregate(total=Sum("cost_usd"))["total"]
    )
    return (others or Decimal(0)) + (execution.cost_usd or Decimal(0))
