"""Agent profiles as plain data: what a runner is told an org node is, and the profiles the console ships.

A ``ResolvedProfile`` is the profile an agent call runs with (graphs.profiles resolves it from the
database: a project's override, else the console's profile); ``shipped_profile`` is what a fresh
install starts from — the identities graphs.domain.prompts has always sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphs.domain.catalogs import ORG_NODE_ROLES
from graphs.domain.prompts import agent_identity

# The Claude Code CLI's permission modes (its --permission-mode values and subagents' permissionMode).
PERMISSION_MODES = ("dontAsk", "acceptEdits", "auto", "bypassPermissions", "plan")
# The shipped mode. ``auto`` asks Anthropic's safety check, which does not run behind a gateway
# (ANTHROPIC_BASE_URL elsewhere, Bedrock, Vertex): every action needing it is refused. ``dontAsk`` needs
# nothing but the CLI: the profile's allowed tools run, anything else is refused without a prompt nobody
# could answer, and the sandbox bounds what the allowed tools reach.
SHIPPED_PERMISSION_MODE = "dontAsk"
EFFORTS = ("low", "medium", "high", "xhigh", "max")
# An org node a profile can be kept for: a name usable in a URL and as a Claude agent's name.
ORG_NODE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$")

_READ = ("Read", "Glob", "Grep")
_WORK = (*_READ, "Write", "Edit", "Bash", "TodoWrite", "Task")
# The tools each shipped profile pre-approves: a planner reads and plans; a validator also runs its
# checks and writes its own scenarios; a coder, and any other org node, does the work.
_SHIPPED_TOOLS: dict[str, tuple[str, ...]] = {
    "planner": (*_READ, "TodoWrite", "Task"),
    "validator": (*_READ, "Write", "Bash", "TodoWrite", "Task"),
}


@dataclass(frozen=True)
class ResolvedProfile:
    """The profile one agent call runs with."""

    org_node: str
    description: str
    instructions: str
    model: str = ""
    effort: str = ""
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    max_turns: int | None = None
    permission_mode: str = SHIPPED_PERMISSION_MODE
    repository_definition_first: bool = False
    # The AgentProfileRevision it was read from; None for a shipped profile never stored.
    revision_id: int | None = None
    revision_number: int | None = None
    # The project whose override it is; empty for the console's profile.
    project_slug: str = ""


def shipped_profile(org_node: str) -> ResolvedProfile:
    """The profile ``org_node`` has on a fresh install: its identity from graphs.domain.prompts."""
    role = ORG_NODE_ROLES.get(org_node, f"You carry out the part of a task assigned to {org_node}.")
    return ResolvedProfile(
        org_node=org_node,
        description=f"The {org_node} agent of a work-graph console. {role}",
        instructions=agent_identity(org_node),
        allowed_tools=_SHIPPED_TOOLS.get(org_node, _WORK),
    )


def tool_names_parse(text: str) -> tuple[str, ...]:
    """Tool rules from a comma- or line-separated list (``Read, Bash(git diff:*)``), each once, in order.

    A comma inside a rule's parentheses belongs to the rule.
    """
    rules: list[str] = []
    current, depth = "", 0
    for char in text:
        if char in ",\n" and depth == 0:
            rules.append(current)
            current = ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current += char
    rules.append(current)
    return tuple(dict.fromkeys(rule.strip() for rule in rules if rule.strip()))


def tool_name(rule: str) -> str:
    """The tool a permission rule names: ``Bash`` for ``Bash(git diff:*)``."""
    return rule.split("(", 1)[0].strip()
