"""The Claude Code CLI's ``stream-json`` output, read event by event into log lines and a result.

The format, as documented by Anthropic in "Run Claude Code programmatically" (the Claude Code docs'
headless page, code.claude.com/docs/en/headless) and "Agent SDK reference - TypeScript"
(platform.claude.com/docs/en/agent-sdk/typescript), whose message types the CLI prints one per line:

- ``{"type": "system", "subtype": "init", "session_id", "model", "tools": [names], "cwd",
  "permissionMode", "mcp_servers", ...}`` opens the stream (startup hook events may come before it);
- ``{"type": "system", "subtype": "api_retry", "attempt", "max_retries", "retry_delay_ms",
  "error_status" (an HTTP status or null), "error" (a category such as rate_limit), "uuid",
  "session_id"}`` comes before the CLI retries a failed API request;
- ``{"type": "assistant", "message": {"content": [blocks], ...}, "parent_tool_use_id", "session_id"}``
  carries the model's ``text`` blocks and its ``tool_use`` blocks (``id``, ``name``, ``input``);
- ``{"type": "user", "message": {"content": [blocks] or text}, "parent_tool_use_id", ...}`` carries
  the ``tool_result`` blocks (``tool_use_id``, ``content`` as text or a list of blocks, ``is_error``);
- a subagent's messages are ``assistant`` and ``user`` messages whose ``parent_tool_use_id`` is the id
  of the tool call that started it (null in the main conversation);
- the last line is ``{"type": "result", "subtype", "is_error", "num_turns", "duration_ms",
  "duration_api_ms", "total_cost_usd", "usage" {input_tokens, output_tokens,
  cache_creation_input_tokens, cache_read_input_tokens}, "modelUsage", "permission_denials",
  "session_id", ...}``: subtype ``success`` has the answer in ``result``; ``error_max_turns``,
  ``error_during_execution``, ``error_max_budget_usd`` and ``error_max_structured_output_retries``
  have ``errors`` (a list of strings) instead. A failure inside the run, such as missing
  authentication, is printed as the result, and the CLI exits non-zero; a failed API call is a
  ``success`` result with ``is_error`` true and the API's error text in ``result`` (as the
  claude-code-agent crate's ``ResultMessage`` documents too);
- piped stdin is capped at 10MB: past it the CLI exits with an error and a non-zero status.

Public parsers of the same stream agree (littlebearapps/untether's stream-json cheatsheet, derived
from humanlayer/claudecode-go), and their issues report that print mode refuses stream-json without
``--verbose`` (fullsend-ai/fullsend#306, nullclaw/nullclaw#125). The documents list more message
types (``stream_event``, ``system/compact_boundary``, hook and task messages, …) and the CLI adds new
ones: any event this module does not map is logged whole as ``agent_event``, never an error.

Each event becomes a log line through ``AgentCall.emit_event``: ``agent_init``, ``agent_text``,
``tool_call``, ``tool_result``, ``api_retry``, ``agent_result`` or ``agent_event``; a stdout line
that is not JSON, and every stderr line, is plain ``agent_output`` text through ``AgentCall.emit``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from graphs.agents.base import (
    NETWORK_FAILURE,
    TOKEN_FIELDS,
    AgentCall,
    AgentError,
    AgentResult,
)
from graphs.agents.jsonl_stream import JsonlStreamReader, cut, first_line, hint_of, last_line

# The CLI reports API trouble as text, in stderr or in the ``result`` of an ``is_error`` result.
# Classifying it lets the engine retry a rate limit or an overload (transient) and give up at once on
# credentials or an exhausted plan (permanent); anything else stays exit_code / is_error. Quota comes
# first because its messages can also mention a limit.
_HINTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("quota", re.compile(r"credit balance is too low|usage limit reached|insufficient_quota", re.I)),
    ("auth", re.compile(r"invalid api key|/login|authentication_error|oauth token has expired", re.I)),
    ("rate_limit", re.compile(r"\b429\b|rate[ _-]?limit", re.I)),
    ("unavailable", re.compile(r"overloaded|\b529\b|\b503\b|api error: 5\d\d", re.I)),
    ("network", NETWORK_FAILURE),
)

_TOOL_USE_ERROR = re.compile(r"</?tool_use_error>")


class StreamReader(JsonlStreamReader):
    """Reads the CLI's stdout one line at a time: logs each event through the call as it arrives and
    keeps what the outcome needs (the init and result events, the tool-call count, the head and the
    last lines of stdout). Only the stdout thread feeds it; ``outcome`` runs once that thread is done.
    """

    def __init__(self, call: AgentCall, *, tool_input_max_chars: int, tool_result_max_chars: int) -> None:
        super().__init__(call, tool_input_max_chars=tool_input_max_chars, tool_result_max_chars=tool_result_max_chars)
        self.init: dict[str, Any] | None = None
        self.result: dict[str, Any] | None = None
        self.tool_calls = 0

    def lines(self, event: Any) -> list[tuple[str, dict[str, Any]]]:
        """The log lines one event of the stream becomes."""
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "system" and event.get("subtype") == "init":
            self.init = event
            tools = event.get("tools")
            return [("agent_init", {"session_id": event.get("session_id"), "model": event.get("model"),
                                    "tool_count": len(tools) if isinstance(tools, list) else None})]
        if kind == "system" and event.get("subtype") == "api_retry":
            return [("api_retry", {key: event.get(key) for key in
                                   ("attempt", "max_retries", "retry_delay_ms", "error_status", "error")})]
        if kind in ("assistant", "user"):
            message = event.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list):
                return [self._block_line(event, block) for block in content]
        if kind == "result":
            self.result = event
            return [("agent_result", self._result_fields(event))]
        return [_raw_line(event)]

    def _block_line(self, event: dict[str, Any], block: Any) -> tuple[str, dict[str, Any]]:
        parent = event.get("parent_tool_use_id")
        block_type = block.get("type") if isinstance(block, dict) else None
        if event["type"] == "assistant" and block_type == "text":
            return "agent_text", {"text": str(block.get("text", "")), "parent_tool_use_id": parent}
        if event["type"] == "assistant" and block_type == "tool_use":
            self.tool_calls += 1
            tool_input = json.dumps(block.get("input"), ensure_ascii=False)
            return "tool_call", {
                "tool_use_id": block.get("id"), "name": block.get("name"),
                "input": cut(tool_input, self.tool_input_max_chars), "input_chars": len(tool_input),
                "parent_tool_use_id": parent,
            }
        if event["type"] == "user" and block_type == "tool_result":
            content = _tool_result_text(block.get("content"))
            return "tool_result", {
                "tool_use_id": block.get("tool_use_id"), "is_error": block.get("is_error") is True,
                "content": cut(content, self.tool_result_max_chars), "content_chars": len(content),
                "parent_tool_use_id": parent,
            }
        # Thinking blocks, a subagent's prompt, and block types yet to come.
        return _raw_line(event, block=block)

    def tool_error_text(self, content: str) -> str:
        """The CLI wraps a refused or failed tool call's words in ``<tool_use_error>``: the words alone."""
        return _TOOL_USE_ERROR.sub("", content)

    def _result_fields(self, event: dict[str, Any]) -> dict[str, Any]:
        denials = event.get("permission_denials")
        errors = event.get("errors")
        return {
            **{key: event.get(key) for key in ("subtype", "is_error", "num_turns", "duration_ms", "duration_api_ms",
                                                "total_cost_usd", "session_id")},
            "usage": _token_counts(event.get("usage")),
            "model": self._model(event),
            "permission_denials": len(denials) if isinstance(denials, list) else None,
            **({"errors": [str(error) for error in errors]} if isinstance(errors, list) and errors else {}),
        }

    def _model(self, result: dict[str, Any]) -> str | None:
        """The session's model as ``system/init`` named it, else the only model ``modelUsage`` lists."""
        model = (self.init or {}).get("model")
        if isinstance(model, str):
            return model
        per_model = result.get("modelUsage")
        if isinstance(per_model, dict) and len(per_model) == 1:
            return str(next(iter(per_model)))
        return None

    def outcome(self, returncode: int, stderr: str) -> AgentResult:
        """The call's answer from the ``result`` event, or the AgentError that says why there is none."""
        details = {"stderr": stderr, "stdout_head": self.head, "stdout_tail": self.tail()}
        result = self.result
        if result is None:
            last = last_line(self.tail())
            if returncode != 0:
                reason = first_line(stderr) or last
                # Not the events: a tool's output that mentions a rate limit says nothing of the call.
                raise AgentError(
                    f"the claude CLI exited with code {returncode}: {reason or 'no output'}",
                    kind=hint_of(_HINTS, stderr, *self._plain) or "exit_code", **details,
                )
            raise AgentError(
                "the claude CLI's stream ended without a result event"
                + (f"; its last line: {cut(last, 300)}" if last else "; it printed nothing"),
                kind="invalid_output", **details,
            )
        subtype = result.get("subtype")
        spent = self._accounting(result, text="")
        # Limits the agent was given: it stopped there, nothing broke, and it would stop there again.
        if subtype == "error_max_turns":
            raise AgentError(f"the claude agent reached its turn limit after {result.get('num_turns')} turns",
                             kind="max_turns", spent=spent, **details)
        if subtype == "error_max_budget_usd":
            raise AgentError(f"the claude agent reached its budget after spending {result.get('total_cost_usd')} USD",
                             kind="budget", spent=spent, **details)
        reported = _reported_text(result)
        # The CLI exits non-zero when the run fails, so the result event, not the exit code, says how.
        if result.get("is_error") or subtype != "success":
            stopped = "" if subtype == "success" else f" ({subtype})"
            raise AgentError(f"the claude agent reported an error{stopped}: {reported or 'no message'}",
                             kind=hint_of(_HINTS, reported, stderr) or "is_error", spent=spent, **details)
        if returncode != 0:
            raise AgentError(f"the claude CLI exited with code {returncode} after a successful result: "
                             f"{first_line(stderr) or 'no message'}",
                             kind=hint_of(_HINTS, stderr) or "exit_code", spent=spent, **details)
        text = result.get("result")
        if not isinstance(text, str):
            raise AgentError("the claude CLI's result event has no `result` text", kind="invalid_output",
                             spent=spent, **details)
        return self._accounting(result, text=text)

    def _accounting(self, result: dict[str, Any], *, text: str) -> AgentResult:
        """The call's answer (``text``) with what the result event says it cost."""
        cost = result.get("total_cost_usd")
        return AgentResult(
            text=text,
            raw=result,
            usage=_token_counts(result.get("usage")),
            cost_usd=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
            num_turns=_int_or_none(result.get("num_turns")),
            model=self._model(result),
            session_id=result.get("session_id") if isinstance(result.get("session_id"), str) else None,
            duration_api_ms=_int_or_none(result.get("duration_api_ms")),
            tool_calls=self.tool_calls,
            tool_failures=self.tool_failures,
            tool_failure_first=self.tool_failure_first,
        )


