"""The server lays a run's DAG out with Node.js once per drawing, keeps it, and serves it with graph.json
(graphs.layout.compute, graphs.layout.run_layouts); when it cannot, it says why and the page lays the graph
out itself."""

from __future__ import annotations

import os
import shutil
import stat

import pytest
from django.test import Client

from graphs.engine import plan_append, plan_fresh
from graphs.layout.compute import LayoutComputed, layout_digest, layout_input
from graphs.layout.run_layouts import KEPT_LAYOUTS_PER_RUN, run_layout_refresh
from graphs.models import RunLayout
from graphs.reads.graph import run_graph_data
from tests.run_builders import edges_for, node, planned_run

# Run events reach their listeners once the transaction commits, as in production.
pytestmark = pytest.mark.django_db(transaction=True)
# Outside CI a machine without Node.js skips these; under CI=true they run, and fail without it.
needs_node = pytest.mark.skipif(shutil.which("node") is None and os.environ.get("CI") != "true",
                                reason="Node.js is not installed (make setup needs it)")


@pytest.fixture(autouse=True)
def server_layouts(settings):
    settings.WORKGRAPH_SERVER_LAYOUT = True


def _graph_json(user, run) -> dict:
    client = Client()
    client.force_login(user)
    response = client.get(f"/runs/{run.run_id}/graph.json")
    assert response.status_code == 200
    return response.json()


def _positions(layout: dict) -> dict[str, list[float]]:
    return {node_id: box for node_id, *box in layout["pos"]}


def _fake_node(tmp_path, script: str) -> str:
    """An executable standing in for Node.js, running the shell ``script``."""
    path = tmp_path / "node"
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@needs_node
def test_a_new_manifest_version_is_laid_out_stored_and_served_with_the_graph(task, alice, inline_executor):
    run = plan_fresh(task=task)
    inline_executor.drain()

    run.refresh_from_db()
    row = RunLayout.objects.get(run=run)
    graph = _graph_json(alice, run)
    assert (row.status, row.manifest_version, row.error) == ("ready", 1, "")
    assert row.digest == layout_digest(layout_input(run_graph_data(run)))
    assert graph["layout"]["state"] == "ready"
    assert graph["layout"]["placed"] == row.layout
    drawn = {item["node_id"] for item in graph["nodes"]}
    assert set(_positions(row.layout)) == drawn


@needs_node
def test_appended_nodes_get_a_layout_of_their_own_and_every_earlier_box_stays_where_it_was(
    task, alice, inline_executor
):
    run = plan_fresh(task=task)
    inline_executor.drain()
    first = RunLayout.objects.get(run=run).layout

    plan_append(run=run, org_node="coder")
    inline_executor.drain()

    run.refresh_from_db()
    latest = RunLayout.objects.filter(run=run, status="ready").latest("created_at")
    before, after = _positions(first), _positions(latest.layout)
    assert latest.manifest_version == run.manifest_version == 2
    assert len(after) > len(before)
    assert {node_id: after[node_id] for node_id in before} == before
    added = set(after) - set(before) - {item for item in after if item.startswith("__planning__")}
    assert added and all(after[node_id][1] > first["bottom"] for node_id in added)
    assert _graph_json(alice, run)["layout"]["placed"] == latest.layout


@needs_node
def test_a_drawing_is_laid_out_once(task, inline_executor, monkeypatch):
    run = plan_fresh(task=task)
    inline_executor.drain()
    row = RunLayout.objects.get(run=run)
    monkeypatch.setattr("graphs.layout.run_layouts.layout_compute", lambda **_: pytest.fail("laid out again"))

    assert run_layout_refresh(run_id=run.pk) == row
    assert RunLayout.objects.filter(run=run).count() == 1


@needs_node
def test_graph_json_queues_the_layout_of_a_drawing_that_has_none(task, alice, inline_executor):
    nodes = [node("spec"), node("build", "spec"), node("ship", "build")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})  # stored without a run event

    assert _graph_json(alice, run)["layout"] == {"state": "missing", "error": "", "placed": None}
    inline_executor.drain()

    assert _graph_json(alice, run)["layout"]["state"] == "ready"


