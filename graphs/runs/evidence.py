"""Evidence gates: a node that must show evidence and does not ends ``partial`` instead of ``succeeded``.

A node's ``required_evidence`` lists what its output must carry before it counts as done:

- ``output``      — a non-empty output;
- ``url``         — at least one absolute http(s) URL with a host in the output (a cited source);
- ``tool_result`` — a tool actually ran: a ``tool_result`` line in the execution's log (written by a
  runner that reports tool calls, such as the claude runner), or a fenced block tagged
  ``tool_result`` in the output holding what the tool returned (runners that only return text).

Anything else cannot be checked, so it is reported as an unsupported requirement and the node stays
partial: a requirement nobody can verify must not pass silently. A node is ``required_for_completion``
unless its spec says ``false``; a required node that ends partial blocks its dependants and makes the
task ``incomplete``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from graphs.domain.markdown import fenced_blocks_find
from graphs.logs.store import log_read
from graphs.models import PLANNING_NODE_ID, ExecutionLogFile, WorkGraphRun, WorkNodeExecution
from graphs.runs.facts import latest_by_node

EVIDENCE_KINDS = ("tool_result", "url", "output")
TOOL_RESULT_TAG = "tool_result"

# Finds URL candidates only; each one is then checked with urlsplit.
_URL_CANDIDATE = re.compile(r"https?://[^\s<>()\[\]{}\"'`]+", re.IGNORECASE)

Status = WorkNodeExecution.Status


def evidence_gaps(*, required: Sequence[Any], output: str, log_events: Iterable[str] = ()) -> list[str]:
    """Return one gap per requirement in ``required`` that ``output`` and the log events do not meet."""
    events = set(log_events)
    gaps = []
    for requirement in required:
        if requirement == "output":
            met = bool(output.strip())
        elif requirement == "url":
            met = _has_url(output)
        elif requirement == "tool_result":
            met = TOOL_RESULT_TAG in events or _has_tool_result_block(output)
        else:
            gaps.append(f"unsupported evidence requirement: {requirement}")
            continue
        if not met:
            gaps.append(f"missing required evidence: {requirement}")
    return gaps


def node_evidence_gaps(*, node: Mapping[str, Any], output: str, execution: WorkNodeExecution) -> list[str]:
    """The evidence gaps of one finished attempt; the log is read only when a tool result is required."""
    required = _required_evidence(node)
    if not required:
        return []
    events: list[str] = []
    if TOOL_RESULT_TAG in required:
        log_file = ExecutionLogFile.objects.filter(node_exec=execution).first()
        if log_file is not None:
            events = [line.get("event", "") for line in log_read(log_file=log_file)]
    return evidence_gaps(required=required, output=output, log_events=events)


def node_required_for_completion(node: Mapping[str, Any] | None) -> bool:
    """Return False only for a node whose spec says ``required_for_completion: false``."""
    return (node or {}).get("required_for_completion") is not False


def run_incompleteness(*, run: WorkGraphRun) -> dict[str, Any] | None:
    """Why a finished run is incomplete rather than failed, or None when it is not.

    A run is incomplete when required nodes ended ``partial`` (evidence missing) and no node failed
    outright; the nodes blocked behind them are listed too. Returns ``{"incomplete_nodes": [{node_id,
    gaps}], "blocked_nodes": [...], "summary": "..."}``.
    """
    nodes = {node.get("node_id"): node for node in (run.graph_manifest or {}).get("nodes", [])}
    latest = latest_by_node(run.executions.exclude(node_id__startswith=PLANNING_NODE_ID).only(
        "node_id", "attempt", "status", "judgment_result", "error"
    ))
    if any(row.status == Status.FAILED for row in latest.values()):
        return None
    incomplete = [
        {"node_id": node_id, "gaps": list((row.judgment_result or {}).get("evidence_gaps") or [row.error])}
        for node_id, row in sorted(latest.items())
        if row.status == Status.PARTIAL and node_required_for_completion(nodes.get(node_id))
    ]
    if not incomplete:
        return None
    blocked = sorted(node_id for node_id, row in latest.items() if row.status == Status.BLOCKED)
    summary = "; ".join(f"{item['node_id']}: {', '.join(item['gaps'])}" for item in incomplete)
    return {"incomplete_nodes": incomplete, "blocked_nodes": blocked, "summary": f"incomplete — {summary}"}


def _required_evidence(node: Mapping[str, Any]) -> list[Any]:
    required = node.get("required_evidence") or []
    # A malformed value (a bare string, an object) is a requirement nobody can check, not no requirement.
    return list(required) if isinstance(required, list) else [required]


def _has_tool_result_block(text: str) -> bool:
    return any(block.strip() for block in fenced_blocks_find(text, tags=(TOOL_RESULT_TAG,)))


def _has_url(text: str) -> bool:
    for candidate in _URL_CANDIDATE.findall(text):
        parts = urlsplit(candidate.rstrip(".,;:!?"))
        if parts.scheme.lower() in ("http", "https") and parts.hostname:
            return True
    return False
