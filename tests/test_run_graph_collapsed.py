"""A run of more work nodes than the page draws at once (graphs.layout.compute.MAX_WORK_NODES) opens
collapsed into stages: its graph.json holds each node's status, stage and attempts alone, in a number of
queries that does not grow with the run, and ``?whole=1`` gives every node's record, which the page
fetches when a stage is opened or the timeline shown (graphs.reads.graph.run_graph_statuses)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from graphs.layout.compute import MAX_WORK_NODES
from graphs.layout.run_layouts import run_graph_with_layout
from graphs.models import WorkGraphRun, WorkNodeExecution
from tests import factories
from tests.clients import signed_in
from tests.graph_json import graph_expanded
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db


def _run(task, size: int) -> WorkGraphRun:
    """A chain of ``size`` nodes planned by ``planner``, the last one ``reviewer``'s own: every node but the
    last two succeeded, n1 on its second attempt; the one before last is queued, the last not started."""
    nodes = [node("n0")] + [node(f"n{i}", f"n{i - 1}") for i in range(1, size)]
    nodes[-1]["subagent_type"] = "reviewer"
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="running")
    now = timezone.now()
    WorkNodeExecution.objects.bulk_create(
        [WorkNodeExecution(run=run, node_id=n["node_id"], subagent_type="planner", status="succeeded",
                           started_at=now, finished_at=now) for n in nodes[:-2]]
        + [WorkNodeExecution(run=run, node_id="n1", attempt=2, cause="retry", subagent_type="planner",
                             status="succeeded", started_at=now, finished_at=now),
           WorkNodeExecution(run=run, node_id=nodes[-2]["node_id"], subagent_type="planner", status="queued")]
    )
    WorkNodeExecution.objects.filter(run=run, node_id="n1", attempt=1).update(status="failed")
    return run


def _url(run: WorkGraphRun, query: str = "") -> str:
    return f"/runs/{run.run_id}/graph.json{query}"


@pytest.fixture
def small_guard(monkeypatch):
    """The page's guard at 4 work nodes, so that a run of a few collapses."""
    monkeypatch.setattr("graphs.layout.run_layouts.MAX_WORK_NODES", 4)


def test_a_run_past_what_the_page_draws_gets_each_nodes_status_stage_and_attempts_alone(task, alice, small_guard):
    run = _run(task, 6)

    payload = graph_expanded(signed_in(alice).get(_url(run)).json())

    assert payload["collapsed"] is True
    assert payload["edges"] == [] and payload["attempts"] == []
    assert payload["layout"] == {"state": "off", "error": "", "placed": None}
    work = {item["node_id"]: item for item in payload["nodes"] if item["kind"] != "planning"}
    assert list(work) == [f"n{i}" for i in range(6)]
    assert {node_id: (item["status"], item["attempts"], item["org_node"]) for node_id, item in work.items()} == {
        "n0": ("succeeded", 1, "planner"), "n1": ("succeeded", 2, "planner"), "n2": ("succeeded", 1, "planner"),
        "n3": ("succeeded", 1, "planner"), "n4": ("queued", 1, "planner"), "n5": ("not_started", 0, "reviewer"),
    }
    assert [item["node_id"] for item in payload["nodes"] if item["kind"] == "planning"] == ["__planning__"]


def test_its_nodes_fall_in_the_stages_the_whole_graph_gives_and_the_planning_call_is_whole(task, alice, small_guard):
    run = _run(task, 6)
    client = signed_in(alice)

    collapsed = graph_expanded(client.get(_url(run)).json())
    whole = graph_expanded(client.get(_url(run, "?whole=1")).json())

    assert "collapsed" not in whole
    direct = run_graph_with_layout(run=run, whole=True)["nodes"]
    assert [{field: item[field] for field in full} for item, full in zip(whole["nodes"], direct, strict=True)] == direct
    assert [edge["to"] for edge in whole["edges"]] == [f"n{i}" for i in range(1, 6)]
    assert len(whole["attempts"]) == 7
    assert [(item["node_id"], item["org_node"], item["status"], item["attempts"]) for item in collapsed["nodes"]] \
        == [(item["node_id"], item["org_node"], item["status"], item["attempts"]) for item in whole["nodes"]]
    assert collapsed["nodes"][0] == whole["nodes"][0]
    assert {key: collapsed[key] for key in ("run", "statuses", "layout")} \
        == {key: whole[key] for key in ("run", "statuses", "layout")}


def test_each_answer_has_its_own_tag_and_a_browser_holding_either_is_answered_304(task, alice, small_guard):
    run = _run(task, 6)
    client = signed_in(alice)

    collapsed, whole = client.get(_url(run)), client.get(_url(run, "?whole=1"))

    assert collapsed["ETag"] != whole["ETag"]
    assert client.get(_url(run), HTTP_IF_NONE_MATCH=collapsed["ETag"]).status_code == 304
    assert client.get(_url(run, "?whole=1"), HTTP_IF_NONE_MATCH=whole["ETag"]).status_code == 304
    run.executions.filter(status="queued").update(status="running", started_at=timezone.now())
    assert client.get(_url(run), HTTP_IF_NONE_MATCH=collapsed["ETag"]).status_code == 200


def test_a_run_the_page_draws_whole_gets_its_whole_graph_either_way(task, alice):
    run = _run(task, 6)
    client = signed_in(alice)

    payload = client.get(_url(run)).json()

    assert "collapsed" not in payload and len(payload["edges"]) == 5 and len(payload["attempts"]) == 7
    assert graph_expanded(payload)["nodes"] == graph_expanded(client.get(_url(run, "?whole=1")).json())["nodes"]


def test_the_collapsed_graph_json_of_ten_thousand_nodes_takes_the_queries_of_six(project, alice, monkeypatch):
    client = signed_in(alice)
    counts = []
    for size, guard in ((6, 4), (10_000, MAX_WORK_NODES)):
        monkeypatch.setattr("graphs.layout.run_layouts.MAX_WORK_NODES", guard)
        run = _run(factories.TaskFactory(project=project), size)
        with CaptureQueriesContext(connection) as queries:
            response = client.get(_url(run))
        assert response.json()["collapsed"] is True
        assert len(response.json()["nodes"]) == size + 1
        counts.append(len(queries))
    assert counts[0] == counts[1]
