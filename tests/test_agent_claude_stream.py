"""The claude CLI's stream-json events become structured log lines as they arrive: through the runner's
event callback, and through the engine into a node's stored log while the call still runs. Streams a
real CLI may print — unknown events, plain lines, no result — each end in their recorded state."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from graphs.agents import AgentCall, ClaudeRunner
from graphs.engine import run_start
from graphs.logs import writer
from graphs.logs.store import log_read
from graphs.models import ExecutionLogFile, WorkGraphRun
from tests.conftest import FAKE_CLAUDE
from tests.run_builders import drained_in_background, latest, node, planned_run

# The fake CLI records its call, and waits for its gates, in the test's folder.
pytestmark = pytest.mark.usefixtures("sandbox_writable")

SESSION = "5b0f6c7e-2d7a-4a51-9a63-0c1f4f2f8e11"
MODEL = "claude-sonnet-4-5-20250929"


def _run(tmp_path: Path, *, runner: ClaudeRunner | None = None) -> tuple[list[tuple[float, str, dict]], list[str]]:
    """Call the runner; return the events it reported, each with its arrival time, and the plain lines."""
    events: list[tuple[float, str, dict]] = []
    lines: list[str] = []
    started = time.monotonic()
    call = AgentCall(org_node="planner", prompt="Plan the export.", cwd=tmp_path, timeout=10.0,
                     on_event=lambda event, fields: events.append((time.monotonic() - started, event, fields)),
                     on_line=lines.append)
    (runner or ClaudeRunner(bin=str(FAKE_CLAUDE))).run(call)
    return events, lines


def test_each_documented_event_becomes_its_structured_line_in_order_as_it_arrives(claude_fixture, tmp_path):
    claude_fixture("streaming.json")

    events, lines = _run(tmp_path)

    assert [(event, fields.get("parent_tool_use_id")) for _, event, fields in events] == [
        ("agent_init", None),
        ("agent_text", None),
        ("tool_call", None), ("tool_result", None),
        ("tool_call", None),
        # The subagent the Task call started: its prompt, its own tool call and result.
        ("agent_event", "toolu_02TaskSurvey"),
        ("tool_call", "toolu_02TaskSurvey"), ("tool_result", "toolu_02TaskSurvey"),
        ("tool_result", None),
        ("api_retry", None),
        ("agent_text", None),
        ("agent_result", None),
    ]
    fields = [fields for _, _, fields in events]
    assert fields[0] == {"session_id": SESSION, "model": MODEL, "tool_count": 11}
    assert fields[1]["text"] == "I'll read the goal and the repository layout before planning."
    assert fields[2] == {"tool_use_id": "toolu_01ReadReadme", "name": "Read",
                         "input": '{"file_path": "/srv/project/README.md"}', "input_chars": 39,
                         "parent_tool_use_id": None}
    assert fields[3]["tool_use_id"] == "toolu_01ReadReadme" and fields[3]["is_error"] is False
    assert "A small reporting service." in fields[3]["content"]
    assert fields[8]["content"] == "src/reports.py builds the reports; src/export.py writes CSV."
    assert fields[9] == {"attempt": 1, "max_retries": 10, "retry_delay_ms": 1200, "error_status": 529,
                         "error": "overloaded"}
    assert fields[11] == {
        "subtype": "success", "is_error": False, "num_turns": 4, "duration_ms": 41873, "duration_api_ms": 40212,
        "total_cost_usd": 0.2113, "session_id": SESSION, "model": MODEL, "permission_denials": 0,
        "usage": {"input_tokens": 12, "output_tokens": 1874, "cache_creation_input_tokens": 5812,
                  "cache_read_input_tokens": 20133},
    }
    assert lines == []
    # The CLI prints a line every 50 ms: the first event is handed on long before the last one is printed.
    assert events[0][0] < events[-1][0] - 0.3


def test_tool_input_and_result_content_are_cut_to_their_limits_with_the_full_length_kept(claude_fixture, tmp_path):
    claude_fixture("streaming.json")

    events, _ = _run(tmp_path, runner=ClaudeRunner(bin=str(FAKE_CLAUDE), tool_input_max_chars=20,
                                                   tool_result_max_chars=10))

    read_call = next(fields for _, event, fields in events if event == "tool_call")
    assert read_call["input"] == '{"file_path": "/srv/ …[cut]'
    assert read_call["input_chars"] == 39
    read_result = next(fields for _, event, fields in events if event == "tool_result")
    assert read_result["content"].endswith(" …[cut]") and len(read_result["content"]) == 10 + len(" …[cut]")
    assert read_result["content_chars"] > 10


def test_an_unknown_event_is_logged_whole_and_the_call_goes_on(claude_fixture, tmp_path):
    claude_fixture("unknown_event.json")

    events, _ = _run(tmp_path)

    unknown = [fields for _, event, fields in events if event == "agent_event"]
    assert [(item["event_type"], item.get("subtype"), item.get("block_type")) for item in unknown] == [
        ("system", "compact_boundary", None), ("stream_event", None, None), ("assistant", None, "thinking"),
    ]
    assert json.loads(unknown[0]["raw"])["compact_metadata"] == {"trigger": "auto", "pre_tokens": 180000}
    assert json.loads(unknown[2]["raw"])["thinking"] == "The goal is small."
    assert [event for _, event, _ in events][-2:] == ["agent_text", "agent_result"]


def test_a_line_that_is_not_json_is_logged_as_plain_text(claude_fixture, tmp_path):
    claude_fixture("non_json_line.json")

    events, lines = _run(tmp_path)

    assert lines == ["[warning] a plain line among the events"]
    assert [event for _, event, _ in events] == ["agent_init", "agent_result"]


@pytest.mark.django_db
def test_a_claude_node_logs_its_events_in_order_and_keeps_its_accounting(task, claude_cli, inline_executor):
    claude_cli("streaming.json")
    run = planned_run(task, {"nodes": [node("survey", required_evidence=["tool_result"])], "edges": []})

    run_start(run=run)
    inline_executor.drain()

    row = latest(run)["survey"]
    assert row.status == "succeeded"  # its tool_result lines are the evidence the node requires
    lines = log_read(log_file=ExecutionLogFile.objects.get(node_exec=row))
    agent_lines = [line for line in lines if line.get("purpose") == "node"]
    assert [line["event"] for line in agent_lines] == [
        "agent_call", "agent_init", "agent_text", "tool_call", "tool_result", "tool_call", "agent_event",
        "tool_call", "tool_result", "tool_result", "api_retry", "agent_text", "agent_result",
    ]
    assert [line["seq"] for line in agent_lines] == sorted(line["seq"] for line in agent_lines)
    assert agent_lines[3]["name"] == "Read" and agent_lines[7]["parent_tool_use_id"] == "toolu_02TaskSurvey"
    output = row.output_payload
    assert output["text"].startswith("I read the goal")
    assert (output["cost_usd"], output["num_turns"], output["model"], output["session_id"]) == (
        0.2113, 4, MODEL, SESSION)
    assert (output["duration_api_ms"], output["tool_calls"]) == (40212, 3)
    assert output["usage"]["cache_read_input_tokens"] == 20133


@pytest.mark.django_db
def test_a_claude_node_whose_stream_has_no_result_fails_as_invalid_output_with_the_reason(
    task, claude_cli, inline_executor
):
    claude_cli("no_result.json")
    run = planned_run(task, {"nodes": [node("tests")], "edges": []})

    run_start(run=run)
    inline_executor.drain()

    row = latest(run)["tests"]
    assert row.status == "failed"
    assert "agent error (invalid_output)" in row.error and "ended without a result event" in row.error
    events = [line["event"] for line in log_read(log_file=ExecutionLogFile.objects.get(node_exec=row))]
    assert "tool_call" in events and "agent_result" not in events
    assert run.executions.filter(node_id="tests").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_nodes_tool_call_is_in_its_stored_log_while_the_call_still_runs(
    task, claude_cli, inline_executor, monkeypatch, tmp_path
):
    gate = tmp_path / "gate"
    monkeypatch.setenv("FAKE_CLAUDE_GATE", str(gate))
    claude_cli("gated_tool_call.json")
    tool_call_stored = threading.Event()

    def listener(execution, line) -> None:
        if line["event"] == "tool_call":
            tool_call_stored.set()

    monkeypatch.setattr(writer, "_listeners", [*writer._listeners, listener])
    run = planned_run(task, {"nodes": [node("tests")], "edges": []})
    run_start(run=run)

    with drained_in_background(inline_executor, gate=gate):
        assert tool_call_stored.wait(15), "the tool call was never stored"
        row = latest(run)["tests"]
        assert row.status == "running"
        lines = log_read(log_file=ExecutionLogFile.objects.get(node_exec=row))
        [tool_call] = [line for line in lines if line["event"] == "tool_call"]
        assert (tool_call["name"], tool_call["tool_use_id"]) == ("Bash", "toolu_06Pytest")
        assert json.loads(tool_call["input"])["command"] == "pytest -q"
        assert "tool_result" not in [line["event"] for line in lines]
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
    assert latest(run)["tests"].output_payload["text"] == "The tests pass."
