"""OpenAI's Codex CLI as an agent runner: ``codex exec --json``, read live as its documented JSONL events.

The call is ``codex exec --json --skip-git-repo-check --ephemeral --sandbox <mode> -c
approval_policy="never" -c analytics.enabled=false (no traffic but the model's) -c
developer_instructions=<the profile's instructions> [-m <model>] [-c model_reasoning_effort=<effort>]
[-c model_providers.workgraph={…} -c model_provider="workgraph"] -`` with the prompt written to stdin
(``-``: "instructions are read from stdin"), which is then closed. stdout and stderr are drained on
threads, as for the claude runner, while the calling thread polls for exit, the timeout and cancellation.

- **The sandbox.** The CLI runs inside the console's bubblewrap sandbox (graphs.workspaces.sandbox): it
  sees its worktree read-write and nothing of the console. Its own Linux sandbox (``workspace-write``)
  starts its bundled bwrap with a helper program it links into ``CODEX_HOME``; inside ours that fails
  (a real run printed ``bwrap: execvp codex-linux-sandbox: No such file or directory`` for every
  command), so every command the model ran failed. The default is therefore ``danger-full-access``,
  Codex's mode for "environments that are externally sandboxed"; ``WORKGRAPH_CODEX_SANDBOX`` chooses
  another where the console runs unconfined (``WORKGRAPH_SANDBOX=none``).
- **Approvals.** ``approval_policy="never"``: nobody could answer a prompt; the sandbox bounds what a
  command reaches.
- **The endpoint.** With ``WORKGRAPH_CODEX_BASE_URL`` set, a model provider of the console's is defined
  on the command line (``wire_api="responses"``: the Responses API at that base URL), its key read from
  ``OPENAI_API_KEY`` when the agent's environment (``WORKGRAPH_AGENT_ENV``) has it. Without it, the
  CLI's own provider is used: OpenAI, with ``CODEX_API_KEY`` from the agent's environment, or the
  login in a prepared ``$HOME/.codex`` (``WORKGRAPH_AGENT_HOME``).
- **Instructions and model.** The call's agent profile (graphs.domain.agent_profiles) gives the
  instructions, added after Codex's own with ``developer_instructions``, the model (else
  ``WORKGRAPH_CODEX_MODEL``; empty: the CLI's default, which then goes unpriced) and the reasoning
  effort. Its tools and turns are Claude's: the Codex CLI has no flag to hold a call to either, so only
  the call's timeout bounds it.

graphs.agents.codex_stream reads the events and says what the outcome is.
"""

from __future__ import annotations

import json

from django.conf import settings

from graphs.agents.base import AgentCall, AgentCancelled, AgentError, AgentResult
from graphs.agents.codex_stream import CodexStreamReader
from graphs.agents.jsonl_stream import stream_cli_run
from graphs.domain.agent_profiles import ResolvedProfile
from graphs.workspaces.sandbox import Confinement, SandboxError, process_env, program_missing, sandboxed

SANDBOX_MODES = ("danger-full-access", "workspace-write", "read-only")
# The provider id the console defines when it is given a base URL.
PROVIDER_ID = "workgraph"
_EFFORTS = {"max": "xhigh"}
# Linux refuses one argument longer than 128 KiB (MAX_ARG_STRLEN); the instructions travel as one.
INSTRUCTIONS_MAX_BYTES = 100_000


class CodexRunner:
    name = "codex"

    def __init__(self, *, bin: str = "codex", model: str = "", base_url: str = "",
                 sandbox_mode: str = "danger-full-access", prices: dict[str, tuple[float, float]] | None = None,
                 tool_input_max_chars: int = 4000, tool_result_max_chars: int = 4000) -> None:
        if sandbox_mode not in SANDBOX_MODES:
            raise ValueError(f"unknown Codex sandbox mode {sandbox_mode!r}")
        self.bin = bin
        self.model = model
        self.base_url = base_url
        self.sandbox_mode = sandbox_mode
        self.prices = prices or {}
        self.tool_input_max_chars = tool_input_max_chars
        self.tool_result_max_chars = tool_result_max_chars

    def run(self, call: AgentCall) -> AgentResult:
        if call.cancelled():
            raise AgentCancelled()
        if not call.cwd.is_dir():
            raise AgentError(f"the agent's working folder {call.cwd} does not exist", kind="not_found")
        env = process_env(settings.WORKGRAPH_AGENT_ENV)
        if program_missing(self.bin, cwd=call.cwd, path=env.get("PATH", "")):
            raise AgentError(f"the codex CLI {self.bin!r} was not found", kind="not_found")
        profile = call.agent_profile()
        model = profile.model or self.model
        argv = self.argv(call, profile, model=model, api_key=env.get("OPENAI_API_KEY") is not None)
        confinement = Confinement(workdir=call.cwd, network=True, env=env,
                                  home_template=settings.WORKGRAPH_AGENT_HOME, bind_program=True)
        try:
            with sandboxed(argv, confinement) as (sandbox_argv, sandbox_env):
                stream = CodexStreamReader(call, model=model or None, prices=self.prices,
                                           tool_input_max_chars=self.tool_input_max_chars,
                                           tool_result_max_chars=self.tool_result_max_chars)
                return stream_cli_run(cli="codex", program=self.bin, argv=sandbox_argv, env=sandbox_env, cwd=call.cwd,
                                      call=call, prompt=call.prompt.encode("utf-8", errors="replace"), stream=stream)
        except SandboxError as error:
            raise AgentError(str(error), kind="sandbox") from None

    def argv(self, call: AgentCall, profile: ResolvedProfile, *, model: str, api_key: bool) -> list[str]:
        """The CLI's arguments for ``call``; ``api_key`` says whether the agent's environment has
        ``OPENAI_API_KEY`` for the console's provider."""
        instructions = profile.instructions
        if len(instructions.encode("utf-8")) > INSTRUCTIONS_MAX_BYTES:
            raise AgentError(f"the {call.org_node} profile's instructions are longer than "
                             f"{INSTRUCTIONS_MAX_BYTES} bytes, more than the codex CLI can be given",
                             kind="bad_request")
        argv = [self.bin, "exec", "--json", "--skip-git-repo-check", "--ephemeral", "--sandbox", self.sandbox_mode,
                "-c", 'approval_policy="never"', "-c", "analytics.enabled=false",
                "-c", f"developer_instructions={toml_string(instructions)}"]
        if model:
            argv += ["-m", model]
        if profile.effort:
            # OpenAI's reasoning efforts stop at xhigh; a profile's Claude-only "max" asks for the most there is.
            argv += ["-c", f"model_reasoning_effort={toml_string(_EFFORTS.get(profile.effort, profile.effort))}"]
        if self.base_url:
            provider = {"name": toml_string("Work Graph Console"), "base_url": toml_string(self.base_url),
                        "wire_api": toml_string("responses"),
                        **({"env_key": toml_string("OPENAI_API_KEY")} if api_key else {})}
            table = ", ".join(f"{key} = {value}" for key, value in provider.items())
            argv += ["-c", f"model_providers.{PROVIDER_ID}={{{table}}}",
                     "-c", f"model_provider={toml_string(PROVIDER_ID)}"]
        return [*argv, "-"]


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string, as ``-c key=value`` parses its value.

    JSON's escapes are TOML's, but for two: non-ASCII is kept as it is (TOML refuses the ``\\uD83D``
    surrogate halves JSON writes for it), and DEL, which TOML wants escaped and JSON leaves.
    """
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")

