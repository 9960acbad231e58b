"""An agent profile as the real Claude Code CLI (the pinned npm package) takes it, read where it arrives: the
Messages API stand-in's requests. The profile's instructions are the system prompt, its model is asked for,
its tools are the ones offered; the repository's own definition runs instead only when the profile says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphs.agents import AgentCall, ClaudeRunner
from graphs.domain.agent_profiles import ResolvedProfile
from tests.claude_real import CLAUDE_BIN
from tests.standins.anthropic_api import Request

pytestmark = [pytest.mark.sandbox]

PROFILE_MARK = "PROFILE-INSTRUCTIONS-7f3a"
REPOSITORY_MARK = "REPOSITORY-DEFINITION-91c2"


@pytest.fixture
def workdir(tmp_path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def _system_text(request: Request) -> str:
    system = request.body.get("system", "")
    if isinstance(system, str):
        return system
    return "\n".join(str(block.get("text", "")) for block in system if isinstance(block, dict))


def _run(workdir: Path, profile: ResolvedProfile) -> None:
    call = AgentCall(org_node="coder", prompt="Say hello.", cwd=workdir, timeout=60.0, purpose="node",
                     node={"node_id": "hello"}, profile=profile)
    ClaudeRunner(bin=str(CLAUDE_BIN)).run(call)


def _profile(**fields) -> ResolvedProfile:
    base = {"org_node": "coder", "description": "Writes code.",
            "instructions": f"You are the coder. {PROFILE_MARK}", "allowed_tools": ("Read", "Write")}
    return ResolvedProfile(**(base | fields))


def test_the_profiles_instructions_model_and_tools_reach_the_api(anthropic_standin, workdir):
    _run(workdir, _profile(model="claude-profile-model-1"))

    request = anthropic_standin.requests[-1]
    assert PROFILE_MARK in _system_text(request)
    assert request.body["model"] == "claude-profile-model-1"
    assert {"Read", "Write"} <= request.tool_names
    assert "Bash" not in request.tool_names


def test_the_repositorys_definition_runs_instead_only_when_the_profile_lets_it(anthropic_standin, workdir):
    agents = workdir / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "coder.md").write_text(f"---\nname: coder\ndescription: The repository's coder\n---\n{REPOSITORY_MARK}\n")

    _run(workdir, _profile())
    console_system = _system_text(anthropic_standin.requests[-1])
    _run(workdir, _profile(repository_definition_first=True))
    repository_system = _system_text(anthropic_standin.requests[-1])

    assert PROFILE_MARK in console_system and REPOSITORY_MARK not in console_system
    assert REPOSITORY_MARK in repository_system and PROFILE_MARK not in repository_system
