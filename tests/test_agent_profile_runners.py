"""What the runners make of a call's agent profile: the claude CLI's --agents definition and flags (read back
from tests/fake_claude.py's record of its argv), the repository's own definition taking precedence, and the
openai runner's system message and model (read by a local stand-in endpoint)."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from graphs.agents import AgentCall, ClaudeRunner, OpenAIRunner
from graphs.domain.agent_profiles import ResolvedProfile, shipped_profile

pytestmark = pytest.mark.usefixtures("sandbox_writable")

FAKE_CLAUDE = Path(__file__).with_name("fake_claude.py")
FIXTURE = Path(__file__).parent / "fixtures" / "claude" / "plan_prose_fenced.json"
INSTRUCTIONS = "# Coder\n\nYou write code with \"quotes\", {braces} and 'apostrophes'.\n"


@pytest.fixture
def record(monkeypatch, tmp_path) -> Path:
    path = tmp_path / "record.json"
    monkeypatch.setenv("FAKE_CLAUDE_RECORD", str(path))
    monkeypatch.setenv("FAKE_CLAUDE_FIXTURE", str(FIXTURE))
    return path


@pytest.fixture
def workdir(tmp_path) -> Path:
    folder = tmp_path / "worktree"
    folder.mkdir()
    return folder


def _profile(**fields) -> ResolvedProfile:
    base = {"org_node": "coder", "description": "Writes the code.", "instructions": INSTRUCTIONS}
    return ResolvedProfile(**(base | fields))


def _claude_argv(record: Path, workdir: Path, profile: ResolvedProfile | None, **call) -> list[str]:
    fields = {"org_node": "coder", "prompt": "Do the work", "cwd": workdir, "timeout": 10.0, "profile": profile}
    ClaudeRunner(bin=str(FAKE_CLAUDE)).run(AgentCall(**(fields | call)))
    return json.loads(record.read_text())["argv"]


def _option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


@pytest.mark.parametrize("mode", ["dontAsk", "acceptEdits", "auto", "bypassPermissions", "plan"])
def test_the_profiles_permission_mode_reaches_the_cli(record, workdir, mode):
    argv = _claude_argv(record, workdir, _profile(permission_mode=mode))

    assert _option(argv, "--permission-mode") == mode
    assert json.loads(_option(argv, "--agents"))["coder"]["permissionMode"] == mode


def test_a_call_without_a_resolved_profile_runs_its_shipped_profile_in_dont_ask_mode(record, workdir):
    argv = _claude_argv(record, workdir, None, org_node="validator")

    definition = json.loads(_option(argv, "--agents"))["validator"]
    assert argv[:2] == ["--agent", "validator"]
    assert _option(argv, "--permission-mode") == "dontAsk"
    assert definition["prompt"] == shipped_profile("validator").instructions
    assert _option(argv, "--allowedTools") == ",".join(sorted(shipped_profile("validator").allowed_tools))


def test_the_agents_json_defines_the_org_node_with_the_profiles_instructions_model_tools_and_limits(record, workdir):
    profile = _profile(model="claude-sonnet-4-5", effort="high", max_turns=30,
                       allowed_tools=("Read", "Bash(git diff:*)", "Write"), disallowed_tools=("WebFetch",))

    argv = _claude_argv(record, workdir, profile, purpose="plan")

    agents = json.loads(_option(argv, "--agents"))
    assert agents == {"coder": {
        "description": "Writes the code.", "prompt": INSTRUCTIONS, "tools": ["Bash", "Read", "Write"],
        "disallowedTools": ["WebFetch"], "model": "claude-sonnet-4-5", "effort": "high",
        "permissionMode": "dontAsk", "maxTurns": 30,
    }}
    assert _option(argv, "--model") == "claude-sonnet-4-5"
    assert _option(argv, "--allowedTools") == "Bash(git diff:*),Read,Write"
    assert _option(argv, "--disallowedTools") == "WebFetch"
    assert _option(argv, "--max-turns") == "30"


def test_a_nodes_tool_grant_narrows_the_profiles_tools_and_its_own_turns_win(record, workdir, settings):
    profile = _profile(allowed_tools=("Read", "Write", "Bash"), max_turns=30)
    node = {"node_id": "survey", "allowed_tools": ["read_file"], "max_turns": 4}

    argv = _claude_argv(record, workdir, profile, purpose="node", node=node)

    assert _option(argv, "--allowedTools") == "Glob,Read"
    assert set(_option(argv, "--disallowedTools").split(",")) >= {"Write", "Bash", "Edit"}
    assert json.loads(_option(argv, "--agents"))["coder"]["tools"] == ["Glob", "Read"]
    assert _option(argv, "--max-turns") == "4"


def test_a_disallowed_tool_is_never_also_allowed(record, workdir):
    argv = _claude_argv(record, workdir, _profile(allowed_tools=("Read", "Bash(ls:*)"), disallowed_tools=("Bash",)))

    assert _option(argv, "--allowedTools") == "Read"
    assert _option(argv, "--disallowedTools") == "Bash"


def test_the_repositorys_own_definition_takes_precedence_only_when_the_profile_says_so_and_it_exists(record, workdir):
    preferring = _profile(repository_definition_first=True, model="claude-opus-4-1", allowed_tools=("Read",),
                          permission_mode="acceptEdits")

    without_file = _claude_argv(record, workdir, preferring)
    (workdir / ".claude" / "agents").mkdir(parents=True)
    (workdir / ".claude" / "agents" / "coder.md").write_text("---\nname: coder\ndescription: ours\n---\nOurs.\n")
    with_file = _claude_argv(record, workdir, preferring)
    not_preferring = _claude_argv(record, workdir, _profile())

    assert "--agents" in without_file and "--agents" in not_preferring
    assert with_file[:2] == ["--agent", "coder"] and "--agents" not in with_file
    assert "--model" not in with_file and "--allowedTools" not in with_file
    assert _option(with_file, "--permission-mode") == "acceptEdits"


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[dict]]]:
    bodies: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            """Keep the test output clean."""

        def do_POST(self) -> None:
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            answer = json.dumps({"model": bodies[-1]["model"], "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", bodies
    server.shutdown()
    server.server_close()


def test_the_openai_runner_sends_the_profiles_instructions_as_its_system_message_and_its_model(endpoint, workdir):
    base_url, bodies = endpoint
    runner = OpenAIRunner(base_url=base_url, model="gpt-4o-mini")
    call = AgentCall(org_node="coder", prompt="Do the work", cwd=workdir, timeout=10.0)

    runner.run(dataclasses.replace(call, profile=_profile(model="gpt-4.1")))
    runner.run(dataclasses.replace(call, profile=_profile(instructions="")))
    runner.run(call)

    assert bodies[0]["messages"] == [{"role": "system", "content": INSTRUCTIONS},
                                     {"role": "user", "content": "Do the work"}]
    assert bodies[0]["model"] == "gpt-4.1"
    assert bodies[1]["messages"] == [{"role": "user", "content": "Do the work"}]
    assert bodies[1]["model"] == "gpt-4o-mini"
    assert bodies[2]["messages"][0] == {"role": "system", "content": shipped_profile("coder").instructions}
