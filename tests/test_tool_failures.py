"""An agent's tool calls that failed are counted once, when its call ends, with the first one's error, and
every page of the attempt says so: graph.json's attempt, its live state, its node page and its side
panel's facts — even when the call answered and its node succeeded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphs.agents import AgentCall, ClaudeRunner
from graphs.agents.codex_stream import CodexStreamReader
from graphs.engine import run_start
from graphs.logs.events import node_state
from tests.claude_real import CLAUDE_BIN
from tests.clients import signed_in
from tests.run_builders import latest, node, planned_run
from tests.standins.anthropic_api import text, tool

REFUSED_WRITE = ("Error: No such tool available: Write. Write is not among the tools available here. "
                 "Continue with the tools you have.")


@pytest.fixture
def refused_tools_run(task, claude_cli, inline_executor, sandbox_writable):
    """A run whose one node's agent answered after two of its three tool calls were refused, as the
    Claude CLI reports it (tests/fixtures/claude/tool_errors.json)."""
    claude_cli("tool_errors.json")
    run = planned_run(task, {"nodes": [node("summary")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    return run


@pytest.mark.django_db
def test_an_answered_call_whose_tools_failed_is_recorded_on_its_succeeded_attempt(refused_tools_run):
    row = latest(refused_tools_run)["summary"]

    assert row.status == "succeeded"
    assert (row.tool_calls, row.tool_failures) == (3, 2)
    assert row.tool_failure_first == REFUSED_WRITE
    assert node_state(row)["tool_failures"] == {"count": 2, "first": REFUSED_WRITE, "words": "2 tool calls failed"}


@pytest.mark.django_db
def test_graph_json_carries_the_failures_on_their_attempt_and_omits_them_elsewhere(alice, refused_tools_run):
    payload = signed_in(alice).get(f"/runs/{refused_tools_run.run_id}/graph.json").json()

    by_node = {attempt["node_id"]: attempt for attempt in payload["attempts"]}
    assert by_node["summary"]["tool_failures"] == {"count": 2, "first": REFUSED_WRITE,
                                                   "words": "2 tool calls failed"}
    assert "tool_failures" not in by_node["__planning__"]
    assert payload["defaults"]["attempt"]["tool_failures"] is None


@pytest.mark.django_db
def test_the_node_page_and_its_panel_facts_say_how_many_failed_and_the_first_error(alice, refused_tools_run):
    row = latest(refused_tools_run)["summary"]
    client = signed_in(alice)

    html = client.get(f"/executions/{row.pk}/").content.decode()
    detail = client.get(f"/executions/{row.pk}/detail.json").json()

    shown = html[html.index('id="tool-failures"'):]
    shown = shown[:shown.index("</p>")]
    assert 'data-tool-failures="2"' in shown
    assert f"2 tool calls failed: <q>{REFUSED_WRITE}</q>" in shown
    assert detail["tool_failures_reading"] == {"count": 2, "first": REFUSED_WRITE, "words": "2 tool calls failed"}
    assert detail["attempts"][0]["tool_failures_reading"]["words"] == "2 tool calls failed"


@pytest.mark.django_db
def test_an_attempt_whose_tools_all_worked_shows_no_failures(alice, task, claude_cli, inline_executor,
                                                            sandbox_writable):
    claude_cli("streaming.json")
    run = planned_run(task, {"nodes": [node("survey")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    row = latest(run)["survey"]

    assert (row.status, row.tool_calls, row.tool_failures, row.tool_failure_first) == ("succeeded", 3, 0, "")
    assert 'id="tool-failures"' not in signed_in(alice).get(f"/executions/{row.pk}/").content.decode()
    assert "tool_failures" not in node_state(row)


def test_a_failed_codex_command_is_a_failed_tool_call_with_its_output():
    reader = CodexStreamReader(AgentCall(org_node="coder", prompt="Go.", cwd=Path("."), timeout=10.0), model="gpt-5",
                               prices={})
    for event in (
        {"type": "thread.started", "thread_id": "t1"},
        {"type": "item.completed", "item": {"id": "item_1", "type": "command_execution", "command": "pytest -q",
                                            "aggregated_output": "sh: 1: pytest: not found\n", "exit_code": 127,
                                            "status": "failed"}},
        {"type": "item.completed", "item": {"id": "item_2", "type": "agent_message", "text": "Could not test."}},
        {"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 5}},
    ):
        reader.feed(json.dumps(event) + "\n")

    result = reader.outcome(0, "")

    assert (result.tool_calls, result.tool_failures) == (1, 1)
    assert result.tool_failure_first == "sh: 1: pytest: not found"


@pytest.mark.django_db
@pytest.mark.sandbox
def test_the_real_cli_s_refused_tool_calls_are_counted_with_the_first_error_in_plain_words(anthropic_standin,
                                                                                           tmp_path):
    def script(request):
        if request.turn == 0:
            return tool("Write", {"file_path": f"{tmp_path}/notes.md", "content": "notes\n"})
        if request.turn == 1:
            return tool("Bash", {"command": "ls", "description": "Look around"})
        return text("I could not write the notes.")
    anthropic_standin.script = script
    call = AgentCall(org_node="planner", prompt="Write notes.md.", cwd=tmp_path, timeout=60.0)

    result = ClaudeRunner(bin=str(CLAUDE_BIN)).run(call)

    assert result.text == "I could not write the notes."
    assert (result.tool_calls, result.tool_failures) == (2, 2)
    assert result.tool_failure_first.startswith("Error: No such tool available: Write.")
