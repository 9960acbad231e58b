"""A run's budget: each Claude call is told what is left of it, and a run whose agent calls spend it
stops — nothing new starts, running agents are stopped — and ends failed with ``budget_exceeded``
and the budget and spend named. A call that failed after spending is paid for all the same."""

from __future__ import annotations

import json
import threading
from decimal import Decimal
from html import escape

import pytest

from graphs.agents import AgentResult
from graphs.engine import plan_fresh, run_start, run_wait_finished
from graphs.executors import ThreadExecutor, executor_set
from graphs.models import Task, WorkGraphRun
from tests.clients import signed_in
from tests.factories import ProjectFactory, TaskFactory
from tests.run_builders import edges_for, latest, node, planned_run
from tests.scripted_agents import wait_for_cancel

# The fake CLI records its call, and waits for its gates, in the test's folder.
pytestmark = pytest.mark.usefixtures("sandbox_writable")

# What each call of the fake CLI's fixtures reports it cost (their result events' total_cost_usd).
CALL_COST = Decimal("0.2113")


def post(client, url: str, body: dict):
    return client.post(url, data=json.dumps(body), content_type="application/json")


def chain(*node_ids: str) -> dict:
    nodes = [node(node_id, *node_ids[index - 1:index]) for index, node_id in enumerate(node_ids)]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def budgeted_run(task, manifest: dict, budget: str) -> WorkGraphRun:
    run = planned_run(task, manifest)
    WorkGraphRun.objects.filter(pk=run.pk).update(max_cost_usd=Decimal(budget))
    run.refresh_from_db()
    return run


@pytest.mark.django_db
def test_a_run_takes_its_projects_budget_unless_it_is_given_its_own(alice, inline_executor):
    project = ProjectFactory(max_run_cost_usd=Decimal("5"))
    planned = plan_fresh(task=TaskFactory(project=project, created_by=alice))
    own = plan_fresh(task=TaskFactory(project=project, created_by=alice), max_cost_usd=Decimal("1.25"))
    unbudgeted = plan_fresh(task=TaskFactory(project=ProjectFactory(), created_by=alice))

    assert (planned.max_cost_usd, own.max_cost_usd, unbudgeted.max_cost_usd) == (Decimal("5"), Decimal("1.25"), None)


@pytest.mark.django_db
def test_a_run_started_with_a_budget_replaces_the_one_it_was_planned_with(task, scripted_runner, inline_executor):
    run = budgeted_run(task, chain("a"), "5")

    run_start(run=run, max_cost_usd=Decimal("0.75"))

    assert WorkGraphRun.objects.get(pk=run.pk).max_cost_usd == Decimal("0.75")


@pytest.mark.django_db
def test_each_claude_call_is_told_what_is_left_of_the_budget(task, claude_cli, inline_executor, monkeypatch, tmp_path):
    record = tmp_path / "record.json"
    monkeypatch.setenv("FAKE_CLAUDE_RECORD", str(record))
    claude_cli("plan_prose_fenced.json")
    run = budgeted_run(task, chain("a", "b"), "1")

    run_start(run=run)
    inline_executor.drain()

    argv = json.loads(record.read_text())["argv"]
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
    # The second node's call was sent the budget less what the first one cost.
    assert argv[argv.index("--max-budget-usd") + 1] == "0.7887"


@pytest.mark.django_db
def test_a_run_whose_calls_spend_its_budget_stops_and_fails_with_the_budget_and_spend_named(
    task, claude_cli, inline_executor
):
    claude_cli("plan_prose_fenced.json")
    run = budgeted_run(task, chain("a", "b", "c"), "0.4")

    run_start(run=run)
    inline_executor.drain()

    run.refresh_from_db()
    rows = latest(run)
    message = f"the run's budget of $0.4000 is spent: its agent calls cost ${2 * CALL_COST}"
    assert (run.status, run.error_code, run.error) == ("failed", "budget_exceeded", message)
    # The call that spent the budget was paid for: its output is kept. Nothing started after it.
    assert rows["a"].status == rows["b"].status == "succeeded"
    assert rows["b"].cost_usd == CALL_COST
    assert (rows["c"].status, rows["c"].error, rows["c"].agent_calls) == ("cancelled", f"stopped: {message}", 0)
    task = Task.objects.get(pk=task.pk)
    assert task.status == "failed" and task.outcome["error"] == message


@pytest.mark.django_db(transaction=True)
def test_a_running_agent_is_stopped_when_another_call_spends_the_budget(task, scripted_runner, settings):
    settings.WORKGRAPH_HEARTBEAT_SECONDS = 0.05
    slow_started = threading.Event()

    def slow(call):
        slow_started.set()
        return wait_for_cancel(call)

    def costly(call):
        assert slow_started.wait(10), "the slow node never started"
        return AgentResult(text="done", raw={}, usage={"input_tokens": 900, "output_tokens": 100}, cost_usd=0.6)

    scripted_runner.replies[("node", "slow")] = slow
    scripted_runner.replies[("node", "costly")] = costly
    run = budgeted_run(task, {"nodes": [node("slow"), node("costly"), node("after", "costly")], "edges": []}, "0.5")
    previous = executor_set(ThreadExecutor(workers=2))
    try:
        run_start(run=run)
        run = run_wait_finished(run_id=run.run_id, timeout=15)
    finally:
        executor_set(previous)

    rows = latest(run)
    message = "the run's budget of $0.5000 is spent: its agent calls cost $0.6000"
    assert (run.status, run.error_code, run.error) == ("failed", "budget_exceeded", message)
    assert (rows["slow"].status, rows["slow"].error) == ("cancelled", f"stopped: {message}")
    assert rows["after"].status == "cancelled"
    assert ("node", "after", 1) not in scripted_runner.calls


