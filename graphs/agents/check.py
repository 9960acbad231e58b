"""Check a project's agent before its first run: the runner's program answers ``--version`` in the sandbox,
then the runner makes one real one-line call, and the outcome is said in plain words.

What can be wrong, each a ``status``: the runner is not one the console knows (``unknown_runner``), its
program is not there or does not start (``binary_missing``), the API refuses its credentials
(``no_credentials``), the agent or the model is refused (``agent_refused``, ``model_refused``), the
permission mode is refused (``permission_refused``: behind a gateway, the Claude CLI's ``auto`` mode cannot
run its safety check), the API cannot be reached (``network``), the sandbox cannot run (``sandbox``), or
anything else the call failed with (``failed``). ``ok`` when the call answered.

The words are plain text: the agent named with the version its program printed ("The claude agent,
version 2.1.332 (Claude Code), works"), its answer on one line, in quotation marks, never as a repr.

The call runs in a private temporary folder, never the project's: a check changes nothing. It runs with
the profile the caller resolved (a project's planner profile, say), so a permission mode or a model the
profile names is what is checked.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from graphs.agents import AgentCall, AgentError, AgentRunner, get_runner
from graphs.agents.base import NETWORK_FAILURE
from graphs.domain.agent_profiles import ResolvedProfile
from graphs.workspaces.sandbox import Confinement, SandboxError, process_env, program_missing, sandboxed

CHECK_PROMPT = "This is a connection check. Reply with the single word: ready"
CHECK_ORG_NODE = "planner"
_VERSION_TIMEOUT_SECONDS = 30
_ANSWER_SHOWN_CHARS = 200
_MODEL_REFUSED = re.compile(r"selected model|not_found_error|model[^\n]{0,80}(?:not found|does not exist|not exist)",
                            re.I)
_AGENT_REFUSED = re.compile(r"--agent '[^']*' not found|agent[^\n]{0,40} not found", re.I)
_PERMISSION_REFUSED = re.compile(r"auto mode is unavailable|auto mode can't|permission[_ -]mode|"
                                 r"cannot be used with root", re.I)
_NETWORK = re.compile(r"unable to connect|connection error|ENOTFOUND|EAI_AGAIN|fetch failed|timed? ?out", re.I)


@dataclass(frozen=True)
class AgentCheck:
    """What checking a project's agent found: a ``status`` (``ok`` or what is wrong) and ``words`` saying it."""

    runner: str
    status: str
    words: str
    version: str = ""
    answer: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def agent_check(runner_name: str, *, profile: ResolvedProfile | None = None, timeout: float = 120.0) -> AgentCheck:
    """Check the runner called ``runner_name`` ("" for the console's default): its version, then one call as
    ``CHECK_ORG_NODE`` with ``profile`` (None: that org node's shipped profile)."""
    name = runner_name or settings.WORKGRAPH_AGENT
    try:
        runner = get_runner(name)
    except ImproperlyConfigured as error:
        return AgentCheck(runner=name, status="unknown_runner", words=f"The agent runner cannot be built: {error}.")
    with tempfile.TemporaryDirectory(prefix="workgraph-agent-check-") as folder:
        program = getattr(runner, "bin", None)
        version = ""
        if isinstance(program, str):
            problem, version = _version(program, Path(folder))
            if problem is not None:
                return AgentCheck(runner=name, status=problem[0], words=problem[1])
        return _call(runner, name, Path(folder), version=version, profile=profile, timeout=timeout)


