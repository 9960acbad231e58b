"""The task-loop collaboration contract: create-and-run from a TaskRequest, the dashboard, result reports.

A report names its node as ``<task_id>::<node_id>`` and is idempotent: the same report twice changes
nothing the second time (its digest is kept on the attempt it completed).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from graphs.engine import node_attempt_finish_external
from graphs.errors import WorkGraphError
from graphs.models import PLANNING_NODE_ID, Task, WorkGraphRun, WorkNodeExecution

Status = WorkNodeExecution.Status


class ReportRejected(WorkGraphError):
    """A report that cannot be recorded; ``code`` says why in a stable word."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ReportOutcome:
    node_exec_id: str
    status: str
    changed: bool


def loop_task_id_parse(loop_task_id: str) -> tuple[uuid.UUID, str]:
    task_part, separator, node_id = loop_task_id.partition("::")
    try:
        task_id = uuid.UUID(task_part)
    except ValueError:
        raise ReportRejected("loop_task_id must look like '<task_id>::<node_id>'", code="bad_loop_task_id") from None
    if not separator or not node_id or node_id.startswith(PLANNING_NODE_ID):
        raise ReportRejected("loop_task_id must look like '<task_id>::<node_id>'", code="bad_loop_task_id")
    return task_id, node_id


def node_result_report(
    *, task: Task, node_id: str, success: bool, data: dict[str, Any], gaps: list[str], reporter: AbstractBaseUser
) -> ReportOutcome:
    """Complete the node's current attempt in the task's newest run with a reported result."""
    if not success and not [gap for gap in gaps if gap.strip()]:
        raise ReportRejected("a failed result must list its gaps", code="gaps_required")
    run = WorkGraphRun.objects.filter(task=task).order_by("-created_at").first()
    if run is None:
        raise ReportRejected("the task has no run yet", code="no_run")
    attempt = run.executions.filter(node_id=node_id).order_by("-attempt").first()
    if attempt is None:
        raise ReportRejected(f"the run has no node {node_id!r}", code="unknown_node")
    digest = _digest(success=success, data=data, gaps=gaps)
    if attempt.is_finished():
        if (attempt.output_payload or {}).get("report_digest") == digest:
            return ReportOutcome(node_exec_id=str(attempt.pk), status=attempt.status, changed=False)
        raise ReportRejected(f"node {node_id!r} already has a result ({attempt.status})", code="already_finished")
    worker = f"callback:{reporter.get_username()}"
    now = timezone.now()
    claimed = WorkNodeExecution.objects.filter(pk=attempt.pk, status__in=[Status.PENDING, Status.QUEUED]).update(
        status=Status.RUNNING, worker=worker, ready_at=attempt.ready_at or now, started_at=now, heartbeat_at=now
    )
    if claimed != 1:
        raise ReportRejected(f"node {node_id!r} is being executed by a worker", code="busy")
    attempt.refresh_from_db()
    node_attempt_finish_external(
        execution=attempt, worker=worker, text=_result_text(data), ok=success, issues=gaps,
        extra={"report_digest": digest, "reported_data": data},
    )
    attempt.refresh_from_db()
    return ReportOutcome(node_exec_id=str(attempt.pk), status=attempt.status, changed=True)


def _digest(*, success: bool, data: dict[str, Any], gaps: list[str]) -> str:
    canonical = json.dumps({"success": success, "data": data, "gaps": gaps}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _result_text(data: dict[str, Any]) -> str:
    result = data.get("result")
    return result if isinstance(result, str) else json.dumps(data, ensure_ascii=False)
