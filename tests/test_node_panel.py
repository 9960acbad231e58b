"""The run graph's side panel is the server's: the node's latest attempt with every fact the panel
shows, or why there is none, in words, escaped, with the fork form only where a fork is allowed."""

from __future__ import annotations

import pytest
from django.test import Client

from graphs.models import PLANNING_NODE_ID
from tests import factories
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db


def _panel(user, run, node_id: str) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(f"/runs/{run.run_id}/panel/", {"node": node_id})
    assert response.status_code == 200
    return response.content.decode()


def test_it_shows_the_latest_attempt_with_every_earlier_one_and_how_they_read(alice, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="running")
    first = factories.ExecutionFactory(
        run=run, node_id="a", attempt=1, status="failed", subagent_type="coder",
        judgment_result={"ok": False, "kind": "llm", "issues": ["too short"]},
        failure={"category": "TestBug", "confidence": 0.6, "evidence": ["assert 1 == 2"], "rule": "x", "note": ""},
    )
    latest = factories.ExecutionFactory(run=run, node_id="a", attempt=2, status="running", cause="retry_self",
                                        subagent_type="coder", input_payload={"prompt": "Write <b>it</b>"})
    html = _panel(alice, run, "a")
    assert f'data-node-exec-id="{latest.pk}"' in html
    assert 'data-state="running"' in html
    assert 'data-status="running">running</span>' in html and "coder · attempt 2" in html
    assert f'href="/executions/{first.pk}/compare/{latest.pk}/">compare with latest</a>' in html
    assert "Judgment: fail" in html and "too short" in html
    assert "(no output yet)" in html and "Live log" in html
    assert "Write &lt;b&gt;it&lt;/b&gt;" in html  # agent and task text is escaped
    assert f'<ol class="log-lines" data-log-for="{latest.pk}"></ol>' in html


def test_a_finished_attempt_with_failed_tool_calls_says_so_and_quotes_the_first(alice, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="succeeded")
    factories.ExecutionFactory(run=run, node_id="a", status="succeeded", tool_failures=2,
                               tool_failure_first="No such tool available: Write")
    html = _panel(alice, run, "a")
    assert 'data-tool-failures="2"' in html and "<q>No such tool available: Write</q>" in html
    assert "(no output)" in html and "<h3>Log</h3>" in html


@pytest.mark.parametrize(
    ("status", "words"),
    [("running", "This node has not started yet."), ("cancelled", "This node did not run: the run ended before it.")],
)
def test_a_node_without_an_attempt_says_why(alice, task, status, words):
    run = planned_run(task, {"nodes": [node("a"), node("b", "a")], "edges": []}, status=status)
    html = _panel(alice, run, "b")
    assert 'data-state="not-started"' in html and words in html


def test_a_node_the_run_does_not_have_is_named_so(alice, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    html = _panel(alice, run, "nope<script>")
    assert 'data-state="missing"' in html and "This run has no such node." in html
    assert "<script>" not in html


def test_the_fork_form_is_offered_to_a_lead_on_a_forkable_run_and_never_for_a_planning_call(alice, bob, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="failed")
    factories.ExecutionFactory(run=run, node_id="a", status="failed")
    assert 'class="fork-node"' in _panel(alice, run, "a")
    assert 'class="fork-node"' not in _panel(bob, run, "a")
    assert 'class="fork-node"' not in _panel(alice, run, PLANNING_NODE_ID)
    running = planned_run(task, {"nodes": [node("a")], "edges": []}, status="running")
    factories.ExecutionFactory(run=running, node_id="a", status="running")
    assert 'class="fork-node"' not in _panel(alice, running, "a")


def test_someone_outside_the_project_cannot_read_a_panel(charlie, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    client = Client()
    client.force_login(charlie)
    assert client.get(f"/runs/{run.run_id}/panel/", {"node": "a"}).status_code == 404