def test_without_node_the_layout_is_recorded_failed_and_the_page_gets_none(task, alice, inline_executor, settings):
    settings.WORKGRAPH_NODE_BINARY = ""
    run = plan_fresh(task=task)
    inline_executor.drain()

    layout = _graph_json(alice, run)["layout"]
    assert layout["state"] == "failed" and layout["placed"] is None
    assert "Node.js was not found" in layout["error"] and "WORKGRAPH_NODE_BINARY" in layout["error"]
    run.refresh_from_db()
    assert run.status == "ready", "a layout failure never fails the run"


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        ("echo 'TypeError: boom' >&2; exit 3", "the layout script exited with code 3: TypeError: boom"),
        ("cat >/dev/null; echo 'not json'", "the layout script's answer is not a layout"),
        (
            """cat >/dev/null; echo '{"layout": {"pos": [], "routes": [], "bands": [], "planningRight": 0,"""
            """ "bottom": 0}, "ms": 1}'""",
            "node(s) not placed",
        ),
        ("""cat >/dev/null; echo '{"layout": {"pos": [["a", "x", 0, 1, 1]]}, "ms": 1}'""", "is not [id, x, y, w, h]"),
    ],
    ids=["crash", "not-json", "nodes-missing", "bad-position"],
)
def test_a_node_that_crashes_or_answers_garbage_is_recorded_with_the_reason(
    task, alice, inline_executor, settings, tmp_path, script, reason
):
    settings.WORKGRAPH_NODE_BINARY = _fake_node(tmp_path, script)
    run = plan_fresh(task=task)
    inline_executor.drain()

    row = RunLayout.objects.get(run=run)
    assert row.status == "failed" and reason in row.error
    layout = _graph_json(alice, run)["layout"]
    assert (layout["state"], layout["placed"]) == ("failed", None)


def test_a_layout_past_its_timeout_is_stopped_and_recorded(task, inline_executor, settings, tmp_path):
    settings.WORKGRAPH_NODE_BINARY = _fake_node(tmp_path, "exec sleep 30")
    settings.WORKGRAPH_LAYOUT_TIMEOUT_SECONDS = 1
    run = plan_fresh(task=task)
    inline_executor.drain()

    assert RunLayout.objects.get(run=run).error == "the layout took longer than 1 s and was stopped"


@needs_node
def test_a_layout_left_computing_by_a_dead_worker_is_taken_over(task, inline_executor, settings):
    run = plan_fresh(task=task)
    settings.WORKGRAPH_SERVER_LAYOUT = False
    inline_executor.drain()
    settings.WORKGRAPH_SERVER_LAYOUT = True
    run.refresh_from_db()
    digest = layout_digest(layout_input(run_graph_data(run)))
    RunLayout.objects.create(run=run, digest=digest, manifest_version=1)
    assert run_layout_refresh(run_id=run.pk).status == "computing", "a fresh claim is left to its worker"

    RunLayout.objects.filter(run=run).update(updated_at="2000-01-01T00:00:00Z")
    assert run_layout_refresh(run_id=run.pk).status == "ready"


def test_with_server_layouts_off_nothing_is_laid_out_or_served(task, alice, inline_executor, settings):
    settings.WORKGRAPH_SERVER_LAYOUT = False
    run = plan_fresh(task=task)
    inline_executor.drain()

    assert not RunLayout.objects.exists()
    assert _graph_json(alice, run)["layout"] == {"state": "off", "error": "", "placed": None}


@pytest.mark.services
def test_a_layout_the_database_cannot_hold_is_recorded_failed_not_left_computing(task, inline_executor, monkeypatch):
    """PostgreSQL's JSON holds no NUL character: such a layout fails with the database's reason."""
    unstorable = LayoutComputed(layout={"pos": [], "routes": [], "bands": [{"label": "a\u0000b"}]}, elk_ms=1,
                                total_ms=1)
    monkeypatch.setattr("graphs.layout.run_layouts.layout_compute", lambda **_: unstorable)
    run = plan_fresh(task=task)
    inline_executor.drain()

    row = RunLayout.objects.get(run=run)
    assert row.status == RunLayout.Status.FAILED
    assert row.error.startswith("the layout could not be stored:") and "\\u0000" in row.error


@needs_node
def test_a_run_keeps_its_newest_layouts_and_lets_the_older_ones_go(task, alice, inline_executor):
    run = plan_fresh(task=task)
    inline_executor.drain()
    for _ in range(KEPT_LAYOUTS_PER_RUN + 1):
        plan_append(run=run, org_node="coder")
        inline_executor.drain()

    run.refresh_from_db()
    rows = list(RunLayout.objects.filter(run=run).order_by("created_at"))
    assert len(rows) == KEPT_LAYOUTS_PER_RUN and all(row.status == "ready" for row in rows)
    # The first manifest version's drawings are gone; the drawing on screen is served from its own.
    assert 1 not in {row.manifest_version for row in rows}
    assert rows[-1].manifest_version == run.manifest_version
    graph = _graph_json(alice, run)
    assert graph["layout"]["state"] == "ready" and graph["layout"]["placed"] == rows[-1].layout


@needs_node
def test_a_layout_another_worker_is_computing_is_never_let_go(task, inline_executor):
    run = plan_fresh(task=task)
    inline_executor.drain()
    computing = RunLayout.objects.create(run=run, digest="elsewhere", manifest_version=1)
    RunLayout.objects.filter(pk=computing.pk).update(created_at="2000-01-01T00:00:00Z")
    for _ in range(KEPT_LAYOUTS_PER_RUN + 1):
        plan_append(run=run, org_node="coder")
        inline_executor.drain()

    assert RunLayout.objects.filter(pk=computing.pk, status="computing").exists()
