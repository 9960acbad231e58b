"""How pages name an attempt's cause, why it failed and which of its tool calls failed, in one place for
the to-do tree, the DAG's node panel and the node page.

A cause reads as what happened ("rerun: benchmark failed its judgment"), not as the stored code
("loop_back from benchmark"); a failure reads as the judge's first issues, else the error; failed tool
calls as how many, and the first one's error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

REASON_MAX_CHARS = 300

_CAUSES = {
    "initial": "first attempt",
    "retry_self": "retry: its judgment failed",
    "transient_retry": "retry after a transient error",
    "fork": "rerun in a fork",
    "planning": "planning call",
    "review": "amends its change: a reviewer requested changes",
}


def attempt_cause_text(cause: str, cause_node_id: str = "") -> str:
    """What led to the attempt, in words."""
    if cause == "loop_back":
        return f"rerun: {cause_node_id} failed its judgment" if cause_node_id else "rerun: a loop-back"
    if cause == "dynamic_loop_back":
        return f"rerun: the verdict of {cause_node_id} sent the run back" if cause_node_id else "rerun: a verdict"
    return _CAUSES.get(cause, cause.replace("_", " "))


def attempt_failure_reason(*, status: str, error: str, judgment_result: Mapping[str, Any] | None) -> str:
    """Why a failed attempt failed, cut to ``REASON_MAX_CHARS``; empty for any other status."""
    if status != "failed":
        return ""
    issues = [str(issue) for issue in (judgment_result or {}).get("issues") or [] if str(issue).strip()]
    if judgment_result and not judgment_result.get("ok", True) and issues:
        reason = "; ".join(issues)
    else:
        reason = error or "failed without a recorded reason"
    return reason if len(reason) <= REASON_MAX_CHARS else reason[: REASON_MAX_CHARS - 1] + "…"


def attempt_tool_failures(*, count: int, first: str) -> dict[str, Any] | None:
    """An attempt's failed tool calls as pages show them — ``count``, the ``first`` one's error and
    ``words`` saying how many ("2 tool calls failed") — or None when none failed."""
    if count <= 0:
        return None
    words = "1 tool call failed" if count == 1 else f"{count:,} tool calls failed"
    return {"count": count, "first": first, "words": words}
