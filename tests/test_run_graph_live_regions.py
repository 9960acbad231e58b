"""The run graph page's live regions: the server renders them for the page and alone for its script,
the same markup either way, saying why the run stopped and where its controls go back to."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from graphs.models import PLANNING_NODE_ID, WorkNodeExecution
from tests import factories
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db

REGION = re.compile(r'<(\w+)[^>]*\bid="([\w-]+)"[^>]*\bdata-live-region\b')
# Every rendering masks the CSRF token anew; the token behind it is the same.
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _regions(html: str) -> dict[str, str]:
    """Each live region's markup by id (the element's opening tag up to its matching close)."""
    found = {}
    for match in REGION.finditer(html):
        tag, region_id = match.groups()
        depth, position = 0, match.start()
        for step in re.finditer(rf"<(/?){tag}\b[^>]*>", html[match.start():]):
            depth += -1 if step.group(1) else 1
            if depth == 0:
                position = match.start() + step.end()
                break
        found[region_id] = CSRF.sub('name="csrfmiddlewaretoken"', html[match.start():position])
    return found


def _coder_refused(task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="failed")
    factories.ExecutionFactory(run=run, node_id="a", status="succeeded")
    WorkNodeExecution.objects.create(
        run=run, node_id=f"{PLANNING_NODE_ID}:coder", subagent_type="coder", attempt=1, cause="planning",
        status="failed", error="the manifest named node 'x' twice",
    )
    return run


def test_the_live_regions_alone_are_the_pages_own(alice, task):
    run = _coder_refused(task)
    client = _client(alice)
    page = _regions(client.get(f"/runs/{run.run_id}/").content.decode())
    live = client.get(f"/runs/{run.run_id}/live/")
    assert set(live["Cache-Control"].split(", ")) == {"private", "no-store"}
    alone = _regions(live.content.decode())
    assert {"run-header", "run-notices", "changes", "inbox-count"} <= set(alone)
    assert alone == {region_id: page[region_id] for region_id in alone}


def test_a_refused_planning_call_is_named_with_its_reason(alice, task):
    run = _coder_refused(task)
    html = _client(alice).get(f"/runs/{run.run_id}/live/").content.decode()
    notices = _regions(html)["run-notices"]
    assert "The coder&#x27;s planning call failed: the manifest named node &#x27;x&#x27; twice." in notices
    assert f'href="/runs/{run.run_id}/planning/#call-' in notices
    assert 'data-status="failed"' in _regions(html)["run-header"]


def test_a_run_reason_no_planning_call_gives_is_shown_once(alice, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="failed")
    run.error = "node a failed for good"
    run.save(update_fields=["error"])
    notices = _regions(_client(alice).get(f"/runs/{run.run_id}/live/").content.decode())["run-notices"]
    assert notices.count("node a failed for good") == 1
    refused = _coder_refused(task)
    refused.error = "the manifest named node 'x' twice"
    refused.save(update_fields=["error"])
    notices = _regions(_client(alice).get(f"/runs/{refused.run_id}/live/").content.decode())["run-notices"]
    assert notices.count("twice") == 1 and 'id="run-reason"' not in notices


def test_the_controls_fetched_alone_go_back_to_the_run_graph(alice, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="running")
    header = _regions(_client(alice).get(f"/runs/{run.run_id}/live/").content.decode())["run-header"]
    assert 'data-action="cancel"' in header
    assert f'name="next" value="/runs/{run.run_id}/"' in header
    assert "/live/" not in header


def test_a_run_waiting_for_approval_shows_the_wait_and_its_controls_only(bob, task):
    run = planned_run(task, {"nodes": [node("a"), node("b", "a")], "edges": []}, status="awaiting_approval")
    regions = _regions(_client(bob).get(f"/runs/{run.run_id}/live/").content.decode())
    assert 'id="run-waiting" data-waiting-for="plan"' in regions["run-notices"]
    assert 'data-action="approve"' in regions["run-header"] and 'data-action="cancel"' not in regions["run-header"]
    assert "0/2 done" in regions["run-header"]


def test_someone_outside_the_project_cannot_read_the_regions(charlie, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    assert _client(charlie).get(f"/runs/{run.run_id}/live/").status_code == 404
    assert Client().get(f"/runs/{run.run_id}/live/").status_code == 302


def test_the_regions_take_the_same_queries_for_three_nodes_and_thirty(alice, task):
    counts = []
    for size in (3, 30):
        run = planned_run(task, {"nodes": [node(f"n{i}") for i in range(size)], "edges": []}, status="running")
        for i in range(size):
            factories.ExecutionFactory(run=run, node_id=f"n{i}", status="succeeded")
        client = _client(alice)
        client.get(f"/runs/{run.run_id}/live/")
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/runs/{run.run_id}/live/").status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]
