"""An agent profile as the Claude Code CLI takes it: ``--agents '{…}' --agent <name>`` and its flags.

The CLI finds ``--agent <name>`` among its session agents (``--agents``, a JSON object mapping a name to
its definition: ``description``, ``prompt``, ``tools``, ``disallowedTools``, ``model``, ``effort``,
``permissionMode``, ``maxTurns``), then ``.claude/agents/<name>.md`` in the working folder and the
user's. The console hands every call its profile this way, so a stock install in a repository without
``.claude/`` runs; a profile that lets the repository's own definition take precedence is not passed
when the worktree has that file.

Tools: a profile's allowed tools are pre-approved (``--allowedTools``, and the definition's ``tools``,
by their bare names) and its disallowed tools removed (``--disallowedTools``). A node call is further
held to its node's ``allowed_tools`` (registry names, mapped by ``WORKGRAPH_CLAUDE_TOOLS``): the Claude
tools of every registry tool it was not granted are disallowed, the granted ones allowed. Turns are
bounded by the node's ``max_turns``, else its ``max_tool_iterations`` + 1, else the profile's
``max_turns``, else (node calls only) the console's default.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from graphs.agents.base import AgentCall
from graphs.domain.agent_profiles import ResolvedProfile, tool_name


def repository_definition(call: AgentCall) -> Path | None:
    """The worktree's own definition of the call's agent, when its profile lets it take precedence."""
    if not call.agent_profile().repository_definition_first:
        return None
    path = call.cwd / ".claude" / "agents" / f"{call.org_node}.md"
    return path if path.is_file() else None


def profile_argv(call: AgentCall, *, claude_tools: dict[str, list[str]], default_max_turns: int = 0) -> list[str]:
    """``--agent <name>``, the ``--agents`` definition, then its flags, up to the output options (``-p``).

    The flags come after ``-p`` (see ``profile_flags``); this part comes first.
    """
    argv = ["--agent", call.org_node]
    if repository_definition(call) is None:
        argv += ["--agents", agents_json(call, claude_tools=claude_tools, default_max_turns=default_max_turns)]
    return argv


def profile_flags(call: AgentCall, *, claude_tools: dict[str, list[str]], default_max_turns: int = 0) -> list[str]:
    """``--model``, ``--permission-mode``, ``--allowedTools``, ``--disallowedTools`` and ``--max-turns``."""
    profile = _effective(call)
    allowed, disallowed = tool_rules(call, profile, claude_tools=claude_tools)
    turns = max_turns(call, profile, default_max_turns=default_max_turns)
    return [
        *(["--model", profile.model] if profile.model else []),
        "--permission-mode", profile.permission_mode,
        *(["--allowedTools", ",".join(allowed)] if allowed else []),
        *(["--disallowedTools", ",".join(disallowed)] if disallowed else []),
        *(["--max-turns", str(turns)] if turns else []),
    ]


def agents_json(call: AgentCall, *, claude_tools: dict[str, list[str]], default_max_turns: int = 0) -> str:
    """The ``--agents`` value: the call's org node defined by its profile."""
    profile = _effective(call)
    allowed, disallowed = tool_rules(call, profile, claude_tools=claude_tools)
    definition: dict[str, Any] = {
        "description": profile.description.strip() or f"The {call.org_node} agent",
        "prompt": profile.instructions,
        "tools": list(dict.fromkeys(tool_name(rule) for rule in allowed)),
        "disallowedTools": disallowed,
        "model": profile.model,
        "effort": profile.effort,
        "permissionMode": profile.permission_mode,
        "maxTurns": max_turns(call, profile, default_max_turns=default_max_turns),
    }
    # An empty tools list would take every tool away; absent, the agent has the CLI's tools.
    return json.dumps({call.org_node: {key: value for key, value in definition.items() if value}}, ensure_ascii=False)


def tool_rules(call: AgentCall, profile: ResolvedProfile, *,
               claude_tools: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    """The allowed and disallowed tool rules of the call, each sorted; a rule both allowed and disallowed
    (or whose tool is disallowed outright) is disallowed."""
    allowed, disallowed = set(profile.allowed_tools), set(profile.disallowed_tools)
    granted = (call.node or {}).get("allowed_tools")
    if call.purpose == "node" and isinstance(granted, list):
        mine = {tool for name in granted for tool in claude_tools.get(name, [])}
        allowed |= mine
        disallowed |= {tool for tools in claude_tools.values() for tool in tools} - mine
    allowed = {rule for rule in allowed if rule not in disallowed and tool_name(rule) not in disallowed}
    return sorted(allowed), sorted(disallowed)


def max_turns(call: AgentCall, profile: ResolvedProfile, *, default_max_turns: int = 0) -> int | None:
    """The call's turn bound (see the module's docstring); None: no bound."""
    node = call.node or {}
    if call.purpose == "node":
        turns, iterations = node.get("max_turns"), node.get("max_tool_iterations")
        if _count(turns) and turns > 0:
            return turns
        if _count(iterations):
            return iterations + 1
    if profile.max_turns:
        return profile.max_turns
    return default_max_turns if call.purpose == "node" and default_max_turns > 0 else None


def _effective(call: AgentCall) -> ResolvedProfile:
    """The profile as far as the console still sets it: all of it, or, when the repository's definition
    runs, its permission mode only (where the agent runs is the console's, not the repository's, to say)."""
    profile = call.agent_profile()
    if repository_definition(call) is None:
        return profile
    return dataclasses.replace(profile, model="", allowed_tools=(), disallowed_tools=(), max_turns=None)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
