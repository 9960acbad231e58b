"""The task-loop collaboration contract: create-and-run from a TaskRequest, the dashboard, result reports.

A report names its node as ``<task_id>::<node_id>`` and is idempotent: it is keyed by its digest
(a ``ReportReceipt`` per run, node and digest, recorded with the attempt it completed), accepted once,
and answered from that receipt on every replay — sent again later or ten times at once. A report for
a node whose dependencies have not all succeeded is refused. An external node's attempt waiting for
its report (``graphs.engine.external``) is the target: the report completes it.

Agents and bots are untrusted, so every report — ``callback/report`` or the relay's ``bbs/result`` —
obeys the same rules (``node_report_check``) before anything is written: only an external node takes
one, a relay node only from whoever attached it, and a verdict gate never.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from graphs.domain.manifest_nodes import is_external_node
from graphs.engine import node_attempt_finish_external
from graphs.engine.state import graph_shape, latest_rows, upstream_done
from graphs.errors import WorkGraphError
from graphs.models import EXTERNAL_WORKER, PLANNING_NODE_ID, ReportReceipt, Task, WorkGraphRun, WorkNodeExecution
from graphs.runs.facts import node_latest_attempt, task_latest_run

Status = WorkNodeExecution.Status
# The mechanical check a verdict gate passes on (``graphs.domain.mechanical_checks``): the first VERDICT: line
# says pass.
VERDICT_CHECK = "verdict_says_pass"


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


def node_report_check(
    *, run: WorkGraphRun, node_id: str, reporter: AbstractBaseUser, bot_id: str | None = None
) -> None:
    """Refuse, with the reason as a ``ReportRejected``, a report from ``reporter`` for a node of ``run``
    that no report may complete. ``bot_id`` is the bot the report names (``bbs/result``); None: none.

    - A verdict gate is refused first, even an external one: it passes on the verdict of the node it
      reads, judged by the console, so a report must not be able to write that verdict itself.
    - A node that is not external is the engine's: its agent, command and judge must run, and a report
      would let it be recorded done without them.
    - A relay node takes a report only from the user who attached it (and that bot, when one is named).
    """
    shape = graph_shape(run)
    node = shape.nodes.get(node_id)
    if node is None:
        raise ReportRejected(f"the run has no node {node_id!r}", code="unknown_node")
    if _is_verdict_gate(node, zero_token=shape.zero_token):
        raise ReportRejected(f"node {node_id!r} is a verdict gate: the console passes it on the verdict of the"
                             " node it reads, never on a report", code="verdict_gate")
    if not is_external_node(node):
        raise ReportRejected(f"node {node_id!r} is run by the engine; only an external node (executor: external)"
                             " takes a report", code="not_external")
    relay = node.get("relay")
    if isinstance(relay, dict) and (
            relay.get("user") != reporter.get_username() or bot_id not in (None, relay.get("bot_id"))):
        raise ReportRejected(f"only {relay.get('bot_id') or relay.get('user')}, who attached {node_id!r}, may post"
                             " its result", code="not_relay_holder")


def node_result_report(
    *, task: Task, node_id: str, success: bool, data: dict[str, Any], gaps: list[str], reporter: AbstractBaseUser,
    bot_id: str | None = None,
) -> ReportOutcome:
    """Complete the node's current attempt in the task's newest run with a reported result, if
    ``node_report_check`` lets ``reporter`` (and ``bot_id``) report it."""
    if not success and not [gap for gap in gaps if gap.strip()]:
        raise ReportRejected("a failed result must list its gaps", code="gaps_required")
    run = task_latest_run(task.pk)
    if run is None:
        raise ReportRejected("the task has no run yet", code="no_run")
    # Before the receipt: a refused report writes nothing, and a replay is answered only to a reporter
    # the rules let report the node.
    node_report_check(run=run, node_id=node_id, reporter=reporter, bot_id=bot_id)
    digest = _digest(success=success, data=data, gaps=gaps)
    with transaction.atomic():
        try:
            # The key: a second identical report waits here until the first commits, then replays it.
            with transaction.atomic():
                receipt = ReportReceipt.objects.create(run=run, node_id=node_id, digest=digest)
        except IntegrityError:
            return _replayed(run=run, node_id=node_id, digest=digest)
        attempt = _reportable_attempt(run=run, node_id=node_id)
        worker = f"callback:{reporter.get_username()}"
        now = timezone.now()
        if attempt.is_waiting_for_report():
            # Taken from the outside's hands, so its deadline can no longer fail it meanwhile.
            claimed = WorkNodeExecution.objects.filter(pk=attempt.pk, status=Status.RUNNING,
                                                       worker=EXTERNAL_WORKER).update(worker=worker, heartbeat_at=now)
            if claimed != 1:
                raise ReportRejected(f"node {node_id!r} already has a result", code="already_finished")
        else:
            claimed = WorkNodeExecution.objects.filter(
                pk=attempt.pk, status__in=[Status.PENDING, Status.QUEUED]
            ).update(status=Status.RUNNING, worker=worker, ready_at=attempt.ready_at or now, started_at=now,
                     heartbeat_at=now)
            if claimed != 1:
                raise ReportRejected(f"node {node_id!r} is being executed by a worker", code="busy")
        attempt.refresh_from_db()
        node_attempt_finish_external(
            execution=attempt, worker=worker, text=_result_text(data), ok=success, issues=gaps,
            extra={"report_digest": digest, "reported_data": data},
        )
        attempt.refresh_from_db(fields=["status"])
        receipt.node_exec, receipt.status = attempt, attempt.status
        receipt.save(update_fields=["node_exec", "status"])
    return ReportOutcome(node_exec_id=str(attempt.pk), status=attempt.status, changed=True)


def _replayed(*, run: WorkGraphRun, node_id: str, digest: str) -> ReportOutcome:
    receipt = ReportReceipt.objects.get(run=run, node_id=node_id, digest=digest)
    return ReportOutcome(node_exec_id=str(receipt.node_exec_id), status=receipt.status, changed=False)


def _reportable_attempt(*, run: WorkGraphRun, node_id: str) -> WorkNodeExecution:
    """The node's current attempt, if a report may complete it: not finished, and every dependency of
    the node done; otherwise the reason, as a ``ReportRejected``."""
    attempt = node_latest_attempt(run=run, node_id=node_id)
    if attempt is None:
        raise ReportRejected(f"the run has no node {node_id!r}", code="unknown_node")
    if attempt.is_finished():
        raise ReportRejected(f"node {node_id!r} already has a result ({attempt.status})", code="already_finished")
    if attempt.is_waiting_for_report():
        return attempt  # its dependencies succeeded before it was handed out
    shape = graph_shape(run)
    dependencies = shape.dependencies.get(node_id, [])
    latest = latest_rows(run, node_ids=dependencies) if dependencies else {}
    unmet = [dep for dep in dependencies
             if dep not in latest or not upstream_done(shape.manifest, dep, latest[dep]["status"])]
    if unmet:
        raise ReportRejected(
            f"node {node_id!r} waits on {', '.join(map(repr, unmet))}, which have not succeeded",
            code="dependencies_unmet",
        )
    return attempt


def _is_verdict_gate(node: dict[str, Any], *, zero_token: frozenset[str]) -> bool:
    """Whether ``node`` is a verdict gate: fed only by ``zero_token`` edges (its output is what it reads
    upstream) and judged by the verdict check on that output."""
    judgment = node.get("judgment") if isinstance(node.get("judgment"), dict) else {}
    return (node.get("node_id") in zero_token and judgment.get("kind") == "mechanical"
            and judgment.get("check_ref") == VERDICT_CHECK)


def _digest(*, success: bool, data: dict[str, Any], gaps: list[str]) -> str:
    canonical = json.dumps({"success": success, "data": data, "gaps": gaps}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _result_text(data: dict[str, Any]) -> str:
    result = data.get("result")
    return result if isinstance(result, str) else json.dumps(data, ensure_ascii=False)
