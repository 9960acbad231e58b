"""Comparing two runs of a task: the nodes one manifest has and the other lacks, each node's latest
attempt in either run with its status and duration and the change, and what each run cost; the older
run on the left; runs of two tasks are the console's own page saying why; non-members get 404; the
queries do not grow with the nodes; the task page links each run to the one before it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from graphs.engine import run_fork, run_start
from graphs.models import WorkGraphRun, WorkNodeExecution
from tests import factories
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert(1)</script>'
START = datetime(2025, 6, 1, 10, tzinfo=UTC)


@pytest.fixture
def client(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def run_of(task, *node_ids: str, at: datetime = START) -> WorkGraphRun:
    run = planned_run(task, {"nodes": [node(node_id) for node_id in node_ids], "edges": []}, status="succeeded")
    WorkGraphRun.objects.filter(pk=run.pk).update(created_at=at)
    run.refresh_from_db()
    return run


def attempt(run, node_id: str, number: int = 1, *, seconds: float = 1.0, status: str = "succeeded",
            cost: str | None = None) -> WorkNodeExecution:
    return WorkNodeExecution.objects.create(
        run=run, node_id=node_id, subagent_type="planner", attempt=number, status=status,
        started_at=START, finished_at=START + timedelta(seconds=seconds),
        agent_calls=1 if cost else 0, cost_usd=Decimal(cost) if cost else None,
    )


def test_it_lines_up_both_manifests_nodes_with_their_latest_attempts_and_costs(client, task):
    old = run_of(task, "brief", "draft", "dropped")
    new = run_of(task, "brief", "draft", "extra", at=START + timedelta(hours=1))
    attempt(old, "brief", seconds=2, cost="0.0100")
    attempt(old, "draft", seconds=3, status="failed", cost="0.0200")
    attempt(old, "dropped", seconds=1)
    attempt(new, "brief", seconds=1.5, cost="0.0100")
    attempt(new, "draft", 1, seconds=9, status="failed", cost="0.0050")
    attempt(new, "draft", 2, seconds=4, cost="0.0050")

    response = client.get(f"/runs/{old.run_id}/compare/{new.run_id}/")

    assert response.status_code == 200
    comparison = response.context["comparison"]
    assert comparison.added == ["extra"] and comparison.removed == ["dropped"]
    rows = {row.node_id: row for row in comparison.nodes}
    assert [row.node_id for row in comparison.nodes] == ["brief", "draft", "dropped", "extra"]
    assert (rows["draft"].old_status, rows["draft"].new_status, rows["draft"].new.attempt) == ("failed", "succeeded", 2)
    assert rows["draft"].status_changed and not rows["brief"].status_changed
    assert rows["brief"].duration_change_text() == "\N{MINUS SIGN}0.5 s"
    assert rows["draft"].duration_change_text() == "+1.0 s"
    assert (rows["extra"].old_status, rows["extra"].new_status) == (None, "not_started")
    assert (rows["dropped"].new_status, rows["dropped"].duration_change_text()) == (None, "")
    assert comparison.old_spend.cost_usd == Decimal("0.0300") and comparison.new_spend.cost_usd == Decimal("0.0200")
    assert comparison.cost_change_text() == "\N{MINUS SIGN}$0.0100"
    html = response.content.decode()
    assert "$0.0300 → $0.0200" in html and "(\N{MINUS SIGN}$0.0100)" in html
    assert 'data-node-id="extra" data-presence="added"' in html
    assert 'data-node-id="dropped" data-presence="removed"' in html
    draft_old, draft_new = rows["draft"].old.node_exec_id, rows["draft"].new.node_exec_id
    assert f'href="/executions/{draft_old}/compare/{draft_new}/">compare attempts</a>' in html


def test_a_forks_reused_nodes_read_reused_not_a_time_difference(client, task, scripted_runner, inline_executor):
    manifest = {"nodes": [node("brief"), node("draft", "brief")]}
    manifest["edges"] = edges_for(manifest["nodes"])
    old = planned_run(task, manifest)
    run_start(run=old)
    inline_executor.drain()
    WorkNodeExecution.objects.filter(run=old, node_id="brief").update(finished_at=START + timedelta(seconds=8),
                                                                     started_at=START)
    new = run_fork(run=WorkGraphRun.objects.get(pk=old.pk), node_id="draft")
    inline_executor.drain()

    response = client.get(f"/runs/{old.run_id}/compare/{new.run_id}/")

    rows = {row.node_id: row for row in response.context["comparison"].nodes}
    assert (rows["brief"].new.reused, rows["brief"].duration_change_text()) == (True, "reused")
    assert not rows["draft"].new.reused and rows["draft"].duration_change_text() != "reused"
    html = response.content.decode()
    brief = html[html.index('data-node-id="brief"'):html.index('data-node-id="draft"')]
    assert "8.0 s" in brief and "#1 · reused" in brief and "<span data-duration-change>reused</span>" in brief
    assert "\N{MINUS SIGN}" not in brief


def test_the_older_run_is_on_the_left_whichever_way_the_link_names_them(client, task):
    old, new = run_of(task, "a"), run_of(task, "a", at=START + timedelta(days=1))
    response = client.get(f"/runs/{new.run_id}/compare/{old.run_id}/")
    assert (response.context["old"], response.context["new"]) == (old, new)


def test_node_ids_agents_wrote_are_escaped(client, task):
    old, new = run_of(task, HOSTILE), run_of(task, "b", at=START + timedelta(hours=1))
    html = client.get(f"/runs/{old.run_id}/compare/{new.run_id}/").content.decode()
    assert HOSTILE not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_runs_of_two_tasks_get_the_consoles_page_saying_why(client, task, project, alice):
    other = factories.TaskFactory(project=project, created_by=alice)
    response = client.get(f"/runs/{run_of(task, 'a').run_id}/compare/{run_of(other, 'a').run_id}/")
    assert response.status_code == 404
    assert response.templates[0].name == "console/compare_runs.html"
    assert "two different tasks" in response.content.decode()


def test_someone_outside_the_project_gets_404(task, charlie):
    old, new = run_of(task, "secret_node"), run_of(task, "secret_node", at=START + timedelta(hours=1))
    client = Client()
    client.force_login(charlie)
    response = client.get(f"/runs/{old.run_id}/compare/{new.run_id}/")
    assert response.status_code == 404
    assert "secret_node" not in response.content.decode()


def test_a_run_of_another_project_is_404_to_a_member_of_this_one(client, task):
    elsewhere = run_of(factories.TaskFactory(), "theirs")
    assert client.get(f"/runs/{run_of(task, 'a').run_id}/compare/{elsewhere.run_id}/").status_code == 404


def test_the_queries_do_not_grow_with_the_nodes(client, task):
    def queries_for(count: int) -> int:
        node_ids = [f"n{index}" for index in range(count)]
        old, new = run_of(task, *node_ids), run_of(task, *node_ids, "added", at=START + timedelta(hours=1))
        for node_id in node_ids:
            attempt(old, node_id, cost="0.0010")
            attempt(new, node_id, 1, status="failed")
            attempt(new, node_id, 2)
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/runs/{old.run_id}/compare/{new.run_id}/").status_code == 200
        return len(queries)

    assert queries_for(2) == queries_for(25)


def test_the_task_page_links_every_run_but_the_first_to_the_run_before_it(client, task):
    first = run_of(task, "a")
    second = run_of(task, "a", at=START + timedelta(hours=1))
    third = run_of(task, "a", at=START + timedelta(hours=2))
    html = client.get(f"/tasks/{task.pk}/").content.decode()
    assert f'href="/runs/{first.run_id}/compare/{second.run_id}/">Compare with previous run</a>' in html
    assert f'href="/runs/{second.run_id}/compare/{third.run_id}/">Compare with previous run</a>' in html
    assert html.count("Compare with previous run") == 2
