"""The spans of an attempt, made from its row and its log lines: the attempt, its agent calls under the
GenAI conventions, their tool calls, its commands; content only when asked, cut to the maximum."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from graphs.models import PLANNING_NODE_ID, WorkGraphRun, WorkNodeExecution
from graphs.telemetry.content import ContentPolicy
from graphs.telemetry.ids import span_id_of
from graphs.telemetry.spans import attempt_spans, run_span

T0 = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
OFF = ContentPolicy(capture=False, max_chars=2000)


def _at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat(timespec="milliseconds")


def _execution(**fields) -> WorkNodeExecution:
    values = {
        "node_exec_id": uuid.uuid4(), "run_id": uuid.uuid4(), "node_id": "survey", "subagent_type": "coder",
        "attempt": 2, "cause": "loop_back", "status": "succeeded", "started_at": T0,
        "finished_at": T0 + timedelta(seconds=10), "judgment_result": {"ok": True, "kind": "llm"},
        "cost_usd": Decimal("0.125"), "agent_calls": 1, "model": "claude-sonnet-4-5",
        "input_payload": {"prompt": "survey the repository " * 10}, "output_payload": {"text": "found three modules"},
        **fields,
    }
    return WorkNodeExecution(**values)


CLAUDE_LINES = [
    {"seq": 1, "ts": _at(1), "event": "agent_call", "purpose": "node", "org_node": "coder"},
    {"seq": 2, "ts": _at(1.5), "event": "agent_init", "model": "claude-sonnet-4-5", "session_id": "s-1"},
    {"seq": 3, "ts": _at(2), "event": "tool_call", "tool_use_id": "t1", "name": "Read", "input": json.dumps({"p": 1})},
    {"seq": 4, "ts": _at(3), "event": "tool_result", "tool_use_id": "t1", "is_error": False, "content": "x = 1"},
    {"seq": 5, "ts": _at(4), "event": "tool_call", "tool_use_id": "t2", "name": "Bash", "input": "ls"},
    {"seq": 6, "ts": _at(6), "event": "tool_result", "tool_use_id": "t2", "is_error": True, "content": "denied"},
    {"seq": 7, "ts": _at(8), "event": "agent_result", "model": "claude-sonnet-4-5", "total_cost_usd": 0.125,
     "usage": {"input_tokens": 12, "output_tokens": 1874}, "subtype": "success", "is_error": False},
]


def _by_name(spans):
    return {span.name: span for span in spans}


def test_an_agent_attempt_is_a_span_with_its_call_and_tool_calls_as_children():
    execution = _execution()
    spans = _by_name(attempt_spans(execution, lines=CLAUDE_LINES, runner="claude", content=OFF))

    attempt, call = spans["node survey"], spans["invoke_agent coder"]
    assert attempt.span_id == span_id_of("attempt", execution.pk)
    assert attempt.parent_id == span_id_of("run", execution.run_id)
    assert (attempt.start, attempt.end) == (T0, T0 + timedelta(seconds=10))
    assert attempt.attributes == {
        "workgraph.node.id": "survey", "workgraph.attempt": 2, "workgraph.attempt.status": "succeeded",
        "workgraph.attempt.cause": "loop_back", "workgraph.org_node": "coder", "workgraph.judgment.ok": True,
        "workgraph.judgment.kind": "llm", "workgraph.cost_usd": 0.125, "workgraph.agent_calls": 1,
    }
    assert attempt.error is None
    assert call.parent_id == attempt.span_id and call.client
    assert (call.start, call.end) == (T0 + timedelta(seconds=1), T0 + timedelta(seconds=8))
    assert call.attributes == {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "anthropic", "gen_ai.agent.name": "coder",
        "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.response.model": "claude-sonnet-4-5",
        "gen_ai.conversation.id": "s-1", "gen_ai.usage.input_tokens": 12, "gen_ai.usage.output_tokens": 1874,
        "workgraph.call.purpose": "node", "workgraph.cost_usd": 0.125,
    }
    read, bash = spans["execute_tool Read"], spans["execute_tool Bash"]
    assert {read.parent_id, bash.parent_id} == {call.span_id}
    assert (read.start, read.end) == (T0 + timedelta(seconds=2), T0 + timedelta(seconds=3))
    assert read.attributes == {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Read",
                               "gen_ai.tool.call.id": "t1"}
    assert (read.error, bash.error) == (None, "the tool reported an error")


def test_prompts_outputs_and_tool_texts_go_in_only_when_asked_and_cut_to_the_maximum():
    execution = _execution()
    spans = _by_name(attempt_spans(execution, lines=CLAUDE_LINES, runner="claude",
                                   content=ContentPolicy(capture=True, max_chars=30)))

    call = spans["invoke_agent coder"]
    prompt = json.loads(call.attributes["gen_ai.input.messages"])
    assert prompt == [{"role": "user", "parts": [{"type": "text", "content": ("survey the repository " * 2)[:30]}]}]
    answer = json.loads(call.attributes["gen_ai.output.messages"])
    assert answer[0]["parts"][0]["content"] == "found three modules"
    assert spans["execute_tool Read"].attributes["gen_ai.tool.call.result"] == "x = 1"
    assert spans["execute_tool Read"].attributes["gen_ai.tool.call.arguments"] == '{"p": 1}'


def test_a_command_is_a_span_with_its_exit_code_and_a_failing_one_an_error():
    execution = _execution(status="failed", error="exit code 3", failure={"category": "test_failure"})
    lines = [
        {"seq": 1, "ts": _at(1), "event": "command_start", "purpose": "node", "argv": ["pytest"]},
        {"seq": 2, "ts": _at(4), "event": "command_exit", "purpose": "node", "exit_code": 3, "duration_ms": 3000},
    ]
    spans = _by_name(attempt_spans(execution, lines=lines, runner="offline", content=OFF))

    command = spans["command node"]
    assert command.parent_id == spans["node survey"].span_id
    assert command.attributes == {"process.exit.code": 3, "workgraph.command.duration_ms": 3000}
    assert command.error == "exit code 3"
    assert spans["node survey"].error == "exit code 3"
    assert spans["node survey"].attributes["workgraph.failure.category"] == "test_failure"


def test_a_planning_call_without_an_agent_call_line_is_one_call_its_usage_from_the_row():
    execution = _execution(node_id=PLANNING_NODE_ID, subagent_type="planner", cause="planning",
                           input_tokens=40, output_tokens=7, calls_without_usage=0, model="gpt-4o-mini")
    lines = [{"seq": 1, "ts": _at(2), "event": "agent_init", "model": None, "session_id": None}]
    spans = _by_name(attempt_spans(execution, lines=lines, runner="openai", content=OFF))

    call = spans["chat gpt-4o-mini"]
    assert call.parent_id == spans["plan planner"].span_id
    assert call.attributes["gen_ai.operation.name"] == "chat"
    assert call.attributes["gen_ai.provider.name"] == "openai"
    assert call.attributes["workgraph.call.purpose"] == "planning"
    assert (call.attributes["gen_ai.usage.input_tokens"], call.attributes["gen_ai.usage.output_tokens"]) == (40, 7)


def test_any_process_makes_the_same_span_ids_of_the_same_attempt():
    execution = _execution()
    first = attempt_spans(execution, lines=CLAUDE_LINES, runner="claude", content=OFF)
    again = attempt_spans(execution, lines=CLAUDE_LINES, runner="claude", content=OFF)
    assert [span.span_id for span in first] == [span.span_id for span in again]
    assert len({span.span_id for span in first}) == len(first)


def test_a_span_is_an_error_exactly_when_its_run_or_attempt_ended_any_way_but_succeeded():
    for status in WorkGraphRun.FINISHED_STATUSES | {"running"}:
        run = WorkGraphRun(run_id=uuid.uuid4(), task_id=uuid.uuid4(), status=status, created_at=T0, finished_at=T0)
        span = run_span(run, task_title="t", project="p")
        assert (span.error is not None) == (status not in {"succeeded", "running"}), status
    for status in WorkNodeExecution.FINISHED_STATUSES | {"running"}:
        (attempt, *_) = attempt_spans(_execution(status=status), lines=[], runner="claude", content=OFF)
        assert (attempt.error is not None) == (status not in {"succeeded", "running"}), status
