"""The claude runner's process contract against tests/fake_claude.py, a stand-in CLI driven by fixtures
of the documented stream-json events: the argv, the prompt on stdin, the answer and its accounting,
how each failure is classified, timeouts, cancels and stray children."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path

import pytest

from graphs.agents import AgentCall, AgentCancelled, AgentError, ClaudeRunner, get_runner
from graphs.agents.claude import STDIN_MAX_BYTES
from graphs.domain.manifest import extract_graph_manifest, normalize_graph_manifest
from tests.processes import all_gone

# The fake CLI records its call, and waits for its gates, in the test's folder.
pytestmark = pytest.mark.usefixtures("sandbox_writable")

FAKE_CLAUDE = Path(__file__).with_name("fake_claude.py")
FIXTURES = Path(__file__).parent / "fixtures" / "claude"
OUTPUT = ["-p", "--output-format", "stream-json", "--verbose"]


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """Select a fixture for the fake CLI and return the file it records its argv, cwd, pid and stdin in."""
    record = tmp_path / "record.json"
    monkeypatch.setenv("FAKE_CLAUDE_RECORD", str(record))

    def use(fixture: str) -> Path:
        monkeypatch.setenv("FAKE_CLAUDE_FIXTURE", str(FIXTURES / fixture))
        return record

    return use


@pytest.fixture
def workdir(tmp_path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def _call(workdir: Path, **overrides) -> AgentCall:
    fields = {"org_node": "planner", "prompt": "Plan {this} goal", "cwd": workdir, "timeout": 10.0}
    return AgentCall(**(fields | overrides))


def _runner() -> ClaudeRunner:
    return ClaudeRunner(bin=str(FAKE_CLAUDE))


def _limits(record: Path) -> list[str]:
    """The options the CLI was sent after its output options, but the profile's permission mode."""
    argv = json.loads(record.read_text())["argv"]
    options = argv[argv.index("--verbose") + 1:]
    mode = options.index("--permission-mode")
    return options[:mode] + options[mode + 2:]


def _fixture_events(name: str) -> list:
    return json.loads((FIXTURES / name).read_text())["stdout"]


def _fixture_result(name: str) -> dict:
    return next(event for event in _fixture_events(name) if isinstance(event, dict) and event.get("type") == "result")


def test_it_sends_the_exact_argv_in_the_project_folder_and_the_prompt_on_stdin(fake, workdir):
    record = fake("plan_prose_fenced.json")
    prompt = 'Plan {"x": 1} and {content}'

    _runner().run(_call(workdir, org_node="coder", prompt=prompt, purpose="plan"))

    recorded = json.loads(record.read_text())
    argv = recorded["argv"]
    assert argv[:3] == ["--agent", "coder", "--agents"] and "coder" in json.loads(argv[3])
    assert argv[4:] == [*OUTPUT, "--permission-mode", "dontAsk", "--allowedTools",
                        "Bash,Edit,Glob,Grep,Read,Task,TodoWrite,Write"]
    assert Path(recorded["cwd"]).resolve() == workdir.resolve()
    assert recorded["stdin_sha256"] == hashlib.sha256(prompt.encode()).hexdigest()