def _version(program: str, folder: Path) -> tuple[tuple[str, str] | None, str]:
    """``program --version`` in the sandbox: a problem (status, words) or None, and the version it printed."""
    env = process_env(settings.WORKGRAPH_AGENT_ENV)
    missing = program_missing(program, cwd=folder, path=env.get("PATH", ""))
    if missing:
        return ("binary_missing", f"The agent's program {program!r} was not found ({missing}). Install it on "
                                  "every worker machine, or point the runner's setting at it."), ""
    confinement = Confinement(workdir=folder, network=False, env=env, home_template=settings.WORKGRAPH_AGENT_HOME,
                              bind_program=True)
    try:
        with sandboxed([program, "--version"], confinement) as (argv, sandbox_env):
            done = subprocess.run(argv, cwd=folder, env=sandbox_env, capture_output=True, text=True,
                                  timeout=_VERSION_TIMEOUT_SECONDS, check=False)
    except SandboxError as error:
        return ("sandbox", f"The sandbox cannot run: {error}."), ""
    except subprocess.TimeoutExpired:
        return ("binary_missing", f"The agent's program {program!r} did not answer --version within "
                                  f"{_VERSION_TIMEOUT_SECONDS} s."), ""
    except OSError as error:
        return ("binary_missing", f"The agent's program {program!r} could not be started: {error}."), ""
    said = (done.stdout or done.stderr).strip()
    if done.returncode != 0:
        return ("binary_missing", f"The agent's program {program!r} does not run in the sandbox: --version exited "
                                  f"with code {done.returncode}{': ' + said[:300] if said else ''}."), ""
    return None, said.splitlines()[0] if said else ""


def _call(runner: AgentRunner, name: str, folder: Path, *, version: str, profile: ResolvedProfile | None,
          timeout: float) -> AgentCheck:
    refusals: list[str] = []

    def event(kind: str, fields: dict[str, Any]) -> None:
        raw = str(fields.get("raw", ""))
        if kind == "agent_event" and _PERMISSION_REFUSED.search(raw):
            refusals.append(raw)

    call = AgentCall(org_node=CHECK_ORG_NODE, prompt=CHECK_PROMPT, cwd=folder, timeout=timeout, purpose="plan",
                     on_event=event, profile=profile)
    agent = f"The {name} agent, version {version}," if version else f"The {name} agent"
    try:
        result = runner.run(call)
    except AgentError as error:
        status, words = _failure(error)
        return AgentCheck(runner=name, status=status, words=f"{words} {agent} said: {' '.join(str(error).split())}",
                          version=version)
    answer = _one_line(result.text, _ANSWER_SHOWN_CHARS)
    if refusals:
        return AgentCheck(runner=name, status="permission_refused", version=version, answer=answer,
                          words=f"{agent} answered, but its permission mode refuses actions here: "
                                "behind a gateway (ANTHROPIC_BASE_URL) the auto mode cannot run its safety check. "
                                "Choose another permission mode in the agent's profile.")
    said = f"it answered \N{LEFT DOUBLE QUOTATION MARK}{answer}\N{RIGHT DOUBLE QUOTATION MARK}" if answer \
        else "it answered with nothing"
    return AgentCheck(runner=name, status="ok", version=version, answer=answer, words=f"{agent} works: {said}.")


def _one_line(text: str, limit: int) -> str:
    """``text`` as one line of plain words (its line breaks and runs of spaces as one space), cut to
    ``limit`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "\N{HORIZONTAL ELLIPSIS}"


def _failure(error: AgentError) -> tuple[str, str]:
    """The status and the plain words for a failed check call."""
    said = "\n".join([str(error), error.stderr, error.stdout_tail])
    if error.kind == "sandbox":
        return "sandbox", "The sandbox cannot run."
    if error.kind == "not_found" and "not found" in str(error) and "folder" not in str(error):
        return "binary_missing", "The agent's program was not found."
    if error.kind in ("auth", "quota") or error.status_code == 401:
        return "no_credentials", ("The API refused the agent's credentials: set its key (ANTHROPIC_API_KEY for "
                                  "Claude) in the console's environment and list the name in WORKGRAPH_AGENT_ENV.")
    if _AGENT_REFUSED.search(said):
        return "agent_refused", "The agent refused to start as the org node's agent."
    if _MODEL_REFUSED.search(said) or error.status_code == 404:
        return "model_refused", "The API refused the model: it does not exist there, or the key may not use it."
    if _PERMISSION_REFUSED.search(said):
        return "permission_refused", "The agent's permission mode was refused: choose another in its profile."
    if error.kind == "network" or NETWORK_FAILURE.search(said) or _NETWORK.search(said):
        return "network", ("The agent could not reach its API: check its address (ANTHROPIC_BASE_URL) and that "
                           "the machine reaches it.")
    return "failed", "The agent's call failed."
