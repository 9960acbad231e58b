"""Agent runners: one small protocol (``AgentRunner.run(AgentCall) -> AgentResult``), one module each.

``get_runner()`` picks the runner named by ``settings.WORKGRAPH_AGENT``: a built-in one, one named in
``WORKGRAPH_AGENT_RUNNERS`` (``name=dotted.path.to.factory``, so the settings can check the choice
at start-up), or one added in-process with ``runner_register``. The runners themselves take their
configuration as arguments and never read settings, so they can be used and tested on their own.
The package's modules:

- ``base`` — the protocol every runner implements, and the errors they raise;
- ``claude`` — the Claude Code CLI (``claude_stream``: its ``stream-json`` events read into log lines;
  ``claude_agents``: an agent profile as its ``--agents`` and flags);
- ``codex`` — OpenAI's Codex CLI (``codex_stream``: its ``exec --json`` events read into log lines);
- ``jsonl_stream`` — what every CLI that prints one JSON event a line shares: its stdout read line by line;
- ``openai`` — any OpenAI-compatible chat-completions endpoint;
- ``offline`` — the deterministic built-in agent (``offline_plans``: what it plans);
- ``check`` — a project's agent checked before its first run: its version, then one real call.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from graphs.agents.base import (
    PERMANENT_KINDS,
    TRANSIENT_KINDS,
    AgentCall,
    AgentCancelled,
    AgentError,
    AgentResult,
    AgentRunner,
)
from graphs.agents.claude import ClaudeRunner
from graphs.agents.codex import CodexRunner
from graphs.agents.offline import OfflineRunner
from graphs.agents.openai import OpenAIRunner

__all__ = [
    "PERMANENT_KINDS",
    "TRANSIENT_KINDS",
    "AgentCall",
    "AgentCancelled",
    "AgentError",
    "AgentResult",
    "AgentRunner",
    "ClaudeRunner",
    "CodexRunner",
    "OfflineRunner",
    "OpenAIRunner",
    "get_runner",
    "runner_names",
    "runner_register",
]


def _claude() -> AgentRunner:
    return ClaudeRunner(
        bin=getattr(settings, "WORKGRAPH_CLAUDE_BIN", "claude"),
        tool_input_max_chars=getattr(settings, "WORKGRAPH_LOG_TOOL_INPUT_MAX_CHARS", 4000),
        tool_result_max_chars=getattr(settings, "WORKGRAPH_LOG_TOOL_RESULT_MAX_CHARS", 4000),
    )


def _codex() -> AgentRunner:
    return CodexRunner(
        bin=getattr(settings, "WORKGRAPH_CODEX_BIN", "codex"),
        model=getattr(settings, "WORKGRAPH_CODEX_MODEL", ""),
        base_url=getattr(settings, "WORKGRAPH_CODEX_BASE_URL", None) or "",
        sandbox_mode=getattr(settings, "WORKGRAPH_CODEX_SANDBOX", "danger-full-access"),
        prices=getattr(settings, "WORKGRAPH_MODEL_PRICES", {}),
        tool_input_max_chars=getattr(settings, "WORKGRAPH_LOG_TOOL_INPUT_MAX_CHARS", 4000),
        tool_result_max_chars=getattr(settings, "WORKGRAPH_LOG_TOOL_RESULT_MAX_CHARS", 4000),
    )


def _openai() -> AgentRunner:
    base_url = getattr(settings, "WORKGRAPH_OPENAI_BASE_URL", None)
    if not base_url:
        raise ImproperlyConfigured("the openai agent runner needs WORKGRAPH_OPENAI_BASE_URL")
    return OpenAIRunner(
        base_url=base_url,
        model=settings.WORKGRAPH_OPENAI_MODEL,
        api_key=getattr(settings, "WORKGRAPH_OPENAI_API_KEY", "") or "",
    )


def _offline() -> AgentRunner:
    return OfflineRunner(line_delay=settings.WORKGRAPH_OFFLINE_LINE_DELAY,
                         call_seconds=settings.WORKGRAPH_OFFLINE_CALL_SECONDS)


# The built-in runners, one for each name of graphs.domain.runners; ``runner_register`` adds more.
_FACTORIES: dict[str, Callable[[], AgentRunner]] = {
    "claude": _claude, "codex": _codex, "openai": _openai, "offline": _offline,
}


def runner_register(name: str, factory: Callable[[], AgentRunner]) -> None:
    """Make ``get_runner(name)`` build its runner with ``factory``, replacing any earlier one.

    Tests and extensions add their own runners this way (a scripted double, another CLI) without
    touching this module.
    """
    _FACTORIES[name] = factory


def runner_names() -> list[str]:
    """The names ``get_runner`` knows: the built-in and registered runners, then the configured ones."""
    return list(dict.fromkeys([*_FACTORIES, *getattr(settings, "WORKGRAPH_AGENT_RUNNERS", {})]))


def get_runner(name: str | None = None) -> AgentRunner:
    """Return the runner called ``name``, or the one ``settings.WORKGRAPH_AGENT`` selects when None or empty
    (a project's ``agent`` left empty).

    Settings are read on every call, so ``override_settings`` in a test takes effect at once.
    """
    chosen = name or getattr(settings, "WORKGRAPH_AGENT", "offline")
    configured = getattr(settings, "WORKGRAPH_AGENT_RUNNERS", {})
    factory = _FACTORIES.get(chosen)
    if factory is None and chosen in configured:
        factory = import_string(configured[chosen])
    if factory is None:
        names = ", ".join([*_FACTORIES, *configured])
        raise ImproperlyConfigured(f"unknown agent runner {chosen!r}; choose one of {names}")
    return factory()
