"""What one log line says, in a few words, for the node page (``static/js/log-line.js`` is the same
rule for the lines that arrive live; ``tests/fixtures/log_lines/summaries.json`` holds both to the same
cases). Every event kind the engine, the planner and the agent runners write has its words; a kind
without them reads as its fields, so no line is ever blank."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from graphs.domain.money_words import usd_text

# The fields every line has, or that only say where the line came from: never part of its words.
_FRAME = {"seq", "ts", "event", "purpose"}

Line = dict[str, Any]


def _cost(value: Any) -> str:
    return usd_text(value) if _is_number(value) else ""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def value_text(value: Any) -> str:
    """A field's value as text, as ``valueText`` in log-line.js writes it: lists joined, objects as
    compact JSON, numbers as JSON writes them."""
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(value_text(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _list(values: Any) -> str:
    return ", ".join(str(value) for value in values) if isinstance(values, list) else ""


def _joined(values: Any) -> str:
    return "; ".join(str(value) for value in values or [])


def _fields_text(line: Line) -> str:
    return " · ".join(f"{key} {value_text(value)}" for key, value in line.items()
                      if key not in _FRAME and value is not None and value != "")


def _on_fail(line: Line) -> list[Any]:
    action = line.get("action") or "on_fail"
    outcome = line.get("outcome")
    if outcome == "looped_back":
        target = line.get("target")
        if target is None and line.get("root_cause"):
            target = f"{line.get('stage') or line['root_cause']} (root cause {line['root_cause']})"
        rerun = f", rerun {_list(line['rerun'])}" if line.get("rerun") else ""
        return [f"{action} → {target or '?'}{rerun}"]
    if outcome == "retrying":
        return [f"{action}: retrying"]
    if outcome == "terminal":
        return [f"{action}: no rerun", line.get("reason")]
    return [f"{action}: {outcome}" if line.get("action") and outcome else line.get("action"), line.get("reason")]


def _number_or_none(line: Line, key: str) -> bool:
    return line.get(key) is not None


_SUMMARIES: dict[str, Callable[[Line], list[Any]]] = {
    "node_start": lambda line: [
        _number_or_none(line, "attempt") and f"attempt {line['attempt']}",
        line.get("cause") and f"cause {line['cause']}",
        line.get("org_node") and f"org node {line['org_node']}",
        line.get("append") and "append",
        line.get("sandbox") and f"sandbox {line['sandbox']}",
    ],
    "node_finished": lambda line: [
        line.get("status"), line.get("error"),
        line.get("committed") is False and "not recorded: the attempt had moved on",
    ],
    "node_completed": lambda line: [
        f"added {_list(line['new_node_ids'])}" if line.get("new_node_ids") else "added no node"],
    "planning_failed": lambda line: [line.get("reason"), _list(line.get("errors"))],
    "planning_cancelled": lambda line: [line.get("reason")],
    "append_awaiting_approval": lambda line: [f"waiting for a reviewer: {_list(line.get('new_node_ids'))}"],
    "repair_requested": lambda line: [f"asked to repair: {_joined(line.get('errors'))}"],
    "agent_call": lambda line: [line.get("purpose") and f"{line['purpose']} call", line.get("org_node")],
    "agent_retry": lambda line: [
        line.get("kind"), _number_or_none(line, "delay") and f"retry in {value_text(line['delay'])} s",
        line.get("message"),
    ],
    "agent_error": lambda line: [line.get("kind"), line.get("transient") and "transient", line.get("message")],
    "transient_retry_skipped": lambda line: [line.get("kind"), line.get("reason")],
    "commands_disabled": lambda line: [line.get("reason")],
    "worker_lost": lambda line: ["the worker stopped beating", line.get("worker")],
    "judgment": lambda line: [
        "pass" if line.get("ok") else "fail", line.get("kind") and f"judged by {line['kind']}",
        _joined(line.get("issues")),
    ],
    "failure_classified": lambda line: [
        line.get("category"), _is_number(line.get("confidence")) and f"confidence {line['confidence']:.2f}",
        _joined(line.get("evidence")),
    ],
    "on_fail": _on_fail,
    "result_reported": lambda line: ["pass" if line.get("ok") else "fail", _joined(line.get("issues"))],
    "external_wait": lambda line: [
        f"waiting for a report until {line.get('deadline_at')}",
        _number_or_none(line, "deadline_seconds") and f"{line['deadline_seconds']} s",
    ],
    "external_timeout": lambda line: [f"no report came within {line.get('deadline_seconds')} s"],
    "aggregated": lambda line: [f"aggregated {_list(line.get('upstream'))}"],
    "change_landed": lambda line: [
        line.get("commit") and f"landed {str(line['commit'])[:12]}",
        _number_or_none(line, "files") and f"{line['files']} files",
    ],
    "change_kept": lambda line: [
        line.get("ref") and f"kept on {line['ref']}", _number_or_none(line, "files") and f"{line['files']} files"],
    "change_not_kept": lambda line: ["not kept", _joined(line.get("issues"))],
    "merge_conflict": lambda line: [
        f"conflict in {_list(line.get('files'))}", line.get("ref") and f"kept on {line['ref']}"],
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
    "agent_event": lambda line: [line.get("event_type"), line.get("subtype"), line.get("raw")],
    "command_start": lambda line: [
        line.get("purpose") == "judgment" and "judgment", " ".join(str(arg) for arg in line.get("argv") or [])],
    "command_output": lambda line: [line.get("stream") == "stderr" and "stderr", line.get("text")],
    "command_exit": lambda line: [
        "timed out" if line.get("timed_out")
        else line.get("exit_code") is not None and f"exit code {line['exit_code']}",
        line.get("duration_ms") is not None and f"{line['duration_ms']} ms",
        line.get("output_dropped_bytes") and f"{line['output_dropped_bytes']} bytes dropped",
        line.get("start_error"),
    ],
}


def log_line_summary(line: Line) -> str:
    """The line's own words: a tool call's name and input, an on_fail's target and reruns, a judgment's
    verdict and issues…; a line of another kind, its text or else its fields."""
    summary = _SUMMARIES.get(line.get("event", ""))
    if summary is not None:
        words = " · ".join(str(part) for part in summary(line) if part)
    else:
        words = next((str(line[key]) for key in ("text", "message", "reason") if line.get(key) is not None), "")
    return words or _fields_text(line)
