"""What one log line says, in a few words, for the node page (``static/js/log-line.js`` is the same
rule for the lines that arrive live)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _cost(value: Any) -> str:
    return f"${value:.4f}" if isinstance(value, int | float) and not isinstance(value, bool) else ""


_SUMMARIES: dict[str, Callable[[dict[str, Any]], list[Any]]] = {
    "agent_init": lambda line: [line.get("model"), line.get("session_id") and f"session {line['session_id']}"],
    "tool_call": lambda line: [line.get("name"), line.get("input")],
    "tool_result": lambda line: ["error" if line.get("is_error") else "", line.get("content")],
    "api_retry": lambda line: [
        f"attempt {line.get('attempt') if line.get('attempt') is not None else '?'}",
        line.get("retry_delay_ms") is not None and f"retry in {line['retry_delay_ms']} ms",
        line.get("error_status") is not None and f"status {line['error_status']}",
        line.get("error"),
    ],
    "agent_result": lambda line: [
        line.get("subtype"),
        line.get("num_turns") is not None and f"{line['num_turns']} turns",
        _cost(line.get("total_cost_usd")),
    ],
    "command_start": lambda line: [" ".join(str(arg) for arg in line.get("argv") or [])],
    "command_output": lambda line: [line.get("stream") == "stderr" and "stderr", line.get("text")],
    "command_exit": lambda line: [
        "timed out" if line.get("timed_out")
        else line.get("exit_code") is not None and f"exit code {line['exit_code']}",
        line.get("duration_ms") is not None and f"{line['duration_ms']} ms",
        line.get("output_dropped_bytes") and f"{line['output_dropped_bytes']} bytes dropped",
    ],
}


def log_line_summary(line: dict[str, Any]) -> str:
    """The line's own words: a tool call's name and input, a call's result and cost, or its text."""
    summary = _SUMMARIES.get(line.get("event", ""))
    if summary is not None:
        return " · ".join(str(part) for part in summary(line) if part)
    for key in ("text", "message", "status", "reason"):
        if line.get(key) is not None:
            return str(line[key])
    return ""
