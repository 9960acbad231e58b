"""The real Codex CLI (the pinned npm package, node_modules/.bin/codex) in the console's sandbox, against
the Responses API stand-in (tests/standins/openai_responses.py): a whole pipeline on a project whose
agent is ``codex``, whose coder's shell command really writes a file that lands on the run's branch,
and single calls for what only the real binary shows — a 429 it retries, a 401, the profile's model
and instructions reaching the API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphs.agents import AgentCall, AgentError, CodexRunner
from graphs.agents.check import agent_check
from graphs.domain.agent_profiles import ResolvedProfile
from graphs.engine import pipeline_start
from graphs.logs.store import log_texts, log_writes_wait
from graphs.models import RunWorkspace, Task, WorkGraphRun
from tests.pipeline_answers import stage_answer
from tests.repos import git
from tests.standins.openai_responses import (
    ResponsesStandin,
    Turn,
    function_call,
    http_error,
    message,
    tool_outputs,
    user_text,
)

pytestmark = [pytest.mark.django_db, pytest.mark.sandbox]

CODEX_BIN = Path(__file__).resolve().parent.parent / "node_modules" / ".bin" / "codex"
MODEL = "gpt-5"
PRICE = (1.25, 10.0)
GREETING = "hello from the real codex\n"


@pytest.fixture
def standin(settings, monkeypatch) -> Iterator[ResponsesStandin]:
    """The stand-in, running, and the codex runner's settings pointing the real CLI at it."""
    if not CODEX_BIN.exists():
        pytest.fail(f"{CODEX_BIN} is missing: `make setup` installs the pinned Codex CLI")
    with ResponsesStandin(script=lambda _body, _index: message("unscripted")) as running:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-standin-key")
        settings.WORKGRAPH_AGENT_ENV = [*settings.WORKGRAPH_AGENT_ENV, "OPENAI_API_KEY"]
        settings.WORKGRAPH_CODEX_BIN = str(CODEX_BIN)
        settings.WORKGRAPH_CODEX_BASE_URL = running.base_url
        settings.WORKGRAPH_CODEX_MODEL = MODEL
        settings.WORKGRAPH_MODEL_PRICES = {MODEL: PRICE}
        yield running


def _runner(standin: ResponsesStandin) -> CodexRunner:
    return CodexRunner(bin=str(CODEX_BIN), model=MODEL, base_url=standin.base_url, prices={MODEL: PRICE})


def _call(workdir: Path, prompt: str, **overrides: Any) -> tuple[AgentCall, list[tuple[str, dict]]]:
    events: list[tuple[str, dict]] = []
    fields = {"org_node": "coder", "prompt": prompt, "cwd": workdir, "timeout": 90.0,
              "on_event": lambda kind, data: events.append((kind, data))}
    return AgentCall(**(fields | overrides)), events


@pytest.fixture
def workdir(repo) -> Path:
    return repo


def _write_then_answer(body: dict, _index: int) -> Turn:
    """A shell command that writes a file, then an answer quoting what the command printed."""
    done = tool_outputs(body)
    if not done:
        return function_call("exec_command", {"cmd": "printf 'made by codex\\n' > made.txt && echo wrote it"})
    return message("Wrote made.txt; the command said: " + ("wrote it" if "wrote it" in done[-1] else done[-1]))


def test_a_shell_command_of_the_model_writes_in_the_worktree_and_is_logged_and_counted(standin, workdir):
    standin.script = _write_then_answer
    call, events = _call(workdir, "Write made.txt.")

    result = _runner(standin).run(call)

    assert (workdir / "made.txt").read_text() == "made by codex\n"
    assert result.text == "Wrote made.txt; the command said: wrote it"
    assert result.tool_calls == 1
    assert result.model == MODEL
    # Two answers of the stand-in, each 100 tokens in and 20 out; priced from the table.
    assert result.usage == {"input_tokens": 200, "output_tokens": 40, "cache_creation_input_tokens": 0,
                            "cache_read_input_tokens": 0}
    assert result.cost_usd == pytest.approx((200 * PRICE[0] + 40 * PRICE[1]) / 1_000_000)
    kinds = [kind for kind, _data in events]
    assert kinds[0] == "agent_init" and kinds[-1] == "agent_result"
    call_line = next(data for kind, data in events if kind == "tool_call")
    assert call_line["name"] == "command" and "made.txt" in call_line["input"]
    outcome = next(data for kind, data in events if kind == "tool_result")
    assert (outcome["tool_use_id"], outcome["is_error"]) == (call_line["tool_use_id"], False)
    assert "wrote it" in outcome["content"]
    assert ("agent_text", {"text": result.text, "parent_tool_use_id": None}) in events


