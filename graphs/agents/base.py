"""The protocol every agent runner implements, and the errors they raise."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from graphs.domain.agent_profiles import ResolvedProfile, shipped_profile

logger = logging.getLogger(__name__)

Purpose = Literal["plan", "node", "judge"]

# Worth retrying with backoff: the same call may well succeed a little later.
TRANSIENT_KINDS = frozenset({"timeout", "network", "rate_limit", "unavailable"})
# How a dropped connection reads in an agent's own words (Node's error codes, the OS's messages): the
# network failed under the call, which a later call may well get through.
NETWORK_FAILURE = re.compile(
    r"\bECONNRESET\b|\bECONNREFUSED\b|\bEPIPE\b|connection (?:was )?reset|connection refused|broken pipe"
    r"|socket hang up",
    re.I,
)
# Retrying cannot help: a person has to fix configuration, credentials, the prompt or the agent. An
# agent stopped by its own turn limit (``max_turns``) or spending cap (``budget``) would stop there again.
PERMANENT_KINDS = frozenset(
    {"auth", "quota", "exit_code", "is_error", "invalid_output", "not_found", "bad_request", "cancelled",
     "max_turns", "budget", "sandbox"}
)


@dataclass(frozen=True)
class AgentCall:
    """One request to an agent: plan a graph, execute a node, or judge a node's output."""

    org_node: str
    prompt: str
    cwd: Path
    timeout: float
    purpose: Purpose = "node"
    # The manifest node being executed or judged.
    node: Mapping[str, Any] | None = None
    # The attempt number of the node being executed or judged, starting at 1.
    attempt: int = 1
    # Node ids already in the run when planning in append mode.
    existing_node_ids: tuple[str, ...] = ()
    # How a planning call answers: a graph_manifest (``graph``), or a gap answer of seed 002's
    # planning contract (``gap_driven``, see graphs.planning.gaps).
    planning_mode: str = "graph"
    # Whether the call's project runs commands (its allow_commands): command nodes and command
    # judgments are planned, and their files written, only then.
    commands_allowed: bool = False
    # Called with each plain output line as it arrives, from a runner thread; it must not block for long.
    on_line: Callable[[str], None] | None = None
    # Called with each structured event the agent reports (``tool_call`` and its fields, say) as it
    # arrives, from a runner thread; it must not block for long.
    on_event: Callable[[str, dict[str, Any]], None] | None = None
    # Set it to stop the agent promptly; the runner then raises AgentCancelled.
    cancel_event: threading.Event | None = None
    # What the call may spend, in USD (what is left of its run's budget); None: no limit. Runners that
    # can hold an agent to it pass it on (the Claude CLI's --max-budget-usd).
    max_budget_usd: float | None = None
    # The agent profile the call runs with (graphs.profiles resolves it); None: the org node's shipped one.
    profile: ResolvedProfile | None = None

    def agent_profile(self) -> ResolvedProfile:
        """The profile this call runs with: the one resolved for it, else its org node's shipped profile.

        Every runner reads the agent's instructions, model, tools and limits from it.
        """
        return self.profile if self.profile is not None else shipped_profile(self.org_node)

    def cancelled(self) -> bool:
        """Return True once the caller has asked to stop this call."""
        return self.cancel_event is not None and self.cancel_event.is_set()

    def emit(self, line: str) -> None:
        """Hand one output line to ``on_line``; a failing callback is logged, never raised.

        The callback runs on the thread that drains the agent's output: if it raised, that thread
        would stop reading and the agent could block forever on a full pipe.
        """
        if self.on_line is None:
            return
        try:
            self.on_line(line)
        except Exception:
            logger.exception("on_line callback failed for a %s call of %s", self.purpose, self.org_node)

    def emit_event(self, event: str, fields: dict[str, Any]) -> None:
        """Hand one structured event to ``on_event``; a failing callback is logged, never raised (see
        ``emit``)."""
        if self.on_event is None:
            return
        try:
            self.on_event(event, fields)
        except Exception:
            logger.exception("on_event callback failed for a %s call of %s", self.purpose, self.org_node)


@dataclass(frozen=True)
class AgentResult:
    text: str
    # The raw payload: the final ``result`` event for claude, the response body (or a summary of the
    # stream) for openai, a small description for offline.
    raw: Any
    usage: dict | None
    # What the call cost, as far as the agent reports it; None where a runner has nothing of the kind.
    cost_usd: float | None = None
    num_turns: int | None = None
    model: str | None = None
    session_id: str | None = None
    duration_api_ms: int | None = None
    tool_calls: int | None = None
    # The tool calls whose result was an error, and the first one's words (see jsonl_stream).
    tool_failures: int | None = None
    tool_failure_first: str = ""

    def accounting(self) -> dict[str, Any]:
        """The call's usage, cost, turns, model, session, API time and tool-call count, keyed as an
        attempt's output payload stores them."""
        return {
            "usage": self.usage,
            "cost_usd": self.cost_usd,
            "num_turns": self.num_turns,
            "model": self.model,
            "session_id": self.session_id,
            "duration_api_ms": self.duration_api_ms,
            "tool_calls": self.tool_calls,
        }


class AgentError(Exception):
    """An agent call that produced no usable answer.

    ``kind`` names the failure; ``transient`` says whether retrying the same call may succeed. The
    detail fields keep what the agent printed so a reviewer can see why: ``stdout_head`` is the head of
    the CLI's stdout, or of the HTTP response body for HTTP runners; ``stdout_tail`` its last lines.
    ``spent`` is what the failed call cost, where the agent reported it (an AgentResult without text):
    an agent stopped at its turn limit has still used tokens.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        transient: bool | None = None,
        stderr: str = "",
        stdout_head: str = "",
        stdout_tail: str = "",
        status_code: int | None = None,
        spent: AgentResult | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.transient = kind in TRANSIENT_KINDS if transient is None else transient
        self.stderr = stderr
        self.stdout_head = stdout_head
        self.stdout_tail = stdout_tail
        self.status_code = status_code
        self.spent = spent


class AgentCancelled(AgentError):
    def __init__(self, message: str = "the agent call was cancelled") -> None:
        super().__init__(message, kind="cancelled", transient=False)


class AgentRunner(Protocol):
    name: str

    def run(self, call: AgentCall) -> AgentResult: ...


def output_head(text: str, limit: int = 2000) -> str:
    """The first ``limit`` characters of an agent's output, for error details."""
    return text[:limit]


TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def token_counts(usage: Any) -> dict[str, int]:
    """The four token counts of a call's usage, whichever way the agent reported it.

    Claude reports ``input_tokens``, ``output_tokens`` and the two cache counts; OpenAI-compatible
    servers ``prompt_tokens``, ``completion_tokens`` and ``prompt_tokens_details.cached_tokens``.
    """
    usage = usage if isinstance(usage, dict) else {}

    def count(*keys: str) -> int:
        for key in keys:
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
        return 0

    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return {
        "input_tokens": count("input_tokens", "prompt_tokens"),
        "output_tokens": count("output_tokens", "completion_tokens"),
        "cache_creation_input_tokens": count("cache_creation_input_tokens"),
        "cache_read_input_tokens": count("cache_read_input_tokens")
        or (cached if isinstance(cached, int) and cached >= 0 else 0),
    }
