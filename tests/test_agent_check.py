"""Checking a project's agent: the real Claude CLI's version in the sandbox, then one real call against the
Messages API stand-in, each outcome said in plain words (graphs.agents.check, ``manage.py agent_check``)."""

from __future__ import annotations

import dataclasses
import socket

import pytest
from django.core.management import CommandError, call_command

from graphs.agents.check import agent_check
from graphs.domain.agent_profiles import shipped_profile
from tests.claude_real import CLAUDE_BIN
from tests.standins.anthropic_api import error, text, tool

pytestmark = [pytest.mark.django_db, pytest.mark.sandbox]


@pytest.fixture
def claude_project(project, real_claude):
    project.agent = "claude"
    project.save(update_fields=["agent"])
    return project


def test_a_working_agent_is_ok_with_its_version_and_answer(claude_project, real_claude):
    real_claude.script = lambda _request: text("ready")

    result = agent_check(claude_project.agent)

    assert (result.status, result.answer) == ("ok", "ready")
    assert result.version.startswith("2.1.332")
    assert result.words == (f"The claude agent, version {result.version}, works: it answered "
                            "\N{LEFT DOUBLE QUOTATION MARK}ready\N{RIGHT DOUBLE QUOTATION MARK}.")


def test_an_answer_of_several_lines_reads_as_one_line_of_plain_words(claude_project, real_claude):
    real_claude.script = lambda _request: text("Ready.\n\n  I can  help with 'quotes'.")

    result = agent_check(claude_project.agent)

    assert result.answer == "Ready. I can help with 'quotes'."
    quoted = "\N{LEFT DOUBLE QUOTATION MARK}Ready. I can help with 'quotes'.\N{RIGHT DOUBLE QUOTATION MARK}"
    assert quoted in result.words
    assert "\\n" not in result.words and "\n" not in result.words and "((" not in result.words


def test_a_refused_key_reads_as_no_credentials(claude_project, real_claude):
    real_claude.script = lambda _request: error(401, "authentication_error", "invalid x-api-key")

    result = agent_check(claude_project.agent)

    assert result.status == "no_credentials"
    assert "ANTHROPIC_API_KEY" in result.words and "WORKGRAPH_AGENT_ENV" in result.words


def test_a_model_the_api_does_not_know_reads_as_the_model_refused(claude_project, real_claude):
    real_claude.script = lambda _request: error(404, "not_found_error", "model: claude-nonexistent")

    result = agent_check(claude_project.agent)

    assert result.status == "model_refused"
    assert "refused the model" in result.words


def test_the_profiles_model_is_the_one_checked(claude_project, real_claude):
    real_claude.script = lambda request: (error(404, "not_found_error", f"model: {request.body.get('model')}")
                                          if request.body.get("model") == "claude-retired-1" else text("ready"))
    profile = dataclasses.replace(shipped_profile("planner"), model="claude-retired-1")

    assert agent_check(claude_project.agent, profile=profile).status == "model_refused"
    assert agent_check(claude_project.agent).status == "ok"


def test_auto_mode_behind_a_gateway_reads_as_the_permission_mode_refused(claude_project, real_claude):
    def script(request):
        if request.turn == 0:
            return tool("Task", {"description": "Look around", "prompt": "List the files.",
                                 "subagent_type": "general-purpose"})
        return text("ready")

    real_claude.script = script
    # Every CLI tool kept (no allowed list), so the subagent is one the auto mode's check must judge.
    profile = dataclasses.replace(shipped_profile("planner"), permission_mode="auto", allowed_tools=())

    result = agent_check(claude_project.agent, profile=profile)

    assert result.status == "permission_refused"
    assert "auto mode cannot run its safety check" in result.words


def test_an_api_nobody_listens_on_reads_as_the_network(claude_project, real_claude, monkeypatch):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")

    result = agent_check(claude_project.agent)

    assert result.status == "network"
    assert "could not reach its API" in result.words


def test_a_missing_program_reads_as_not_found_before_any_call(claude_project, real_claude, settings, tmp_path):
    settings.WORKGRAPH_CLAUDE_BIN = str(tmp_path / "no-such-claude")

    result = agent_check(claude_project.agent)

    assert result.status == "binary_missing"
    assert "no-such-claude" in result.words and "was not found" in result.words
    assert real_claude.requests == []


def test_an_unknown_runner_is_named(project):
    result = agent_check("no-such-runner")

    assert result.status == "unknown_runner"
    assert "no-such-runner" in result.words


def test_the_command_prints_the_words_and_fails_when_something_is_wrong(claude_project, real_claude, capsys):
    real_claude.script = lambda _request: text("ready")
    call_command("agent_check", claude_project.slug)
    assert capsys.readouterr().out.startswith("ok: The claude agent, version 2.1.332")

    real_claude.script = lambda _request: error(401, "authentication_error", "invalid x-api-key")
    with pytest.raises(CommandError, match="no_credentials: The API refused"):
        call_command("agent_check", claude_project.slug)
    with pytest.raises(CommandError, match="no project 'nope'"):
        call_command("agent_check", "nope")


def test_the_binary_the_tests_run_is_the_pinned_one():
    assert CLAUDE_BIN.resolve().is_file()
