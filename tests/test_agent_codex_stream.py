"""The codex runner's reading of ``codex exec --json``, on the sample lines of OpenAI's documentation
(the Codex repository's docs/exec.md) and the item types of its exec_events.rs: each event's log
line, the answer, usage and cost, and how a failure is classified."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from graphs.agents import AgentCall, AgentError
from graphs.agents.codex import CodexRunner, toml_string
from graphs.agents.codex_stream import CodexStreamReader
from graphs.domain.agent_profiles import shipped_profile

# docs/exec.md's sample output, as printed there.
DOCUMENTED = [
    '{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}',
    '{"type":"turn.started"}',
    '{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Searching for README files**"}}',
    '{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls",'
    '"aggregated_output":"","status":"in_progress"}}',
    '{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls",'
    '"aggregated_output":"AGENTS.md\\nREADME.md\\n","exit_code":0,"status":"completed"}}',
    '{"type":"item.completed","item":{"id":"item_3","type":"agent_message",'
    '"text":"Yep — there\u2019s a `README.md` in the repository root."}}',
    '{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}',
]


def _reader(model: str | None = "gpt-5", prices: dict | None = None) -> tuple[CodexStreamReader, list]:
    lines: list = []
    call = AgentCall(org_node="coder", prompt="p", cwd=Path("."), timeout=1,
                     on_event=lambda kind, fields: lines.append((kind, fields)),
                     on_line=lambda text: lines.append(("agent_output", text)))
    return CodexStreamReader(call, model=model, prices=prices or {}), lines


def _feed(reader: CodexStreamReader, *events: str | dict) -> None:
    for event in events:
        reader.feed((event if isinstance(event, str) else json.dumps(event)) + "\n")


def test_the_documented_sample_becomes_the_claude_runners_log_lines_and_an_answer():
    reader, lines = _reader(prices={"gpt-5": (1.25, 10.0)})
    _feed(reader, *DOCUMENTED)

    result = reader.outcome(0, "")

    assert [kind for kind, _fields in lines] == [
        "agent_init", "agent_event", "agent_event", "tool_call", "tool_result", "agent_text", "agent_result"]
    assert lines[0][1] == {"session_id": None, "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53", "model": "gpt-5",
                           "tool_count": None}
    assert lines[2][1]["item_type"] == "reasoning"
    assert lines[3][1] == {"tool_use_id": "item_1", "name": "command", "input": '{"command": "bash -lc ls"}',
                           "input_chars": 26, "parent_tool_use_id": None}
    assert lines[4][1]["content"] == "AGENTS.md\nREADME.md\n" and lines[4][1]["is_error"] is False
    assert result.text == "Yep — there\u2019s a `README.md` in the repository root."
    # Cached input is counted inside input_tokens by OpenAI; the console keeps the two apart.
    assert result.usage == {"input_tokens": 315, "output_tokens": 122, "cache_creation_input_tokens": 0,
                            "cache_read_input_tokens": 24448}
    assert result.cost_usd == pytest.approx((24763 * 1.25 + 122 * 10.0) / 1_000_000)
    # The thread id is logged; the session is not kept, as an --ephemeral thread cannot be resumed.
    assert (result.tool_calls, result.num_turns, result.session_id) == (1, 1, None)
    assert lines[-1][1]["usage"] == result.usage and lines[-1][1]["subtype"] == "success"
    # No line names a session: the pages would offer Claude's resume command for a thread.
    assert all(fields.get("session_id") is None for _kind, fields in lines)
    assert lines[-1][1]["thread_id"] == "0199a213-81c0-7800-8aa1-bbab2a035a53"


def test_an_unpriced_or_unnamed_model_leaves_the_cost_unknown():
    for model in ("gpt-unpriced", None):
        reader, _lines = _reader(model=model, prices={"gpt-5": (1.0, 1.0)})
        _feed(reader, *DOCUMENTED)
        assert reader.outcome(0, "").cost_usd is None


@pytest.mark.parametrize(("item", "name", "tool_input", "content", "is_error"), [
    ({"type": "file_change", "changes": [{"path": "a.py", "kind": "add"}, {"path": "b.py", "kind": "update"}],
      "status": "completed"}, "file_change", {"changes": [{"path": "a.py", "kind": "add"},
                                                           {"path": "b.py", "kind": "update"}]},
     "add a.py\nupdate b.py", False),
    ({"type": "mcp_tool_call", "server": "docs", "tool": "search", "arguments": {"q": "x"},
      "result": {"content": [{"type": "text", "text": "found"}], "structured_content": None}, "error": None,
      "status": "completed"}, "mcp:docs/search", {"q": "x"}, "found", False),
    ({"type": "mcp_tool_call", "server": "docs", "tool": "search", "arguments": {}, "result": None,
      "error": {"message": "server gone"}, "status": "failed"}, "mcp:docs/search", {}, "server gone", True),
    ({"type": "web_search", "query": "bubblewrap nested"}, "web_search", {"query": "bubblewrap nested"},
     "bubblewrap nested", False),
    ({"type": "todo_list", "items": [{"text": "write", "completed": True}, {"text": "test", "completed": False}]},
     "todo_list", {"items": [{"text": "write", "completed": True}, {"text": "test", "completed": False}]},
     "[x] write\n[ ] test", False),
    ({"type": "command_execution", "command": "false", "aggregated_output": "", "exit_code": 1,
      "status": "failed"}, "command", {"command": "false"}, "", True),
])
def test_each_tool_item_is_a_tool_call_and_its_result(item, name, tool_input, content, is_error):
    reader, lines = _reader()
    _feed(reader, {"type": "item.completed", "item": {"id": "item_7", **item}})

    (call_kind, call), (result_kind, result) = lines
    assert (call_kind, call["name"], json.loads(call["input"]), call["tool_use_id"]) == (
        "tool_call", name, tool_input, "item_7")
    assert (result_kind, result["content"], result["is_error"]) == ("tool_result", content, is_error)


def test_an_item_updated_twice_is_one_tool_call():
    reader, lines = _reader()
    todo = {"id": "item_2", "type": "todo_list", "items": [{"text": "a", "completed": False}]}
    _feed(reader, {"type": "item.started", "item": todo}, {"type": "item.updated", "item": todo},
          {"type": "item.completed", "item": todo})

    assert [kind for kind, _fields in lines] == ["tool_call", "agent_event", "tool_result"]
    assert reader.tool_calls == 1


def test_a_reconnect_is_an_api_retry_and_other_lines_are_kept_whole():
    reader, lines = _reader()
    _feed(reader, {"type": "error", "message": "Reconnecting... 2/5 (unexpected status 429 Too Many Requests)"},
          {"type": "item.completed", "item": {"id": "item_0", "type": "error", "message": "a warning"}},
          {"type": "something.new", "x": 1}, "not json at all")

    assert lines[0] == ("api_retry", {"attempt": 2, "max_retries": 5, "retry_delay_ms": None, "error_status": 429,
                                      "error": "unexpected status 429 Too Many Requests"})
    assert lines[1][0] == "agent_event" and lines[1][1]["item_type"] == "error"
    assert lines[2] == ("agent_event", {"event_type": "something.new", "raw": '{"type": "something.new", "x": 1}'})
    assert lines[3] == ("agent_output", "not json at all")


@pytest.mark.parametrize(("message", "kind", "transient"), [
    ("unexpected status 401 Unauthorized: Incorrect API key provided", "auth", False),
    ("exceeded retry limit, last status: 429 Too Many Requests", "rate_limit", True),
    ("You exceeded your current quota (insufficient_quota)", "quota", False),
    ("exceeded retry limit, last status: 503 Service Unavailable", "unavailable", True),
    ("stream disconnected before completion: The server had an error", "unavailable", True),
    ("unexpected status 404 Not Found: The model `gpt-x` does not exist", "bad_request", False),
    ("the model refused", "is_error", False),
])
def test_a_failed_turn_is_classified_from_its_message(message, kind, transient):
    reader, lines = _reader()
    _feed(reader, DOCUMENTED[0], DOCUMENTED[1], {"type": "turn.failed", "error": {"message": message}})

    with pytest.raises(AgentError) as raised:
        reader.outcome(1, "")

    assert (raised.value.kind, raised.value.transient) == (kind, transient)
    assert message in str(raised.value)
    assert lines[-1][1]["errors"] == [message] and lines[-1][1]["is_error"] is True


def test_a_cli_that_dies_before_any_turn_says_why_and_a_silent_one_is_invalid_output():
    reader, _lines = _reader()
    _feed(reader, DOCUMENTED[0])
    with pytest.raises(AgentError) as raised:
        reader.outcome(1, "Error: Missing environment variable: `OPENAI_API_KEY`.\n")
    assert raised.value.kind == "auth" and "Missing environment variable" in str(raised.value)

    reader, _lines = _reader()
    with pytest.raises(AgentError) as raised:
        reader.outcome(0, "")
    assert raised.value.kind == "invalid_output" and "printed nothing" in str(raised.value)


def test_a_turn_without_an_agent_message_is_invalid_output_with_its_spend():
    reader, _lines = _reader()
    _feed(reader, DOCUMENTED[0], DOCUMENTED[1], DOCUMENTED[-1])

    with pytest.raises(AgentError) as raised:
        reader.outcome(0, "")

    assert raised.value.kind == "invalid_output"
    assert raised.value.spent is not None and raised.value.spent.usage["output_tokens"] == 122


def test_the_argv_runs_non_interactively_in_the_consoles_sandbox_with_the_profile(tmp_path):
    runner = CodexRunner(bin="codex", base_url='http://127.0.0.1:9/v1?"x"')
    call = AgentCall(org_node="coder", prompt="p", cwd=tmp_path, timeout=1)
    profile = shipped_profile("coder")

    argv = runner.argv(call, profile, model="gpt-5", api_key=True)

    assert argv[:7] == ["codex", "exec", "--json", "--skip-git-repo-check", "--ephemeral", "--sandbox",
                        "danger-full-access"]
    assert argv[-1] == "-"
    assert 'approval_policy="never"' in argv and "analytics.enabled=false" in argv
    assert f"developer_instructions={toml_string(profile.instructions)}" in argv
    assert argv[argv.index("-m") + 1] == "gpt-5"
    provider = next(arg for arg in argv if arg.startswith("model_providers.workgraph="))
    assert 'base_url = "http://127.0.0.1:9/v1?\\"x\\""' in provider and 'env_key = "OPENAI_API_KEY"' in provider
    assert 'model_provider="workgraph"' in argv
    assert not any(arg.startswith("model_reasoning_effort") for arg in argv)
    effortful = dataclasses.replace(profile, effort="max")
    assert 'model_reasoning_effort="xhigh"' in runner.argv(call, effortful, model="", api_key=False)
    assert "-m" not in runner.argv(call, profile, model="", api_key=False)
    assert not any("env_key" in arg for arg in runner.argv(call, profile, model="", api_key=False))


def test_instructions_become_a_toml_string_codex_can_parse():
    import tomllib

    text = 'say "hi"\\ then\nnew line, emoji 🚀, tab\t, del \x7f'
    assert tomllib.loads(f"key = {toml_string(text)}")["key"] == text