def test_a_one_megabyte_prompt_reaches_the_cli_intact(fake, workdir):
    record = fake("plan_prose_fenced.json")
    line = 'Ünïcode {"braces": [1, 2]} ```fences``` and a tab\there — '
    prompt = (line * (1_000_000 // len(line.encode()) + 1))[:1_000_000]

    result = _runner().run(_call(workdir, prompt=prompt))

    recorded = json.loads(record.read_text())
    encoded = prompt.encode()
    assert len(encoded) >= 1_000_000
    assert (recorded["stdin_bytes"], recorded["stdin_sha256"]) == (len(encoded), hashlib.sha256(encoded).hexdigest())
    assert result.text == _fixture_result("plan_prose_fenced.json")["result"]


def test_a_prompt_over_the_cli_stdin_cap_is_refused_before_the_cli_starts(fake, workdir):
    record = fake("plan_prose_fenced.json")
    prompt = "x" * (STDIN_MAX_BYTES + 1)

    with pytest.raises(AgentError) as caught:
        _runner().run(_call(workdir, prompt=prompt))

    assert (caught.value.kind, caught.value.transient) == ("bad_request", False)
    assert f"{STDIN_MAX_BYTES + 1} bytes" in str(caught.value)
    assert not record.exists()


def test_a_node_that_lists_its_tools_runs_with_the_others_disabled_and_its_turns_bounded(fake, workdir):
    record = fake("plan_prose_fenced.json")
    node = {"node_id": "survey", "allowed_tools": ["read_file", "web_search"], "max_tool_iterations": 4}

    _runner().run(_call(workdir, org_node="worker", purpose="node", node=node))

    assert _limits(record) == [
        "--allowedTools", "Glob,Read,Task,TodoWrite,WebSearch",
        "--disallowedTools", "Bash,Edit,Grep,NotebookEdit,WebFetch,Write",
        "--max-turns", "5",
    ]


@pytest.mark.parametrize("purpose", ["judge", "plan"])
def test_judge_and_planning_calls_keep_their_profiles_tools_without_the_nodes_limits(fake, workdir, purpose):
    record = fake("plan_prose_fenced.json")
    node = {"node_id": "survey", "allowed_tools": ["read_file"], "max_tool_iterations": 1, "max_turns": 3}

    _runner().run(_call(workdir, purpose=purpose, node=node))

    assert _limits(record) == ["--allowedTools", "Glob,Grep,Read,Task,TodoWrite"]


def test_a_node_that_lists_no_limits_keeps_its_tools_and_has_the_default_turn_bound(fake, workdir, settings):
    record = fake("plan_prose_fenced.json")
    settings.WORKGRAPH_MAX_TURNS = 40

    _runner().run(_call(workdir, purpose="node", node={"node_id": "free"}))

    assert _limits(record)[2:] == ["--max-turns", "40"]


def test_a_nodes_own_max_turns_wins_and_a_zero_default_sends_no_bound(fake, workdir, settings):
    record = fake("plan_prose_fenced.json")
    settings.WORKGRAPH_MAX_TURNS = 0

    _runner().run(_call(workdir, purpose="node", node={"node_id": "bounded", "max_turns": 7,
                                                       "max_tool_iterations": 2}))
    bounded = _limits(record)[2:]
    _runner().run(_call(workdir, purpose="node", node={"node_id": "free"}))

    assert bounded == ["--max-turns", "7"]
    assert _limits(record)[2:] == []


@pytest.mark.parametrize(("left", "argument"), [(1.5, "1.5000"), (0.123456, "0.1234"), (0.00009, "0.0000")])
def test_what_is_left_of_a_budget_is_sent_rounded_down(fake, workdir, left, argument):
    record = fake("plan_prose_fenced.json")

    _runner().run(_call(workdir, purpose="judge", max_budget_usd=left))

    assert _limits(record)[2:] == ["--max-budget-usd", argument]


def test_a_node_granted_no_tools_has_every_known_tool_disabled(fake, workdir):
    record = fake("plan_prose_fenced.json")

    _runner().run(_call(workdir, purpose="node", node={"node_id": "think", "allowed_tools": [],
                                                        "max_tool_iterations": 0}))

    assert _limits(record) == [
        "--allowedTools", "Task,TodoWrite",
        "--disallowedTools", "Bash,Edit,Glob,Grep,NotebookEdit,Read,WebFetch,WebSearch,Write",
        "--max-turns", "1",
    ]


@pytest.mark.parametrize(
    "fixture", ["plan_prose_fenced.json", "plan_id_edges_only.json", "plan_wrapped.json", "streaming.json"]
)
def test_the_answer_is_the_result_text_of_the_result_event(fake, workdir, fixture):
    fake(fixture)

    result = _runner().run(_call(workdir))

    assert result.text == _fixture_result(fixture)["result"]
    assert result.raw == _fixture_result(fixture)


def test_the_result_carries_the_calls_accounting(fake, workdir):
    fake("streaming.json")

    result = _runner().run(_call(workdir))

    assert result.usage == {"input_tokens": 12, "output_tokens": 1874, "cache_creation_input_tokens": 5812,
                            "cache_read_input_tokens": 20133}
    assert (result.cost_usd, result.num_turns, result.duration_api_ms) == (0.2113, 4, 40212)
    assert (result.model, result.session_id) == ("claude-sonnet-4-5-20250929", "5b0f6c7e-2d7a-4a51-9a63-0c1f4f2f8e11")
    # Read, Task, and the Grep of the subagent the Task started.
    assert result.tool_calls == 3
    assert result.accounting()["cost_usd"] == 0.2113


def test_a_fixture_result_carries_a_manifest_the_extractor_finds(fake, workdir):
    fake("plan_id_edges_only.json")

    result = _runner().run(_call(workdir, org_node="coder"))

    extracted = extract_graph_manifest(result.text)
    normalized = normalize_graph_manifest(extracted, existing_node_ids=("sdd",))
    assert [node["node_id"] for node in normalized["nodes"]] == ["impl_export", "unit_tests", "bench_script"]
    assert normalized["nodes"][1]["depends_on"] == ["impl_export"]


# A 401 and an overloaded API are the real CLI's to show (tests/test_claude_real_binary.py); the fixtures
# here are the shapes it cannot be made to print against the stand-in.
@pytest.mark.parametrize(
    ("fixture", "kind", "transient"),
    [
        ("is_error.json", "is_error", False),
        ("usage_limit.json", "quota", False),
        ("rate_limited.json", "rate_limit", True),
        ("rate_limit_result.json", "rate_limit", True),
        ("exit_code.json", "exit_code", False),
        ("not_json.json", "invalid_output", False),
        ("no_result.json", "invalid_output", False),
        ("crash_after_tool_result.json", "exit_code", False),
        ("max_turns.json", "max_turns", False),
        ("max_budget.json", "budget", False),
    ],
)
def test_each_failure_maps_to_its_error_kind(fake, workdir, fixture, kind, transient):
    fake(fixture)

    with pytest.raises(AgentError) as caught:
        _runner().run(_call(workdir))

    assert (caught.value.kind, caught.value.transient) == (kind, transient)


def test_an_error_result_puts_its_errors_and_subtype_in_the_message(fake, workdir):
    fake("is_error.json")

    with pytest.raises(AgentError, match=r"\(error_during_execution\): .*ended its turn without an answer"):
        _runner().run(_call(workdir))


def test_the_limits_an_agent_stopped_at_are_named(fake, workdir):
    fake("max_turns.json")
    with pytest.raises(AgentError, match="turn limit after 2 turns"):
        _runner().run(_call(workdir))

    fake("max_budget.json")
    with pytest.raises(AgentError, match=r"budget after spending 1\.0214 USD"):
        _runner().run(_call(workdir))


def test_a_non_zero_exit_keeps_stderr_and_the_head_of_stdout(fake, workdir):
    fake("exit_code.json")

    with pytest.raises(AgentError) as caught:
        _runner().run(_call(workdir))

    assert "Agent type 'planner' not found" in caught.value.stderr
    assert caught.value.stdout_head == "Starting session\u2026\n"
    assert "exited with code 1" in str(caught.value)


def test_a_stream_without_a_result_event_fails_saying_so_with_its_last_lines_kept(fake, workdir):
    fake("no_result.json")

    with pytest.raises(AgentError) as caught:
        _runner().run(_call(workdir))

    assert "ended without a result event" in str(caught.value)
    assert "toolu_04Pytest" in str(caught.value)  # its last line, the tool call it broke off after
    last_lines = caught.value.stdout_tail.splitlines()
    assert [json.loads(line)["type"] for line in last_lines] == ["system", "assistant", "assistant"]
    assert caught.value.stdout_head.startswith('{"type": "system"')


def test_output_that_is_no_event_stream_at_all_is_invalid_output_with_its_head_kept(fake, workdir):
    fake("not_json.json")

    with pytest.raises(AgentError, match="ended without a result event") as caught:
        _runner().run(_call(workdir))

    assert caught.value.stdout_head.startswith("Claude Code")


def test_a_hang_past_the_timeout_kills_the_process_quickly(fake, workdir):
    record = fake("hang.json")
    started = time.monotonic()

    with pytest.raises(AgentError) as caught:
        _runner().run(_call(workdir, timeout=0.5))

    assert time.monotonic() - started < 15  # a missed kill or cancel would wait for good, or for the 30 s timeout
    assert (caught.value.kind, caught.value.transient) == ("timeout", True)
    assert "Reading the repository" in caught.value.stdout_tail
    assert record.exists(), "the CLI never started"
    assert all_gone(str(record)), "the CLI outlived its timeout"


def test_a_child_left_holding_the_output_open_does_not_hold_up_the_result(fake, workdir):
    fake("lingering_child.json")
    started = time.monotonic()

    result = _runner().run(_call(workdir))

    assert time.monotonic() - started < 15  # a missed kill or cancel would wait for good, or for the 30 s timeout
    assert result.text == _fixture_result("lingering_child.json")["result"]


def test_setting_the_cancel_event_stops_the_process(fake, workdir):
    record = fake("hang.json")
    cancel = threading.Event()
    started = time.monotonic()

    with pytest.raises(AgentCancelled) as caught:
        _runner().run(_call(workdir, timeout=30, on_event=lambda event, fields: cancel.set(), cancel_event=cancel))

    assert time.monotonic() - started < 15  # a missed kill or cancel would wait for good, or for the 30 s timeout
    assert (caught.value.kind, caught.value.transient) == ("cancelled", False)
    assert record.exists(), "the CLI never started"
    assert all_gone(str(record)), "the CLI outlived the cancel"


def test_an_already_cancelled_call_never_starts_the_process(fake, workdir):
    record = fake("plan_prose_fenced.json")
    cancel = threading.Event()
    cancel.set()

    with pytest.raises(AgentCancelled):
        _runner().run(_call(workdir, cancel_event=cancel))

    assert not record.exists()


def test_failing_callbacks_do_not_break_the_call(fake, workdir):
    fake("non_json_line.json")

    def explode(*args) -> None:
        raise RuntimeError("callback bug")

    assert _runner().run(_call(workdir, on_line=explode, on_event=explode)).text == "Done."


def test_a_missing_binary_is_a_permanent_not_found(workdir, tmp_path):
    runner = ClaudeRunner(bin=str(tmp_path / "no-such-claude"))

    with pytest.raises(AgentError) as caught:
        runner.run(_call(workdir))

    assert (caught.value.kind, caught.value.transient) == ("not_found", False)


def test_a_missing_working_folder_is_a_permanent_not_found(fake, tmp_path):
    fake("plan_prose_fenced.json")

    with pytest.raises(AgentError) as caught:
        _runner().run(_call(tmp_path / "gone"))

    assert caught.value.kind == "not_found"


def test_get_runner_builds_the_claude_runner_from_settings(settings):
    settings.WORKGRAPH_CLAUDE_BIN = "/opt/claude/bin/claude"
    settings.WORKGRAPH_LOG_TOOL_INPUT_MAX_CHARS = 300
    settings.WORKGRAPH_LOG_TOOL_RESULT_MAX_CHARS = 500

    runner = get_runner("claude")

    assert (runner.name, runner.bin) == ("claude", "/opt/claude/bin/claude")
    assert (runner.tool_input_max_chars, runner.tool_result_max_chars) == (300, 500)
