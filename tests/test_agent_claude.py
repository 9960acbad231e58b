"""The claude runner against tests/fake_claude.py, a stand-in CLI driven by JSON fixtures."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from graphs.agents import AgentCall, AgentCancelled, AgentError, ClaudeRunner, get_runner

FAKE_CLAUDE = Path(__file__).with_name("fake_claude.py")
FIXTURES = Path(__file__).parent / "fixtures" / "claude"


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """Select a fixture for the fake CLI and return the file it records its argv, cwd and pid in."""
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


def _fixture_result(name: str) -> str:
    return json.loads((FIXTURES / name).read_text())["stdout"]["result"]


def test_it_sends_the_exact_argv_in_the_project_folder_with_no_stdin(fake, workdir):
    record = fake("plan_prose_fenced.json")

    _runner().run(_call(workdir, org_node="coder", prompt='Plan {"x": 1} and {content}'))

    recorded = json.loads(record.read_text())
    assert recorded["argv"] == [
        "--agent",
        "coder",
        "-p",
        'Plan {"x": 1} and {content}',
        "--output-format",
        "json",
        "--permission-mode",
        "auto",
    ]
    assert Path(recorded["cwd"]).resolve() == workdir.resolve()
    assert recorded["stdin_is_devnull"] is True


def test_a_node_that_lists_its_tools_runs_with_the_others_disabled_and_its_turns_bounded(fake, workdir):
    record = fake("plan_prose_fenced.json")
    node = {"node_id": "survey", "allowed_tools": ["read_file", "web_search"], "max_tool_iterations": 4}

    _runner().run(_call(workdir, org_node="worker", purpose="node", node=node))

    assert json.loads(record.read_text())["argv"][8:] == [
        "--allowedTools", "Glob,Read,WebSearch",
        "--disallowedTools", "Bash,Edit,Grep,NotebookEdit,WebFetch,Write",
        "--max-turns", "5",
    ]


@pytest.mark.parametrize(
    ("purpose", "node"),
    [
        ("node", {"node_id": "free"}),  # a planned node that lists no tools keeps the agent's configuration
        ("judge", {"node_id": "survey", "allowed_tools": ["read_file"], "max_tool_iterations": 1}),
    ],
)
def test_calls_without_tool_limits_send_no_limit_flags(fake, workdir, purpose, node):
    record = fake("plan_prose_fenced.json")

    _runner().run(_call(workdir, purpose=purpose, node=node))

    assert len(json.loads(record.read_text())["argv"]) == 8


def test_a_node_granted_no_tools_has_every_known_tool_disabled(fake, workdir):
    record = fake("plan_prose_fenced.json")

    _runner().run(_call(workdir, purpose="node", node={"node_id": "think", "allowed_tools": [],
                                                        "max_tool_iterations": 0}))

    assert json.loads(record.read_text())["argv"][8:] == [
        "--disallowedTools", "Bash,Edit,Glob,Grep,NotebookEdit,Read,WebFetch,WebSearch,Write",
        "--max-turns", "1",
    ]


@pytest.mark.parametrize(
    "fixture", ["plan_prose_fenced.json", "plan_id_edges_only.json", "plan_wrapped.json", "streaming.json"]
)
def test_it_returns_the_result_text_and_usage(fake, workdir, fixture):
    fake(fixture)

    result = _runner().run(_call(workdir))

    assert result.text == _fixture_result(fixture)
    assert result.raw["type"] == "result"
    assert result.usage["output_tokens"] == 1874


def test_a_fixture_result_carries_a_manifest_the_extractor_finds(fake, workdir):
    manifest = pytest.importorskip("graphs.manifest")
    fake("plan_id_edges_only.json")

    result = _runner().run(_call(workdir, org_node="coder"))

    extracted = manifest.extract_graph_manifest(result.text)
    normalized = manifest.normalize_graph_manifest(extracted, existing_node_ids=("sdd",))
    assert [node["node_id"] for node in normalized["nodes"]] == ["impl_export", "unit_tests", "bench_script"]
    assert normalized["nodes"][1]["depends_on"] == ["impl_export"]


@pytest.mark.parametrize(
    ("fixture", "kind", "transient"),
    [
        ("is_error.json", "is_error", False),
        ("overloaded.json", "unavailable", True),
        ("auth_error.json", "auth", False),
        ("usage_limit.json", "quota", False),
        ("rate_limited.json", "rate_limit", True),
        ("exit_code.json", "exit_code", False),
        ("not_json.json", "invalid_output", False),
    ],
)
def test_each_failure_maps_to_its_error_kind(fake, workdir, fixture, kind, transient):
    fake(fixture)

    with pytest.raises(AgentError) as caught:
        _runner().run(_call(workdir))

    assert (caught.value.kind, caught.value.transient) == (kind, transient)


def test_an_is_error_payload_puts_its_result_text_in_the_message(fake, workdir):
    fake("is_error.json")

    with pytest.raises(AgentError, match="ended its turn without an answer"):
        _runner().run(_call(workdir))


def test_a_non_zero_exit_keeps_stderr_and_the_head_of_stdout(fake, workdir):
    fake("exit_code.json")

    with pytest.raises(AgentError) as caught:
        _runner().run(_call(workdir))

    assert "Agent type 'planner' not found" in caught.value.stderr
    assert caught.value.stdout_head == "Starting session\u2026\n"
    assert "exited with code 1" in str(caught.value)


def test_invalid_output_keeps_the_head_of_stdout(fake, workdir):
    fake("not_json.json")

    with pytest.raises(AgentError) as caught:
        _runner().run(_call(workdir))

    assert caught.value.stdout_head.startswith("Claude Code")


def test_a_hang_past_the_timeout_kills_the_process_quickly(fake, workdir):
    record = fake("hang.json")
    started = time.monotonic()

    with pytest.raises(AgentError) as caught:
        _runner().run(_call(workdir, timeout=0.5))

    assert time.monotonic() - started < 5
    assert (caught.value.kind, caught.value.transient) == ("timeout", True)
    assert "Thinking" in caught.value.stderr
    with pytest.raises(ProcessLookupError):
        os.kill(json.loads(record.read_text())["pid"], 0)


def test_a_child_left_holding_the_output_open_does_not_hold_up_the_result(fake, workdir):
    fake("lingering_child.json")
    started = time.monotonic()

    result = _runner().run(_call(workdir))

    assert time.monotonic() - started < 5
    assert result.text == _fixture_result("lingering_child.json")


def test_setting_the_cancel_event_stops_the_process(fake, workdir):
    record = fake("hang.json")
    cancel = threading.Event()
    started = time.monotonic()

    with pytest.raises(AgentCancelled) as caught:
        _runner().run(_call(workdir, timeout=30, on_line=lambda line: cancel.set(), cancel_event=cancel))

    assert time.monotonic() - started < 5
    assert (caught.value.kind, caught.value.transient) == ("cancelled", False)
    with pytest.raises(ProcessLookupError):
        os.kill(json.loads(record.read_text())["pid"], 0)


def test_an_already_cancelled_call_never_starts_the_process(fake, workdir):
    record = fake("plan_prose_fenced.json")
    cancel = threading.Event()
    cancel.set()

    with pytest.raises(AgentCancelled):
        _runner().run(_call(workdir, cancel_event=cancel))

    assert not record.exists()


def test_on_line_receives_each_line_as_it_arrives(fake, workdir):
    fake("streaming.json")
    seen: list[tuple[float, str]] = []
    started = time.monotonic()

    _runner().run(_call(workdir, on_line=lambda line: seen.append((time.monotonic() - started, line))))

    lines = [line for _, line in seen]
    assert lines[:3] == ["Reading CLAUDE.md", "Listing src/", "Drafting the graph"]
    assert json.loads(lines[3])["type"] == "result"
    # Progress lines arrive while the CLI still runs, well before its final JSON.
    assert seen[0][0] < seen[3][0] - 0.08


def test_a_failing_on_line_callback_does_not_break_the_call(fake, workdir):
    fake("streaming.json")

    def explode(line: str) -> None:
        raise RuntimeError("callback bug")

    assert _runner().run(_call(workdir, on_line=explode)).text == _fixture_result("streaming.json")


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

    runner = get_runner("claude")

    assert (runner.name, runner.bin) == ("claude", "/opt/claude/bin/claude")