@pytest.mark.django_db
def test_a_call_the_cli_stopped_at_its_budget_is_paid_for_and_stops_the_run(task, claude_cli, inline_executor):
    claude_cli("max_budget.json")
    run = budgeted_run(task, chain("a", "b"), "1")

    run_start(run=run)
    inline_executor.drain()

    run.refresh_from_db()
    failed = latest(run)["a"]
    assert "agent error (budget)" in failed.error
    assert (failed.agent_calls, failed.cost_usd) == (1, Decimal("1.0214"))
    assert failed.input_tokens > 0
    assert (run.status, run.error_code) == ("failed", "budget_exceeded")
    assert "cost $1.0214" in run.error
    assert latest(run)["b"].status == "cancelled"


@pytest.mark.django_db
def test_a_call_stopped_at_its_turn_limit_keeps_its_tokens_and_cost(task, claude_cli, inline_executor):
    claude_cli("max_turns.json")
    run = planned_run(task, chain("a"))

    run_start(run=run)
    inline_executor.drain()

    failed = latest(run)["a"]
    assert failed.status == "failed" and "agent error (max_turns)" in failed.error
    assert (failed.agent_calls, failed.cost_usd) == (1, CALL_COST)
    assert failed.num_turns > 0 and failed.output_tokens > 0


@pytest.mark.django_db
def test_a_planning_call_that_spends_the_budget_ends_the_run_before_any_node_runs(alice, claude_cli, inline_executor):
    claude_cli("plan_prose_fenced.json")
    task = TaskFactory(project=ProjectFactory(max_run_cost_usd=Decimal("0.1")), created_by=alice)

    run = plan_fresh(task=task)
    inline_executor.drain()

    run.refresh_from_db()
    planning = run.executions.get()
    assert (run.status, run.error_code) == ("failed", "budget_exceeded")
    assert run.error == f"the run's budget of $0.1000 is spent: its agent calls cost ${CALL_COST}"
    assert (planning.status, planning.cost_usd) == ("cancelled", CALL_COST)
    assert run.graph_manifest in ({}, None) or not run.graph_manifest.get("nodes")


@pytest.mark.django_db
def test_the_api_starts_a_run_with_its_own_budget_and_refuses_one_that_is_not_positive(
    task, alice, scripted_runner, inline_executor
):
    api = signed_in(alice)
    ready = budgeted_run(TaskFactory(project=task.project, created_by=alice), chain("a"), "5")

    refused = post(api, f"/api/tasks/{task.pk}/pipeline", {"max_cost_usd": 0})
    accepted = post(api, f"/api/tasks/{task.pk}/pipeline", {"max_cost_usd": "2.5"})
    started = post(api, f"/api/runs/{ready.run_id}/start", {"max_cost_usd": 0.75})

    assert refused.status_code == 400 and refused.json()["fields"][0]["field"] == "max_cost_usd"
    assert accepted.status_code == 202
    assert task.runs.get().max_cost_usd == Decimal("2.5")
    assert started.status_code == 200
    assert (Decimal(str(started.json()["max_cost_usd"])), started.json()["error_code"]) == (Decimal("0.75"), "")


@pytest.mark.django_db
def test_the_pages_start_a_run_with_its_own_budget_and_show_a_stopped_one_prominently(
    task, alice, claude_cli, inline_executor
):
    client = signed_in(alice)
    claude_cli("plan_prose_fenced.json")
    run = budgeted_run(task, chain("a", "b"), "5")

    refused = client.post(f"/runs/{run.run_id}/start/", {"max_cost_usd": "-1"}, follow=True)
    assert WorkGraphRun.objects.get(pk=run.pk).status == "ready"
    assert "The budget was refused" in refused.content.decode()
    client.post(f"/runs/{run.run_id}/start/", {"max_cost_usd": "0.3"})
    inline_executor.drain()

    message = escape(f"the run's budget of $0.3000 is spent: its agent calls cost ${2 * CALL_COST}")
    task_page = client.get(f"/tasks/{task.pk}/").content.decode()
    run_page = client.get(f"/runs/{run.run_id}/").content.decode()
    banner = f'class="banner error" role="alert" data-budget-exceeded>Budget exceeded — {message}</p>'
    assert f"<p {banner}" in task_page
    assert "budget $0.3000" in task_page
    assert f'<p id="run-stopped" {banner}' in run_page
    assert client.get(f"/runs/{run.run_id}/graph.json").json()["run"]["error_code"] == "budget_exceeded"
