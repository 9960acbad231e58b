"""graph.json is tagged with what it shows: a browser holding the run's graph as it is now is answered
304 in a few queries, and any change the page would draw gives another tag; its payload leaves out
every field at its default (graphs.reads.graph_json)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from graphs.layout.compute import layout_digest, layout_input
from graphs.layout.run_layouts import run_graph_with_layout
from graphs.models import PLANNING_NODE_ID, RunLayout, WorkGraphRun, WorkNodeExecution
from graphs.reads.graph import run_graph_data
from graphs.reads.graph_json import DEFAULTS, graph_compact
from tests import factories
from tests.clients import signed_in
from tests.graph_json import graph_expanded
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db


def _run(task, size: int = 3) -> WorkGraphRun:
    nodes = [node("n0")] + [node(f"n{i}", f"n{(i - 1) // 2}") for i in range(1, size)]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="running")
    WorkNodeExecution.objects.bulk_create(
        [WorkNodeExecution(run=run, node_id=n["node_id"], subagent_type="planner", status="succeeded",
                           started_at=timezone.now(), finished_at=timezone.now()) for n in nodes[:-1]]
        + [WorkNodeExecution(run=run, node_id=nodes[-1]["node_id"], subagent_type="planner", status="queued")]
    )
    return run


def _url(run) -> str:
    return f"/runs/{run.run_id}/graph.json"


def _tag(client, run) -> str:
    response = client.get(_url(run))
    assert response.status_code == 200
    return response["ETag"]


def test_graph_json_is_tagged_and_a_browser_holding_it_is_answered_304(task, alice):
    run = _run(task)
    client = signed_in(alice)

    first = client.get(_url(run))
    assert first.status_code == 200 and first["ETag"].startswith('"')
    assert set(first["Cache-Control"].split(", ")) == {"private", "no-cache"}

    again = client.get(_url(run), HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304 and again.content == b""
    assert again["ETag"] == first["ETag"] and "no-cache" in again["Cache-Control"]
    # The tag gzip weakens (W/"…") is still the body held.
    assert client.get(_url(run), HTTP_IF_NONE_MATCH=f"W/{first['ETag']}").status_code == 304
    assert client.get(_url(run), HTTP_IF_NONE_MATCH='"another"').status_code == 200


def test_the_tag_changes_with_an_attempts_status_its_cost_a_new_attempt_and_the_runs_status(task, alice):
    run = _run(task)
    client = signed_in(alice)
    queued = run.executions.get(status="queued")
    tags = [_tag(client, run)]
    assert _tag(client, run) == tags[0], "nothing changed, the same tag"

    WorkNodeExecution.objects.filter(pk=queued.pk).update(status="running", started_at=timezone.now())
    tags.append(_tag(client, run))
    WorkNodeExecution.objects.filter(pk=queued.pk).update(agent_calls=1, cost_usd=Decimal("0.02"), input_tokens=9)
    tags.append(_tag(client, run))
    WorkNodeExecution.objects.filter(pk=queued.pk).update(status="failed", finished_at=timezone.now())
    tags.append(_tag(client, run))
    WorkNodeExecution.objects.create(run=run, node_id=queued.node_id, attempt=2, cause="retry_self",
                                     subagent_type="planner", status="queued")
    tags.append(_tag(client, run))
    WorkGraphRun.objects.filter(pk=run.pk).update(status="failed", error="n2 failed")
    tags.append(_tag(client, run))

    assert len(set(tags)) == len(tags)


def test_the_tag_changes_with_an_append_and_with_the_runs_layout(task, alice):
    run = _run(task)
    client = signed_in(alice)
    before = _tag(client, run)

    manifest = {**run.graph_manifest, "nodes": [*run.graph_manifest["nodes"], node("extra", "n0")]}
    WorkGraphRun.objects.filter(pk=run.pk).update(graph_manifest=manifest, manifest_version=2)
    WorkNodeExecution.objects.create(run=run, node_id=f"{PLANNING_NODE_ID}:coder", subagent_type="coder",
                                     cause="planning", status="succeeded", output_payload={"new_node_ids": ["extra"]})
    appended = _tag(client, run)
    row = RunLayout.objects.create(run=run, digest="d", manifest_version=2, node_count=5)
    computing = _tag(client, run)
    RunLayout.objects.filter(pk=row.pk).update(status="ready", layout={"pos": []}, updated_at=timezone.now())

    assert len({before, appended, computing, _tag(client, run)}) == 4


def test_a_drawing_whose_layout_was_only_now_asked_for_is_not_tagged(task, alice, settings, inline_executor):
    """Its next visit gets the layout, or asks for it again if that job was lost."""
    settings.WORKGRAPH_SERVER_LAYOUT = True
    run = _run(task)
    client = signed_in(alice)

    missing = client.get(_url(run))
    assert missing.json()["layout"]["state"] == "missing" and not missing.has_header("ETag")
    assert "no-cache" in missing["Cache-Control"]

    digest = layout_digest(layout_input(run_graph_data(run)))
    RunLayout.objects.create(run=run, digest=digest, manifest_version=1, node_count=4, status="ready",
                             layout={"pos": []})
    ready = client.get(_url(run))
    assert ready.json()["layout"]["state"] == "ready" and ready.has_header("ETag")


def test_the_payload_leaves_out_every_field_at_its_default_and_expands_to_the_whole_graph(task, alice):
    run = _run(task)
    payload = signed_in(alice).get(_url(run)).json()

    assert payload["defaults"] == DEFAULTS
    records = [("run", payload["run"])] + [(kind[:-1], item) for kind in ("nodes", "edges", "attempts")
                                          for item in payload[kind]]
    for kind, record in records:
        defaults = DEFAULTS[kind]
        at_default = [key for key, value in record.items() if key in defaults and value == defaults[key]]
        assert not at_default, (kind, record)
        assert None not in (record[key] for key in record if defaults.get(key, 0) is None), (kind, record)
    assert not any("label" in item for item in payload["nodes"] if item["node_id"] == item.get("label"))
    expanded, whole = graph_expanded(payload), run_graph_with_layout(run=run)
    # Put back, every field is as the whole graph has it (planning nodes also get a null cost and role).
    for key in ("nodes", "edges", "attempts"):
        assert [{field: item[field] for field in full} for item, full in zip(expanded[key], whole[key], strict=True)] \
            == whole[key]
    assert {key: value for key, value in expanded.items() if key not in ("nodes", "edges", "attempts")} \
        == {key: value for key, value in whole.items() if key not in ("nodes", "edges", "attempts")}


def test_an_unknown_token_count_is_sent_as_null_not_left_out(task, alice):
    run = _run(task)
    run.executions.filter(status="queued").update(status="succeeded", agent_calls=1, calls_without_usage=1)
    payload = signed_in(alice).get(_url(run)).json()

    [unknown] = [attempt for attempt in payload["attempts"] if attempt.get("calls_without_usage")]
    assert unknown["tokens"] is None


def test_the_304_answer_takes_the_same_few_queries_whatever_the_graphs_size(project, alice):
    client = signed_in(alice)
    counts = []
    for size in (10, 1000):
        run = _run(factories.TaskFactory(project=project), size)
        tag = _tag(client, run)
        with CaptureQueriesContext(connection) as full:
            client.get(_url(run))
        with CaptureQueriesContext(connection) as revisit:
            assert client.get(_url(run), HTTP_IF_NONE_MATCH=tag).status_code == 304
        counts.append(len(revisit))
        assert len(revisit) < len(full)
    assert counts[0] == counts[1]


def test_the_shared_fixture_is_what_the_server_sends_of_its_whole_graph():
    """tests/js/graph-payload.test.mjs expands the same ``sent`` back into ``expanded`` in the page's code."""
    fixture = json.loads((Path(__file__).parent / "fixtures" / "graph_json" / "payloads.json").read_text())

    assert graph_compact(fixture["expanded"]) == fixture["sent"]
    assert graph_expanded(fixture["sent"]) == fixture["expanded"]