def _raw_line(event: Any, *, block: Any = None) -> tuple[str, dict[str, Any]]:
    """An event (or one content block of it) this runner does not map, logged whole: the log's line
    cap cuts a huge one and records the cut."""
    fields: dict[str, Any] = {}
    if isinstance(event, dict):
        fields = {"event_type": event.get("type"), **({"subtype": event["subtype"]} if "subtype" in event else {})}
        if block is not None:
            fields["block_type"] = block.get("type") if isinstance(block, dict) else None
            fields["parent_tool_use_id"] = event.get("parent_tool_use_id")
    fields["raw"] = json.dumps(event if block is None else block, ensure_ascii=False)
    return "agent_event", fields


def _tool_result_text(content: Any) -> str:
    """A tool result's content as text: a string as it is, a list of blocks as their texts (other
    blocks, an image say, as their JSON)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block["text"]) if isinstance(block, dict) and block.get("type") == "text" and "text" in block
            else json.dumps(block, ensure_ascii=False)
            for block in content
        )
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _token_counts(usage: Any) -> dict[str, int] | None:
    """The four token counts of a ``usage`` object (the rest — service tier, server tool use — is left)."""
    if not isinstance(usage, dict):
        return None
    return {key: usage[key] for key in TOKEN_FIELDS if _int_or_none(usage.get(key)) is not None}


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _reported_text(result: dict[str, Any]) -> str:
    """What a failed result says: its ``result`` text, else its ``errors``."""
    text = result.get("result")
    if isinstance(text, str) and text.strip():
        return text
    errors = result.get("errors")
    return "; ".join(str(error) for error in errors) if isinstance(errors, list) else ""
