"""Every agent call is accounted on its attempt — node, judge and planning calls alike — and summed per
run and per org node in the database."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from graphs.agents import AgentError, AgentResult
from graphs.engine import run_start
from graphs.logs import events
from graphs.planning.planner import plan_work_graph
from graphs.runs.accounting import spend_by_org_node, spend_of
from tests import factories
from tests.clients import signed_in
from tests.graph_json import graph_json
from tests.run_builders import edges_for, latest, node, planned_run
from tests.test_agent_openai import _call, _runner, endpoint  # noqa: F401  (the stand-in server fixture)

pytestmark = pytest.mark.django_db

JUDGED = {"kind": "llm", "judge_prompt": "Judge {content}"}


def result(text: str, **accounting) -> AgentResult:
    return AgentResult(text=text, raw={"scripted": True}, **accounting)


def test_a_node_call_and_its_judge_add_up_on_the_attempt(task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "a")] = result(
        "done", usage={"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 7,
                       "cache_read_input_tokens": 5},
        cost_usd=0.01, num_turns=3, model="claude-sonnet-4-5", session_id="s-1", tool_calls=2, duration_api_ms=500,
    )
    scripted_runner.replies[("judge", "a")] = result(
        '{"ok": true, "issues": []}', usage={"input_tokens": 10, "output_tokens": 2}, cost_usd=0.001, num_turns=1,
    )
    run = planned_run(task, {"nodes": [node("a", judgment=JUDGED)], "edges": []})
    run_start(run=run)
    inline_executor.drain()

    attempt = latest(run)["a"]
    assert attempt.status == "succeeded"
    assert (attempt.agent_calls, attempt.input_tokens, attempt.output_tokens) == (2, 110, 22)
    assert (attempt.cache_creation_input_tokens, attempt.cache_read_input_tokens) == (7, 5)
    assert attempt.cost_usd == Decimal("0.011")
    assert (attempt.num_turns, attempt.tool_calls, attempt.duration_api_ms) == (4, 2, 500)
    assert (attempt.model, attempt.session_id) == ("claude-sonnet-4-5", "s-1")


def test_a_run_sums_every_attempt_planning_included_per_org_node(task, scripted_runner, inline_executor, alice):
    scripted_runner.replies[("plan", "planner")] = result(
        '{"graph_manifest": {"nodes": [{"node_id": "a", "depends_on": [], "task_prompt": "Do a.",'
        ' "subagent_type": "coder"}], "edges": []}}',
        usage={"input_tokens": 1000, "output_tokens": 300}, cost_usd=0.05,
    )
    scripted_runner.replies[("node", "a")] = result("done", usage={"input_tokens": 40, "output_tokens": 4},
                                                    cost_usd=0.002)
    run = plan_work_graph("planner", task, task.goal_text).run
    run_start(run=run)
    inline_executor.drain()

    spend = spend_of(run.executions.all())
    assert (spend.agent_calls, spend.cost_usd) == (2, Decimal("0.052"))
    assert spend.usage == {"input_tokens": 1040, "output_tokens": 304, "cache_creation_input_tokens": 0,
                           "cache_read_input_tokens": 0}
    by_org = spend_by_org_node(run.executions.all())
    assert {org: part.cost_usd for org, part in by_org.items()} == {"planner": Decimal("0.05"),
                                                                     "coder": Decimal("0.002")}
    detail = signed_in(alice).get(f"/api/runs/{run.run_id}").json()
    assert (Decimal(str(detail["cost_usd"])), detail["usage"]["input_tokens"]) == (Decimal("0.052"), 1040)
    assert Decimal(str(detail["by_org_node"]["coder"]["cost_usd"])) == Decimal("0.002")
    executions = {row["node_id"]: row for row in detail["executions"]}
    assert executions["a"]["input_tokens"] == 40 and executions["a"]["agent_calls"] == 1
    page = signed_in(alice).get(f"/tasks/{task.pk}/").content.decode()
    assert "$0.0520 · 1,344 tokens · 2 agent calls" in page


def test_a_call_without_a_reported_cost_counts_its_tokens_and_leaves_the_cost_empty(
    task, scripted_runner, inline_executor
):
    scripted_runner.replies[("node", "a")] = result("done", usage={"prompt_tokens": 21, "completion_tokens": 9})
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    run_start(run=run)
    inline_executor.drain()

    attempt = latest(run)["a"]
    assert (attempt.input_tokens, attempt.output_tokens, attempt.cost_usd) == (21, 9, None)
    assert spend_of(run.executions.all()).cost_usd is None


def test_the_run_totals_take_the_same_queries_for_ten_and_a_thousand_attempts(task, scripted_runner,
                                                                                inline_executor):
    counts = []
    for width in (10, 1000):
        nodes = [node(f"n{i}") for i in range(width)]
        run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
        with CaptureQueriesContext(connection) as queries:
            spend_of(run.executions.all())
            spend_by_org_node(run.executions.all())
        counts.append(len(queries))
    assert counts == [2, 2]


def test_the_openai_runner_prices_a_call_from_the_price_table(endpoint, settings):  # noqa: F811
    settings.WORKGRAPH_MODEL_PRICES = {"test-model": (2.0, 8.0)}

    priced = _runner(endpoint).run(_call())

    assert priced.model == "test-model"
    assert priced.cost_usd == pytest.approx((21 * 2.0 + 9 * 8.0) / 1_000_000)
    settings.WORKGRAPH_MODEL_PRICES = {}
    assert _runner(endpoint).run(_call()).cost_usd is None


def test_the_offline_agent_costs_nothing(task, settings, inline_executor):
    settings.WORKGRAPH_AGENT = "offline"
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    run_start(run=run)
    inline_executor.drain()

    attempt = latest(run)["a"]
    assert (attempt.agent_calls, attempt.cost_usd) == (1, Decimal(0))


def test_a_task_sums_every_run_and_a_project_every_task_on_the_api_and_the_pages(
    task, project, scripted_runner, inline_executor, alice
):
    scripted_runner.replies[("node", "a")] = result("done", usage={"input_tokens": 50, "output_tokens": 10},
                                                    cost_usd=0.25)
    for _ in range(2):
        run = planned_run(task, {"nodes": [node("a")], "edges": []})
        run_start(run=run)
        inline_executor.drain()
    other = factories.TaskFactory(project=project, created_by=alice, title="Untouched")
    client = signed_in(alice)

    detail = client.get(f"/api/tasks/{task.pk}").json()
    listed = {item["task_id"]: item for item in client.get("/api/tasks").json()["items"]}
    [listed_project] = client.get("/api/projects").json()

    assert (Decimal(str(detail["spend"]["cost_usd"])), detail["spend"]["agent_calls"]) == (Decimal("0.5"), 2)
    assert detail["spend"]["usage"]["input_tokens"] == 100
    assert Decimal(str(listed[str(task.pk)]["spend"]["cost_usd"])) == Decimal("0.5")
    assert listed[str(other.pk)]["spend"] == {"agent_calls": 0, "cost_usd": None, "usage": dict.fromkeys(
        ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"), 0),
        "num_turns": 0, "tool_calls": 0, "calls_without_usage": 0, "calls_without_cost": 0}
    assert Decimal(str(listed_project["spend"]["cost_usd"])) == Decimal("0.5")
    assert "Spent: $0.5000 · 120 tokens · 2 agent calls" in client.get(f"/tasks/{task.pk}/").content.decode()
    task_list = client.get("/tasks/").content.decode()
    assert 'title="$0.5000 · 120 tokens · 2 agent calls">$0.5000</td>' in task_list
    assert 'title="no agent calls yet">—</td>' in task_list
    assert 'title="$0.5000 · 120 tokens · 2 agent calls">$0.5000</span>' in client.get("/").content.decode()


@pytest.mark.parametrize("url", ["/api/tasks", "/api/projects", "/tasks/", "/"])
def test_task_and_project_totals_take_the_same_queries_for_one_task_and_thirty(project, alice, url):
    client = signed_in(alice)
    counts = []
    for count in (1, 30):
        for _ in range(count):
            run = planned_run(factories.TaskFactory(project=project, created_by=alice), {"nodes": [node("a")],
                                                                                        "edges": []})
            factories.ExecutionFactory(run=run, node_id="a", status="succeeded", cost_usd=Decimal("0.1"),
                                       agent_calls=1)
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_the_run_page_shows_each_nodes_cost_and_the_runs_total(
    task, scripted_runner, inline_executor, alice, settings
):
    settings.WORKGRAPH_BACKOFF_BASE, settings.WORKGRAPH_BACKOFF_CAP = 0.01, 0.02
    # A call that failed after spending is paid for: the retry's cost adds to it.
    scripted_runner.replies[("node", "a", 1)] = AgentError("overloaded", kind="unavailable",
                                                           spent=result("", cost_usd=0.1, usage={"input_tokens": 7}))
    scripted_runner.replies[("node", "a", 2)] = result("done", cost_usd=0.05, usage={"input_tokens": 3})
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    client = signed_in(alice)

    graph = graph_json(client, run)
    page = client.get(f"/runs/{run.run_id}/").content.decode()

    [box] = [item for item in graph["nodes"] if item["node_id"] == "a"]
    assert box["cost_usd"] == pytest.approx(0.15)
    assert sorted(attempt["cost_usd"] or 0 for attempt in graph["attempts"]) == pytest.approx([0, 0.05, 0.1])
    assert '<span id="run-spend">$0.1500 · 10 tokens · 2 agent calls</span>' in page


@pytest.mark.django_db(transaction=True)
def test_an_ended_attempts_event_carries_what_it_cost_for_the_live_pages(task, scripted_runner, inline_executor,
                                                                          monkeypatch):
    heard: list[dict] = []
    monkeypatch.setattr(events, "_listeners", [heard.append])
    scripted_runner.replies[("node", "a")] = result("done", cost_usd=0.02,
                                                    usage={"input_tokens": 5, "output_tokens": 2})
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    run_start(run=run)
    inline_executor.drain()

    states = [state for event in heard if event["event"] == "nodes" for state in event["nodes"]]
    assert [state["status"] for state in states] == ["pending", "queued", "running", "succeeded"]
    assert "cost_usd" not in states[0] and "cost_usd" not in states[2]
    assert {key: states[-1][key] for key in ("cost_usd", "tokens", "agent_calls")} == {
        "cost_usd": 0.02, "tokens": 7, "agent_calls": 1}
