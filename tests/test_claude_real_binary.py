"""The real Claude Code CLI (the pinned npm package) in the console's sandbox, against the Messages API
stand-in: a whole pipeline whose real Write and Bash calls land on the run's branch, and single calls
for what only the real binary shows — a 429 it retries, a 401, an overloaded API, a turn limit, a
subagent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphs.agents import AgentCall, AgentError, ClaudeRunner
from graphs.engine import pipeline_start
from graphs.logs.store import log_texts, log_writes_wait
from graphs.models import RunWorkspace, Task, WorkGraphRun
from tests.claude_real import CLAUDE_BIN
from tests.pipeline_answers import stage_answer
from tests.repos import git
from tests.standins.anthropic_api import INPUT_TOKENS, OUTPUT_TOKENS, Reply, Request, error, text, tool

pytestmark = [pytest.mark.django_db, pytest.mark.sandbox]

GREETING = 'print("hello from the real CLI")\n'



def _pipeline(request: Request) -> Reply | None:
    """The pipeline's turns: one node a stage, the coder's writing a file and running it for real."""
    asked = request.first_user_text
    staged = stage_answer(asked, coder_task="WRITE-GREETING: add greeting.py and run it.")
    if staged is not None:
        return text(staged)
    if "WRITE-GREETING" in asked:
        return _greeting_turn(request)
    if "Judge the greeting." in asked:
        return text("VERDICT: pass\ngreeting.py prints its greeting.")
    if "Write the" in asked:
        return text("# PRD\n\nA greeting script.")
    return None


def _greeting_turn(request: Request) -> Reply:
    """Ask where the CLI works, write greeting.py there with its Write tool, run it with Bash, then answer."""
    if request.turn == 0:
        return tool("Bash", {"command": "pwd", "description": "Where am I"}, saying="Looking around.")
    if request.turn == 1:
        return tool("Write", {"file_path": f"{request.last_user_text.strip()}/greeting.py", "content": GREETING})
    if request.turn == 2:
        return tool("Bash", {"command": "python3 greeting.py > greeting.out", "description": "Run it"})
    return text("greeting.py written and run.")


# Transactional: the attempt's heartbeat and cancel watch read the database from their own threads.
@pytest.mark.django_db(transaction=True)
def test_a_pipeline_on_the_real_cli_lands_its_tool_calls_on_the_run_branch_and_counts_them(
    real_claude, repo_task, inline_executor, repo
):
    """A stock CLI in a repository without .claude/: each org node's agent is the profile the console passes."""
    assert not (repo / ".claude").exists()
    real_claude.script = _pipeline

    pipeline_start(task=repo_task)
    inline_executor.drain()
    repo_task.refresh_from_db()
    run = WorkGraphRun.objects.get(task=repo_task)

    assert repo_task.status == Task.Status.SUCCEEDED, repo_task.outcome
    workspace = RunWorkspace.objects.get(run=run)
    branch = Path(workspace.repository)
    assert git(branch, "show", f"{workspace.branch}:greeting.py") == GREETING
    assert git(branch, "show", f"{workspace.branch}:greeting.out") == "hello from the real CLI\n"
    impl = run.executions.get(node_id="impl")
    assert impl.tool_calls == 3
    # Four answers of the stand-in, each counted once; the cost is the CLI's own reckoning.
    assert (impl.input_tokens, impl.output_tokens) == (4 * INPUT_TOKENS, 4 * OUTPUT_TOKENS)
    assert impl.cost_usd and impl.cost_usd > 0
    assert log_writes_wait()
    events = [json.loads(line) for line in log_texts(log_file=impl.log_file)]
    calls = [event for event in events if event.get("event") == "tool_call"]
    assert [call["name"] for call in calls] == ["Bash", "Write", "Bash"]
    assert "greeting.py" in calls[1]["input"]
    assert any(event.get("event") == "agent_init" for event in events)
    assert {"prd", "impl", "validator_final_verdict"} <= set(run.executions.values_list("node_id", flat=True))


def _call(workdir: Path, prompt: str, **overrides) -> tuple[AgentCall, list[tuple[str, dict]]]:
    events: list[tuple[str, dict]] = []
    fields = {"org_node": "coder", "prompt": prompt, "cwd": workdir, "timeout": 60.0,
              "on_event": lambda kind, data: events.append((kind, data))}
    return AgentCall(**(fields | overrides)), events


@pytest.fixture
def workdir(tmp_path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def _runner() -> ClaudeRunner:
    return ClaudeRunner(bin=str(CLAUDE_BIN))


def test_a_429_with_retry_after_is_retried_by_the_cli_and_the_call_succeeds(anthropic_standin, workdir):
    answers = iter([error(429, "rate_limit_error", "Number of requests has exceeded your rate limit",
                          retry_after=1)])
    anthropic_standin.script = lambda request: next(answers, text("answered after the retry"))
    call, events = _call(workdir, "Say something.")

    result = _runner().run(call)

    assert result.text == "answered after the retry"
    assert len(anthropic_standin.requests) == 2
    retries = [data for kind, data in events if kind == "api_retry"]
    assert retries and retries[0]["error_status"] == 429


@pytest.mark.parametrize(("reply", "kind", "transient", "words"), [
    (error(401, "authentication_error", "invalid x-api-key"), "auth", False, "Invalid API key"),
    (error(529, "overloaded_error", "Overloaded"), "unavailable", True, "529"),
])
def test_an_api_that_refuses_every_request_ends_the_call_with_its_reason(
    anthropic_standin, workdir, reply, kind, transient, words
):
    anthropic_standin.script = lambda _request: reply
    call, _events = _call(workdir, "Say something.")

    with pytest.raises(AgentError) as raised:
        _runner().run(call)

    assert (raised.value.kind, raised.value.transient) == (kind, transient)
    assert words in str(raised.value)


def test_a_tool_loop_stops_at_the_turn_limit_as_a_max_turns_failure(anthropic_standin, workdir):
    anthropic_standin.script = lambda _request: tool("Bash", {"command": "true", "description": "Again"})
    call, events = _call(workdir, "Loop.", purpose="node", node={"node_id": "loop", "max_turns": 2})

    with pytest.raises(AgentError) as raised:
        _runner().run(call)

    assert raised.value.kind == "max_turns"
    assert "turn limit" in str(raised.value)
    assert [kind for kind, _data in events].count("tool_call") == 2


def test_a_subagent_runs_its_own_tool_calls_in_the_worktree(anthropic_standin, workdir):
    def script(request: Request) -> Reply:
        if "SUBAGENT-NOTE" in request.first_user_text:
            if request.turn == 0:
                return tool("Write", {"file_path": f"{workdir.resolve()}/note.txt", "content": "from the subagent\n"})
            return text("note written")
        if request.turn == 0:
            return tool("Task", {"description": "Write the note", "prompt": "SUBAGENT-NOTE: write note.txt",
                                 "subagent_type": "general-purpose"})
        return text("the subagent wrote the note")

    anthropic_standin.script = script
    call, events = _call(workdir, "Have a subagent write the note.", purpose="node", node={"node_id": "delegate"})

    result = _runner().run(call)

    assert result.text == "the subagent wrote the note"
    assert (workdir / "note.txt").read_text() == "from the subagent\n"
    calls = {data["name"]: data for kind, data in events if kind == "tool_call"}
    assert calls["Write"]["parent_tool_use_id"] == calls["Task"]["tool_use_id"]
    # The real stream's system events about the background agent are kept as they come, never dropped.
    assert "task_started" in {data.get("subtype") for kind, data in events if kind == "agent_event"}
