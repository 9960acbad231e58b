"""The Claude Code CLI as an agent runner, read live as its documented ``stream-json`` events.

The call is ``claude --agent <org_node> --agents '{…}' -p --output-format stream-json --verbose
--permission-mode <mode>`` with the call's agent profile as ``--agents`` and its flags (model, tools, turns:
see graphs.agents.claude_agents), and the prompt written to the CLI's stdin, which is then closed. stdout and
stderr are drained on threads, so every event is logged as it arrives and a full pipe never stalls the
process, while the calling thread polls for exit, the timeout and cancellation.

Its stdout is the CLI's documented ``stream-json`` events, read as they come by
``graphs.agents.claude_stream.StreamReader``, which holds what the format is and how each event is logged.
"""

from __future__ import annotations

import math

from django.conf import settings

from graphs.agents.base import (
    AgentCall,
    AgentCancelled,
    AgentError,
    AgentResult,
)
from graphs.agents.claude_agents import profile_argv, profile_flags
from graphs.agents.claude_stream import StreamReader
from graphs.agents.jsonl_stream import stream_cli_run
from graphs.workspaces.sandbox import Confinement, SandboxError, process_env, program_missing, sandboxed

# The documentation caps piped stdin at "10MB" without saying which megabyte; the decimal reading is
# the smaller, so a prompt under it is never one the CLI refuses.
STDIN_MAX_BYTES = 10_000_000
class ClaudeRunner:
    name = "claude"

    def __init__(self, *, bin: str = "claude", tool_input_max_chars: int = 4000,
                 tool_result_max_chars: int = 4000) -> None:
        self.bin = bin
        self.tool_input_max_chars = tool_input_max_chars
        self.tool_result_max_chars = tool_result_max_chars

    def run(self, call: AgentCall) -> AgentResult:
        if call.cancelled():
            raise AgentCancelled()
        if not call.cwd.is_dir():
            raise AgentError(f"the agent's working folder {call.cwd} does not exist", kind="not_found")
        prompt = call.prompt.encode("utf-8", errors="replace")
        if len(prompt) > STDIN_MAX_BYTES:
            raise AgentError(
                f"the prompt is {len(prompt)} bytes; the claude CLI reads at most {STDIN_MAX_BYTES} bytes"
                " from stdin",
                kind="bad_request",
            )
        env = process_env(settings.WORKGRAPH_AGENT_ENV)
        if program_missing(self.bin, cwd=call.cwd, path=env.get("PATH", "")):
            raise AgentError(f"the claude CLI {self.bin!r} was not found", kind="not_found")
        confinement = Confinement(workdir=call.cwd, network=True, env=env, home_template=settings.WORKGRAPH_AGENT_HOME,
                                  bind_program=True)
        try:
            with sandboxed(self._argv(call), confinement) as (argv, env):
                stream = StreamReader(call, tool_input_max_chars=self.tool_input_max_chars,
                                      tool_result_max_chars=self.tool_result_max_chars)
                return stream_cli_run(cli="claude", program=self.bin, argv=argv, env=env, cwd=call.cwd, call=call,
                                      prompt=prompt, stream=stream)
        except SandboxError as error:
            raise AgentError(str(error), kind="sandbox") from None

    def _argv(self, call: AgentCall) -> list[str]:
        limits = {"claude_tools": settings.WORKGRAPH_CLAUDE_TOOLS, "default_max_turns": settings.WORKGRAPH_MAX_TURNS}
        return [
            self.bin,
            *profile_argv(call, **limits),
            "-p",
            "--output-format",
            "stream-json",
            # Print mode refuses stream-json without it: "When using --print, --output-format=stream-json
            # requires --verbose".
            "--verbose",
            *profile_flags(call, **limits),
            *(["--max-budget-usd", budget_argument(call.max_budget_usd)] if call.max_budget_usd is not None else []),
        ]



def budget_argument(usd: float) -> str:
    """``--max-budget-usd``'s value: dollars to four decimals, rounded down (never more than is left)."""
    return f"{max(0.0, math.floor(usd * 10_000) / 10_000):.4f}"

