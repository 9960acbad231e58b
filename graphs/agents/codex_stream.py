"""The Codex CLI's ``exec --json`` output, read event by event into log lines and a result.

The format, as OpenAI documents it ("Non-interactive mode", the Codex repository's docs/exec.md, and
the event types of codex-rs/exec/src/exec_events.rs), one JSON object a line:

- ``{"type": "thread.started", "thread_id"}`` opens the stream; ``{"type": "turn.started"}`` begins
  the turn the prompt starts;
- ``item.started`` / ``item.updated`` / ``item.completed``, each ``{"item": {"id", "type", …}}``: an
  ``agent_message`` (``text``), ``reasoning`` (``text``, a summary), ``command_execution``
  (``command``, ``aggregated_output``, ``exit_code``, ``status`` in_progress / completed / failed /
  declined), ``file_change`` (``changes`` [{``path``, ``kind`` add / delete / update}], ``status``;
  only ever completed), ``mcp_tool_call`` (``server``, ``tool``, ``arguments``, ``result``
  {``content``}, ``error`` {``message``}, ``status``), ``web_search`` (``query``), ``todo_list``
  (``items`` [{``text``, ``completed``}]) and ``error`` (``message``: a warning, not fatal);
- ``{"type": "turn.completed", "usage": {"input_tokens", "cached_input_tokens", "output_tokens"}}``
  ends a turn (0.171 adds ``cache_write_input_tokens`` and ``reasoning_output_tokens``);
  ``{"type": "turn.failed", "error": {"message"}}`` ends one that failed;
- ``{"type": "error", "message"}`` is an error of the stream itself; the CLI also reports each retry
  of a failed request this way, as ``Reconnecting... 2/5 (<why>)``.

Each event becomes a log line, the same as the claude runner's (graphs.agents.claude_stream):
``agent_init`` (thread.started), ``agent_text`` (an agent message), ``tool_call`` and ``tool_result``
(a command, file change, MCP tool call, web search or to-do list, paired by the item's id),
``api_retry`` (a reconnect), ``agent_result`` (turn.completed or turn.failed), and ``agent_event`` for
the rest, whole. The answer is the turn's last agent message.

Usage: OpenAI counts cached input inside ``input_tokens``; the console's four counts keep them apart
(``input_tokens`` the uncached part, ``cache_read_input_tokens`` the cached part, the rest as named).
The CLI reports no cost: it is priced from ``WORKGRAPH_MODEL_PRICES`` (cached input at the input
price, the table having no other), and unknown for a model missing there.
"""

from __future__ import annotations

import json
import re
from typing import Any

from graphs.agents.base import NETWORK_FAILURE, AgentCall, AgentError, AgentResult
from graphs.agents.jsonl_stream import JsonlStreamReader, cut, first_line, hint_of, last_line

# How the CLI says it retries a request: "Reconnecting... 2/5 (<why>)".
_RECONNECT = re.compile(r"^Reconnecting\.\.\.\s*(?:(\d+)/(\d+))?\s*\(?(.*?)\)?$", re.S)
# What the CLI's messages say of a failed request (its own words, carrying the API's status and error).
_HINTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("quota", re.compile(r"insufficient_quota|exceeded your current quota|usage limit", re.I)),
    ("auth", re.compile(r"\b401\b|unauthorized|invalid_api_key|incorrect api key|missing environment variable", re.I)),
    ("rate_limit", re.compile(r"\b429\b|rate[ _-]?limit|too many requests", re.I)),
    # A stream that broke off (the API's response.failed among them) after the CLI's own retries.
    ("unavailable", re.compile(r"\b50[0234]\b|overloaded|server_error|internal server error"
                               r"|stream disconnected before completion", re.I)),
    # A model the API does not know: a person must name another (not_found is a program that is missing).
    ("bad_request", re.compile(r"\b404\b|model_not_found|does not exist", re.I)),
    ("network", NETWORK_FAILURE),
)
# Items that are the agent using a tool, and the name each is logged under.
_TOOL_ITEMS = {"command_execution": "command", "file_change": "file_change", "mcp_tool_call": "mcp",
               "web_search": "web_search", "todo_list": "todo_list"}