def test_the_profiles_model_effort_and_instructions_and_the_prompt_reach_the_api(standin, workdir):
    profile = ResolvedProfile(org_node="coder", description="A coder.", instructions="CODER-RULES: be brief.",
                              model="gpt-5-codex", effort="high")
    call, _events = _call(workdir, "PROMPT-ON-STDIN", profile=profile)

    _runner(standin).run(call)

    body = standin.responses()[0]
    assert body["model"] == "gpt-5-codex"
    assert body["stream"] is True
    assert body["reasoning"]["effort"] == "high"
    developer = json.dumps([item for item in body["input"] if item.get("role") == "developer"])
    assert "CODER-RULES: be brief." in developer
    assert "PROMPT-ON-STDIN" in user_text(body)
    headers = standin.requests[0]["headers"]
    assert headers.get("authorization", headers.get("Authorization")) == "Bearer sk-standin-key"


def test_a_429_is_retried_by_the_cli_and_the_call_succeeds(standin, workdir):
    standin.script = lambda _body, index: (
        http_error(429, "rate_limit_exceeded", "Rate limit reached for gpt-5.") if index == 0
        else message("answered after the retry"))
    call, events = _call(workdir, "Say something.")

    result = _runner(standin).run(call)

    assert result.text == "answered after the retry"
    assert len(standin.responses()) == 2
    retries = [data for kind, data in events if kind == "api_retry"]
    assert retries and retries[0]["error_status"] == 429


def test_a_401_ends_the_call_as_an_auth_failure_that_is_not_retried(standin, workdir):
    standin.script = lambda _body, _index: http_error(401, "invalid_api_key", "Incorrect API key provided: sk-s***.")
    call, events = _call(workdir, "Say something.")

    with pytest.raises(AgentError) as raised:
        _runner(standin).run(call)

    assert (raised.value.kind, raised.value.transient) == ("auth", False)
    assert "401" in str(raised.value) and "Incorrect API key" in str(raised.value)
    assert raised.value.spent is None
    result_line = next(data for kind, data in events if kind == "agent_result")
    assert result_line["is_error"] is True and result_line["usage"] is None


def test_a_stream_the_api_fails_is_retried_by_the_cli_then_ends_as_unavailable(standin, workdir):
    standin.script = lambda _body, _index: Turn(failed=True, code="server_error",
                                                message="The server had an error while processing your request.")
    call, events = _call(workdir, "Say something.")

    with pytest.raises(AgentError) as raised:
        _runner(standin).run(call)

    assert (raised.value.kind, raised.value.transient) == ("unavailable", True)
    assert "The server had an error" in str(raised.value)
    # The first request and the CLI's five retries, each logged as one.
    assert len(standin.responses()) == 6
    assert [data["attempt"] for kind, data in events if kind == "api_retry"] == [1, 2, 3, 4, 5]


def test_checking_the_agent_runs_the_real_codex_and_says_what_is_wrong(standin):
    standin.script = lambda _body, _index: message("ready")
    working = agent_check("codex")
    standin.script = lambda _body, _index: http_error(401, "invalid_api_key", "Incorrect API key provided.")
    refused = agent_check("codex")

    assert (working.status, working.answer) == ("ok", "ready")
    assert working.version.startswith("codex-cli ")
    assert refused.status == "no_credentials"



def _pipeline(body: dict, _index: int) -> Turn:
    """The pipeline's turns: one node a stage, the coder's shell command writing a file for real."""
    asked = user_text(body)
    staged = stage_answer(asked, coder_task="WRITE-GREETING: add greeting.txt.")
    if staged is not None:
        return message(staged)
    if "WRITE-GREETING" in asked:
        if not tool_outputs(body):
            return function_call("exec_command", {"cmd": f"printf '{GREETING.strip()}\\n' > greeting.txt"})
        return message("greeting.txt written.")
    if "Judge the greeting." in asked:
        return message("VERDICT: pass\ngreeting.txt holds the greeting.")
    return message("# PRD\n\nA greeting file.")


# Transactional: the attempt's heartbeat and cancel watch read the database from their own threads.
@pytest.mark.django_db(transaction=True)
def test_a_pipeline_on_the_real_codex_lands_its_command_on_the_run_branch_and_counts_it(
    standin, settings, repo_task, inline_executor
):
    settings.WORKGRAPH_TRANSIENT_RETRIES = 0
    repo_task.project.agent = "codex"
    repo_task.project.save(update_fields=["agent"])
    standin.script = _pipeline

    pipeline_start(task=repo_task)
    inline_executor.drain()
    repo_task.refresh_from_db()
    run = WorkGraphRun.objects.get(task=repo_task)

    assert repo_task.status == Task.Status.SUCCEEDED, repo_task.outcome
    workspace = RunWorkspace.objects.get(run=run)
    assert git(Path(workspace.repository), "show", f"{workspace.branch}:greeting.txt") == GREETING
    impl = run.executions.get(node_id="impl")
    assert impl.tool_calls == 1
    assert impl.model == MODEL
    assert impl.output_tokens and impl.output_tokens >= 40
    assert impl.cost_usd and impl.cost_usd > 0
    assert log_writes_wait()
    events = [json.loads(line) for line in log_texts(log_file=impl.log_file)]
    assert [event["name"] for event in events if event.get("event") == "tool_call"] == ["command"]
    assert any(event.get("event") == "agent_init" for event in events)
