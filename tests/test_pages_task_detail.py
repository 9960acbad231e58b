"""The task detail to-do tree, the graph data, and query counts that do not grow with the graph."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from graphs.engine import pipeline_start, run_start
from graphs.models import WorkGraphRun, WorkNodeExecution
from tests import factories
from tests.graph_json import graph_json
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def pipeline_run(task, inline_executor) -> WorkGraphRun:
    pipeline_start(task=task)
    inline_executor.drain()
    return WorkGraphRun.objects.get(task=task)


def test_the_tree_shows_planning_calls_then_nodes_grouped_by_stage(client, pipeline_run):
    html = client.get(f"/tasks/{pipeline_run.task_id}/").content.decode()
    planner, coder, validator = (html.index(f'<h3 class="stage-title">{org}</h3>') for org in
                                 ("Planner", "Coder", "Validator"))
    assert planner < coder < validator
    for call in ("__planning__", "__planning__:coder", "__planning__:validator"):
        assert f'data-node-id="{call}"' in html
    assert html.index('data-node-id="__planning__:coder"') > coder
    assert html.index('data-node-id="brd"') < html.index('data-node-id="prd"') < html.index('data-node-id="sdd"')


def test_the_tree_shows_loop_back_attempts_with_their_cause(client, pipeline_run):
    looped = pipeline_run.executions.filter(cause="loop_back").first()
    html = client.get(f"/tasks/{pipeline_run.task_id}/").content.decode()
    assert f"attempt {looped.attempt}</a>" in html
    assert f"rerun: {looped.cause_node_id} failed its judgment" in html
    assert "2 attempts" in html
    row = html[html.index(f'<li class="todo-item" data-node-id="{looped.cause_node_id}"'):]
    assert "looped back \N{MULTIPLICATION SIGN}1" in row[: row.index("</li>")]


def test_each_failed_attempts_reason_shows_on_the_row_without_expanding(client, pipeline_run):
    failed = pipeline_run.executions.filter(status="failed").exclude(node_id__startswith="__").first()
    html = client.get(f"/tasks/{pipeline_run.task_id}/").content.decode()
    row = html[html.index(f'<li class="todo-item" data-node-id="{failed.node_id}">'):]
    row = row[: row.index("</li></ul></li>") + 5]
    failures = row[row.index("</details>"):]
    assert f'<li data-attempt="{failed.attempt}">attempt {failed.attempt}: ' in failures
    assert failed.judgment_result["issues"][0][:40] in failures


def test_agent_text_is_escaped_everywhere(client, task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "a")] = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    task.title = "<b>bold</b> title"
    task.save()
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    execution = run.executions.get(node_id="a")
    for url in (f"/tasks/{task.pk}/", f"/executions/{execution.pk}/"):
        html = client.get(url).content.decode()
        assert "<script>alert(1)" not in html and "<img src=x" not in html and "<b>bold</b>" not in html
        assert "&lt;" in html


def test_graph_json_marks_loop_back_firings_and_planning_nodes(client, pipeline_run):
    data = graph_json(client, pipeline_run)
    kinds = {n["node_id"]: n["kind"] for n in data["nodes"]}
    assert kinds["__planning__"] == kinds["__planning__:coder"] == "planning"
    assert kinds["brd"] == "catalog"
    back = [e for e in data["edges"] if e["edge_type"] == "on_failure"]
    assert back and max(e["fired"] for e in back) == 1
    assert {a["node_exec_id"] for a in data["attempts"]} == {str(pk) for pk in
                                                            pipeline_run.executions.values_list("pk", flat=True)}


def test_graph_json_names_the_attempt_statuses_the_page_reads_as_finished_and_active(client, pipeline_run):
    data = json.loads(client.get(f"/runs/{pipeline_run.run_id}/graph.json").content)

    assert set(data["statuses"]["finished"]) == WorkNodeExecution.FINISHED_STATUSES
    assert "partial" in data["statuses"]["finished"]
    assert set(data["statuses"]["active"]) == WorkNodeExecution.ACTIVE_STATUSES


def _big_run(task, size: int) -> WorkGraphRun:
    nodes = [node("n0")] + [node(f"n{i}", f"n{(i - 1) // 2}") for i in range(1, size)]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="succeeded")
    WorkNodeExecution.objects.bulk_create(
        [WorkNodeExecution(run=run, node_id=n["node_id"], subagent_type="planner", status="succeeded") for n in nodes]
        + [WorkNodeExecution(run=run, node_id=n["node_id"], attempt=2, cause="retry_self", subagent_type="planner",
                             status="succeeded") for n in nodes[: size // 5]]
    )
    return run


@pytest.mark.parametrize("url", ["/tasks/{task}/", "/runs/{run}/", "/runs/{run}/graph.json"])
def test_query_counts_do_not_grow_with_the_number_of_nodes(client, project, alice, url):
    counts = []
    for size in (10, 1000):
        task = factories.TaskFactory(project=project)
        run = _big_run(task, size)
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url.format(task=task.pk, run=run.run_id))
        assert response.status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]