class CodexStreamReader(JsonlStreamReader):
    """Reads the CLI's stdout one line at a time: logs each event through the call as it arrives and
    keeps what the outcome needs. Only the stdout thread feeds it; ``outcome`` runs once it is done."""

    def __init__(self, call: AgentCall, *, model: str | None, prices: dict[str, tuple[float, float]],
                 tool_input_max_chars: int = 4000, tool_result_max_chars: int = 4000) -> None:
        super().__init__(call, tool_input_max_chars=tool_input_max_chars, tool_result_max_chars=tool_result_max_chars)
        self.model = model
        self.prices = prices
        self.thread_id: str | None = None
        self.answer: str | None = None
        self.usage: dict[str, int] | None = None
        self.turns = 0
        self.failure: str | None = None
        self.errors: list[str] = []
        self.tool_calls = 0
        self._called: set[str] = set()

    def lines(self, event: Any) -> list[tuple[str, dict[str, Any]]]:
        """The log lines one event of the stream becomes."""
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "thread.started":
            self.thread_id = _str(event.get("thread_id"))
            # A thread is no session to resume (the call is --ephemeral): its id is logged as what it is,
            # so no page offers to resume it with Claude's command.
            return [("agent_init", {"session_id": None, "thread_id": self.thread_id, "model": self.model,
                                    "tool_count": None})]
        if kind in ("item.started", "item.updated", "item.completed") and isinstance(event.get("item"), dict):
            return self._item_lines(kind, event["item"], event)
        if kind == "turn.completed":
            self.turns += 1
            self._add_usage(event.get("usage"))
            return [("agent_result", self._result_fields("success", is_error=False))]
        if kind == "turn.failed":
            self.turns += 1
            error = event.get("error")
            self.failure = _str(error.get("message")) if isinstance(error, dict) else None
            self.failure = self.failure or "no message"
            self._add_usage(event.get("usage"))
            return [("agent_result", {**self._result_fields("error", is_error=True), "errors": [self.failure]})]
        if kind == "error":
            message = _str(event.get("message")) or ""
            retry = _RECONNECT.match(message)
            if retry:
                attempt, most, why = retry.groups()
                return [("api_retry", {"attempt": _int(attempt), "max_retries": _int(most), "retry_delay_ms": None,
                                       "error_status": _status(why), "error": why})]
            self.errors.append(message)
        return [_raw_line(event)]

    def _item_lines(self, kind: str, item: dict[str, Any], event: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        item_type = item.get("type")
        item_id = _str(item.get("id"))
        if item_type == "agent_message":
            if kind != "item.completed":
                return [_raw_line(event)]
            self.answer = str(item.get("text", ""))
            return [("agent_text", {"text": self.answer, "parent_tool_use_id": None})]
        if item_type not in _TOOL_ITEMS:
            # Reasoning summaries, warnings (``error`` items), and item types yet to come.
            return [_raw_line(event)]
        lines = []
        if item_id not in self._called:
            self._called.add(item_id or "")
            self.tool_calls += 1
            tool_input = json.dumps(_tool_input(item), ensure_ascii=False)
            lines.append(("tool_call", {"tool_use_id": item_id, "name": _tool_name(item),
                                        "input": cut(tool_input, self.tool_input_max_chars),
                                        "input_chars": len(tool_input), "parent_tool_use_id": None}))
        if kind == "item.completed":
            content = _tool_output(item)
            lines.append(("tool_result", {"tool_use_id": item_id, "is_error": _tool_failed(item),
                                          "content": cut(content, self.tool_result_max_chars),
                                          "content_chars": len(content), "parent_tool_use_id": None}))
        elif kind == "item.updated":
            lines.append(_raw_line(event))
        return lines

    def _add_usage(self, usage: Any) -> None:
        counts = codex_token_counts(usage)
        if counts is None:
            return
        self.usage = {key: (self.usage or {}).get(key, 0) + value for key, value in counts.items()}

    def cost_usd(self) -> float | None:
        """What the call cost by the price table, or None: no usage, or a model it does not price."""
        price = self.prices.get(self.model) if self.model else None
        if price is None or self.usage is None:
            return None
        given = self.usage["input_tokens"] + self.usage["cache_read_input_tokens"] + self.usage[
            "cache_creation_input_tokens"]
        return (given * price[0] + self.usage["output_tokens"] * price[1]) / 1_000_000

    def _result_fields(self, subtype: str, *, is_error: bool) -> dict[str, Any]:
        return {"subtype": subtype, "is_error": is_error, "num_turns": self.turns, "duration_ms": None,
                "duration_api_ms": None, "total_cost_usd": self.cost_usd(), "session_id": None,
                "thread_id": self.thread_id, "usage": self.usage, "model": self.model, "permission_denials": None}

    def outcome(self, returncode: int, stderr: str) -> AgentResult:
        """The call's answer, or the AgentError that says why there is none."""
        details = {"stderr": stderr, "stdout_head": self.head, "stdout_tail": self.tail()}
        spent = self._result("") if self.usage is not None else None
        if self.failure is not None:
            reported = "; ".join([*self.errors[-1:], self.failure]) if self.errors else self.failure
            raise AgentError(f"the codex agent's turn failed: {self.failure}",
                             kind=hint_of(_HINTS, reported) or "is_error", spent=spent, **details)
        if self.turns == 0:
            said = self.errors[-1] if self.errors else (first_line(stderr) or last_line(self.tail()))
            if returncode != 0:
                raise AgentError(f"the codex CLI exited with code {returncode}: {said or 'no output'}",
                                 kind=hint_of(_HINTS, *self.errors, stderr, *self._plain) or "exit_code", **details)
            raise AgentError("the codex CLI's stream ended without a completed turn"
                             + (f"; its last line: {cut(said, 300)}" if said else "; it printed nothing"),
                             kind="invalid_output", **details)
        if returncode != 0:
            raise AgentError(f"the codex CLI exited with code {returncode} after a completed turn: "
                             f"{first_line(stderr) or 'no message'}",
                             kind=hint_of(_HINTS, stderr) or "exit_code", spent=spent, **details)
        if self.answer is None:
            raise AgentError("the codex agent's turn completed without an agent message", kind="invalid_output",
                             spent=spent, **details)
        return self._result(self.answer)

    def _result(self, text: str) -> AgentResult:
        return AgentResult(text=text, raw={"thread_id": self.thread_id, "turns": self.turns, "usage": self.usage},
                           usage=self.usage, cost_usd=self.cost_usd(), num_turns=self.turns, model=self.model,
                           # The thread cannot be resumed: the call is --ephemeral and its HOME is gone.
                           session_id=None, tool_calls=self.tool_calls, tool_failures=self.tool_failures,
                           tool_failure_first=self.tool_failure_first)


def codex_token_counts(usage: Any) -> dict[str, int] | None:
    """The console's four token counts from a turn's ``usage``; None when it reports none."""
    if not isinstance(usage, dict):
        return None
    given, cached = _int(usage.get("input_tokens")), _int(usage.get("cached_input_tokens")) or 0
    output = _int(usage.get("output_tokens"))
    if given is None and output is None:
        return None
    return {"input_tokens": max((given or 0) - cached, 0), "output_tokens": output or 0,
            "cache_creation_input_tokens": _int(usage.get("cache_write_input_tokens")) or 0,
            "cache_read_input_tokens": cached}


def _tool_name(item: dict[str, Any]) -> str:
    if item.get("type") == "mcp_tool_call":
        return f"mcp:{item.get('server')}/{item.get('tool')}"
    return _TOOL_ITEMS[str(item.get("type"))]


def _tool_input(item: dict[str, Any]) -> Any:
    kind = item.get("type")
    if kind == "command_execution":
        return {"command": item.get("command")}
    if kind == "file_change":
        return {"changes": item.get("changes")}
    if kind == "mcp_tool_call":
        return item.get("arguments")
    if kind == "web_search":
        return {"query": item.get("query")}
    return {"items": item.get("items")}


def _tool_output(item: dict[str, Any]) -> str:
    kind = item.get("type")
    if kind == "command_execution":
        return str(item.get("aggregated_output") or "")
    if kind == "file_change":
        changes = item.get("changes") if isinstance(item.get("changes"), list) else []
        return "\n".join(f"{change.get('kind')} {change.get('path')}" for change in changes if isinstance(change, dict))
    if kind == "mcp_tool_call":
        error, result = item.get("error"), item.get("result")
        if isinstance(error, dict):
            return str(error.get("message", ""))
        content = result.get("content") if isinstance(result, dict) else None
        return "\n".join(str(block["text"]) if isinstance(block, dict) and "text" in block
                         else json.dumps(block, ensure_ascii=False) for block in content or [])
    if kind == "todo_list":
        entries = item.get("items") if isinstance(item.get("items"), list) else []
        return "\n".join(f"[{'x' if entry.get('completed') else ' '}] {entry.get('text')}"
                         for entry in entries if isinstance(entry, dict))
    return str(item.get("query") or "")


def _tool_failed(item: dict[str, Any]) -> bool:
    if item.get("status") in ("failed", "declined") or isinstance(item.get("error"), dict):
        return True
    code = item.get("exit_code")
    return item.get("type") == "command_execution" and isinstance(code, int) and code != 0


def _raw_line(event: Any) -> tuple[str, dict[str, Any]]:
    """An event this runner does not map, logged whole (the log's line cap cuts a huge one)."""
    fields: dict[str, Any] = {}
    if isinstance(event, dict):
        fields["event_type"] = event.get("type")
        item = event.get("item")
        if isinstance(item, dict):
            fields["item_type"] = item.get("type")
    fields["raw"] = json.dumps(event, ensure_ascii=False)
    return "agent_event", fields


def _status(text: str) -> int | None:
    found = re.search(r"\b([45]\d\d)\b", text or "")
    return int(found.group(1)) if found else None


def _int(value: Any) -> int | None:
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
