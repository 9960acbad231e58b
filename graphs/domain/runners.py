"""The agent runners the console ships, by name: the one list the ``WORKGRAPH_AGENT`` setting chooses from,
graphs.agents builds, traces name the providers of and the docs describe. No imports, so the settings
module reads it before Django is set up."""

from __future__ import annotations

from collections.abc import Mapping

# Each built-in runner, and the GenAI conventions' provider its calls go to (another runner is named as it is).
RUNNER_PROVIDERS: Mapping[str, str] = {
    "offline": "workgraph.offline", "claude": "anthropic", "codex": "openai", "openai": "openai",
}
RUNNERS: tuple[str, ...] = tuple(RUNNER_PROVIDERS)
# Runners that are one chat-completions call; the others run an agent (a CLI's loop of turns and tools).
CHAT_RUNNERS = frozenset({"openai"})
