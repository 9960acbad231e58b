"""A run's ``cost_usd`` is the sum of its attempts' costs, kept by the one writer of those costs
(graphs.runs.accounting): after a run's nodes and judges, a planning call, the budget's check after
each call and a budget stop, it equals what summing the attempts gives — empty while no call reported
a cost, 0 when the calls reported that they cost nothing."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db.models import Sum

from graphs.agents import AgentResult
from graphs.engine import plan_fresh, run_start
from graphs.models import WorkGraphRun
from tests.factories import ProjectFactory, TaskFactory
from tests.run_builders import edges_for, node, planned_run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("sandbox_writable")]


def _chain(*node_ids: str) -> dict:
    nodes = [node(node_id, *node_ids[index - 1:index]) for index, node_id in enumerate(node_ids)]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def _costing(cost: float | None):
    def reply(call):
        return AgentResult(text=f"done: {call.node['node_id']}", raw={}, usage=None, cost_usd=cost)
    return reply


def _totals(run: WorkGraphRun) -> tuple[Decimal | None, Decimal | None]:
    """The run's kept cost, and its attempts' costs summed as the database sums them."""
    run = WorkGraphRun.objects.get(pk=run.pk)
    return run.cost_usd, run.executions.aggregate(total=Sum("cost_usd"))["total"]


def _ran(task, scripted_runner, inline_executor, costs: dict[str, float | None], *, budget: str = "") -> WorkGraphRun:
    for node_id, cost in costs.items():
        scripted_runner.replies[("node", node_id)] = _costing(cost)
    run = planned_run(task, _chain(*costs))
    if budget:
        WorkGraphRun.objects.filter(pk=run.pk).update(max_cost_usd=Decimal(budget))
    run_start(run=run)
    inline_executor.drain()
    return run


def test_the_runs_nodes_costs_add_up_on_the_run(task, scripted_runner, inline_executor):
    run = _ran(task, scripted_runner, inline_executor, {"a": 0.125, "b": None, "c": 0.0105})

    kept, summed = _totals(run)
    assert kept == summed == Decimal("0.1355")


def test_a_judges_cost_is_the_attempts_and_so_the_runs(task, scripted_runner, inline_executor):
    scripted_runner.replies[("judge", "a")] = lambda call: AgentResult(
        text='```json\n{"ok": true, "issues": []}\n```', raw={}, usage=None, cost_usd=0.5)
    nodes = [node("a", judgment={"kind": "llm", "judge_prompt": "Review it."})]
    scripted_runner.replies[("node", "a")] = _costing(0.25)
    run = planned_run(task, {"nodes": nodes, "edges": []})
    run_start(run=run)
    inline_executor.drain()

    kept, summed = _totals(run)
    assert kept == summed == Decimal("0.75")


def test_calls_that_report_no_cost_leave_the_run_without_one_and_free_calls_make_it_zero(
    task, scripted_runner, inline_executor
):
    unreported = _ran(task, scripted_runner, inline_executor, {"a": None, "b": None})
    free = _ran(TaskFactory(project=task.project), scripted_runner, inline_executor, {"c": 0.0, "d": 0.0})

    assert _totals(unreported) == (None, None)
    assert _totals(free) == (Decimal(0), Decimal(0))


def test_the_budgets_write_after_each_call_is_not_counted_twice(task, scripted_runner, inline_executor):
    run = _ran(task, scripted_runner, inline_executor, {"a": 0.3, "b": 0.2}, budget="5")

    kept, summed = _totals(run)
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
    assert kept == summed == Decimal("0.5")


def test_a_run_stopped_by_its_budget_keeps_what_it_spent(task, scripted_runner, inline_executor):
    run = _ran(task, scripted_runner, inline_executor, {"a": 0.3, "b": 0.3, "c": 0.3}, budget="0.5")

    kept, summed = _totals(run)
    assert WorkGraphRun.objects.get(pk=run.pk).error_code == "budget_exceeded"
    assert kept == summed == Decimal("0.6")


def test_a_planning_calls_cost_is_on_its_run(alice, claude_cli, inline_executor):
    claude_cli("plan_prose_fenced.json")
    run = plan_fresh(task=TaskFactory(project=ProjectFactory(), created_by=alice))
    inline_executor.drain()

    kept, summed = _totals(run)
    assert summed is not None and summed > 0
    assert kept == summed


def test_a_planning_call_stopped_by_the_budget_is_on_its_run(alice, claude_cli, inline_executor):
    claude_cli("plan_prose_fenced.json")
    run = plan_fresh(task=TaskFactory(project=ProjectFactory(max_run_cost_usd=Decimal("0.1")), created_by=alice))
    inline_executor.drain()

    kept, summed = _totals(run)
    assert WorkGraphRun.objects.get(pk=run.pk).error_code == "budget_exceeded"
    assert kept == summed == Decimal("0.2113")
