"""One attempt, one planning call, as pages and the API show them, and the commands a run's plan runs."""

from __future__ import annotations

import shlex
from typing import Any

from django.conf import settings

from graphs.domain import manifest_nodes
from graphs.domain.attempt_words import attempt_cause_text, attempt_failure_reason, attempt_tool_failures
from graphs.domain.judgment_words import failure_reading, judgment_reading
from graphs.engine.state import subagent_by_node
from graphs.models import PLANNING_NODE_ID, WorkGraphRun, WorkNodeExecution
from graphs.runs.accounting import accounting_of


def execution_detail(execution: WorkNodeExecution) -> dict[str, Any]:
    """One attempt as the DAG's side panel and the API show it: ids, status, timings, its prompt, output
    and judgment (stored, and as it reads: ``judgment_reading``, ``failure_reading``), its failed tool
    calls (``tool_failures_reading``, None when none failed), the worker that ran it, and every attempt
    of its node (one query for those)."""
    attempts = (
        WorkNodeExecution.objects.filter(run_id=execution.run_id, node_id=execution.node_id)
        .order_by("attempt")
        .values("node_exec_id", "attempt", "status", "cause", "cause_node_id", "error", "judgment_result", "failure",
                "started_at", "finished_at", "tool_failures", "tool_failure_first")
    )
    output = execution.output_payload or {}
    return {
        "node_exec_id": execution.pk,
        "run_id": execution.run_id,
        "node_id": execution.node_id,
        "is_planning": execution.is_planning,
        "subagent_type": execution.subagent_type,
        "org_node": execution.subagent_type,
        "attempt": execution.attempt,
        "cause": execution.cause,
        "cause_node_id": execution.cause_node_id,
        "status": execution.status,
        "error": execution.error,
        "judgment_result": execution.judgment_result,
        "judgment": execution.judgment_result,
        "failure": execution.failure,
        "judgment_reading": judgment_reading(execution.judgment_result),
        "failure_reading": failure_reading(execution.failure),
        "tool_failures_reading": attempt_tool_failures(count=execution.tool_failures,
                                                       first=execution.tool_failure_first),
        "worker": execution.worker,
        "ready_at": execution.ready_at,
        "started_at": execution.started_at,
        "finished_at": execution.finished_at,
        "prompt": (execution.input_payload or {}).get("prompt", ""),
        # A planning call's answer is its raw response; a node's is its text.
        "output": output.get("raw_response", "") if execution.is_planning else output.get("text", ""),
        "cause_text": attempt_cause_text(execution.cause, execution.cause_node_id),
        "attempts": [_attempt_summary(attempt) for attempt in attempts],
        **accounting_of(execution),
    }


def _attempt_summary(attempt: dict[str, Any]) -> dict[str, Any]:
    return {
        **attempt,
        "cause_text": attempt_cause_text(attempt["cause"], attempt["cause_node_id"]),
        "reason": attempt_failure_reason(status=attempt["status"], error=attempt["error"],
                                         judgment_result=attempt["judgment_result"]),
        "judgment_reading": judgment_reading(attempt["judgment_result"]),
        "failure_reading": failure_reading(attempt["failure"]),
        "tool_failures_reading": attempt_tool_failures(count=attempt["tool_failures"],
                                                       first=attempt["tool_failure_first"]),
    }


def planning_call_detail(call: WorkNodeExecution) -> dict[str, Any]:
    """One planning call as the planning inspector and the API show it: the prompt, the raw answer, the
    repair request and its answer, the extracted and the normalized manifest, notes and errors."""
    payload = call.output_payload or {}
    return {
        "execution": call,
        "node_exec_id": call.pk,
        "node_id": call.node_id,
        "org_node": call.subagent_type,
        "attempt": call.attempt,
        "status": call.status,
        "error": call.error,
        "prompt": (call.input_payload or {}).get("prompt", ""),
        "raw_response": payload.get("raw_response", ""),
        "repair_prompt": payload.get("repair_prompt"),
        "repair_response": payload.get("repair_response"),
        "extracted_manifest": payload.get("extracted_manifest"),
        "manifest": payload.get("manifest"),
        "normalization_notes": payload.get("normalization_notes") or [],
        "validation_errors": payload.get("validation_errors") or [],
        "new_node_ids": payload.get("new_node_ids") or [],
    }


def plan_commands(run: WorkGraphRun) -> list[dict[str, Any]]:
    """Every command the run's manifest runs (command nodes, command judgments and validators' test
    scripts), in manifest order: ``node_id``, ``runs_as`` (``node``, ``judgment`` or ``test_script``),
    ``command`` (the argv as a shell would quote it, for reading; it runs without a shell) and
    ``timeout_seconds`` (the console's default when unset). One query: who planned each node, as the
    engine reads it to decide whether a test script runs."""
    owners = subagent_by_node(run)
    return [
        {"node_id": listed["node_id"], "runs_as": listed["runs_as"], "command": shlex.join(listed["argv"]),
         "timeout_seconds": listed["timeout_seconds"] or settings.WORKGRAPH_COMMAND_TIMEOUT}
        for listed in manifest_nodes.manifest_commands(run.graph_manifest or {}, owners=owners)
    ]


def planning_calls(run: WorkGraphRun) -> list[dict[str, Any]]:
    """Every planning call of the run, oldest first, as ``planning_call_detail`` shapes it."""
    calls = WorkNodeExecution.objects.filter(run_id=run.pk, node_id__startswith=PLANNING_NODE_ID).order_by("created_at")
    return [planning_call_detail(call) for call in calls]
