"""The one place a run's status is written, and the rule its task's status follows.

A task's status is derived from its runs, never set on its own: ``draft`` while it has none, then
whatever its latest run (a fork is the latest run) says — ``planning``, ``awaiting_approval``,
``ready``, ``queued``, ``running``, ``succeeded``, ``failed`` (planning failed, too), ``rejected`` (a reviewer
turned its plan or an append down) or ``cancelled``; a failed
run stopped only by required nodes that lack evidence leaves its task ``incomplete``. Every status
write goes through ``run_status_set``, which refreshes the task in the same transaction.
"""

from __future__ import annotations

from collections.abc import Collection
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from graphs.domain.mechanical_checks import final_verdict_read
from graphs.domain.storable import storable
from graphs.errors import TaskBusyError
from graphs.logs.events import node_states_emit, run_event_emit
from graphs.logs.store import log_append, log_file_close
from graphs.models import Task, WorkGraphRun, WorkNodeExecution
from graphs.notifications import run_status_notify
from graphs.runs.admission import run_left_running
from graphs.runs.evidence import run_incompleteness
from graphs.runs.facts import runs_latest_first, task_latest_run
from graphs.telemetry.export import run_ended

RunStatus = WorkGraphRun.Status
# Why a planned run nobody started ended when a new plan of its task was asked for.
SUPERSEDED = "superseded by a new plan of the task before it started"
UNFINISHED_STATUSES = tuple(status for status in RunStatus.values if status not in WorkGraphRun.FINISHED_STATUSES)

_TASK_STATUS_OF_RUN = {
    RunStatus.PLANNING: Task.Status.PLANNING,
    RunStatus.PLANNING_FAILED: Task.Status.FAILED,
    RunStatus.AWAITING_APPROVAL: Task.Status.AWAITING_APPROVAL,
    RunStatus.READY: Task.Status.READY,
    RunStatus.QUEUED: Task.Status.QUEUED,
    RunStatus.RUNNING: Task.Status.RUNNING,
    RunStatus.SUCCEEDED: Task.Status.SUCCEEDED,
    RunStatus.FAILED: Task.Status.FAILED,
    RunStatus.REJECTED: Task.Status.REJECTED,
    RunStatus.CANCELLED: Task.Status.CANCELLED,
}


def run_status_set(
    *,
    run: WorkGraphRun,
    status: str,
    error: str | None = None,
    allowed_from: Collection[str] | None = None,
    **fields: Any,
) -> bool:
    """Move ``run`` to ``status`` — only from one of ``allowed_from``, when given — with ``fields``;
    announce it and let its task follow. Return whether the run moved.

    A finished status stamps ``finished_at`` unless ``fields`` sets it. ``run`` is updated in place. A
    run leaving ``running`` (as ``run`` says) frees its slot for the oldest queued run once this commits.
    """
    leaves_running = run.status == RunStatus.RUNNING and status != RunStatus.RUNNING
    values: dict[str, Any] = {"status": status, **fields}
    if error is not None:
        values["error"] = storable(error)
    if status in WorkGraphRun.FINISHED_STATUSES:
        values.setdefault("finished_at", timezone.now())
    with transaction.atomic():
        rows = WorkGraphRun.objects.filter(pk=run.pk)
        if allowed_from is not None:
            rows = rows.filter(status__in=list(allowed_from))
        if rows.update(**values) != 1:
            return False
        for name, value in values.items():
            setattr(run, name, value)
        if leaves_running:
            run_left_running()
        announced = {name: values[name] for name in ("error", "error_code") if name in values}
        run_event_emit(run_id=run.pk, event="run_status", status=status, **announced)
        run_status_notify(run=run, status=status, **announced)
        task_status_refresh(task_id=run.task_id)
        if status in WorkGraphRun.FINISHED_STATUSES:
            run_ended(run.pk)
    return True


def run_stop(*, run_id: Any, error_code: str = "", error: str = "") -> WorkGraphRun | None:
    """Ask a run to stop: nothing new starts, waiting attempts are cancelled now (external nodes' attempts
    waiting for a report and attempts awaiting review too: no agent of theirs is to be stopped), running
    agents are stopped by their heartbeat, and the run ends once none is left running
    (``run_stopped_finish``).

    A stop with an ``error_code`` (``budget_exceeded``) ends the run ``failed`` with ``error``; a
    plain stop ends it ``cancelled``. The first stop's reason is the one kept. Return the run as it
    is now, or None when it had already finished.
    """
    now = timezone.now()
    with transaction.atomic():
        run = WorkGraphRun.objects.select_for_update(no_key=True).get(pk=run_id)
        if run.is_finished():
            return None
        if run.cancel_requested_at is None:
            why = {"error_code": error_code, "error": storable(error)} if error_code else {}
            WorkGraphRun.objects.filter(pk=run.pk).update(cancel_requested_at=now, **why)
            run.cancel_requested_at = now
            for name, value in why.items():
                setattr(run, name, value)
            if error_code:
                run_event_emit(run_id=run.pk, event="run_stopping", error_code=error_code, error=run.error)
        # An attempt awaiting review ends too: its change stays on its own ref, never landed.
        waiting = run.executions.filter(
            Q(status__in=[WorkNodeExecution.Status.PENDING, WorkNodeExecution.Status.QUEUED,
                          WorkNodeExecution.Status.AWAITING_REVIEW])
            | Q(status=WorkNodeExecution.Status.RUNNING, deadline_at__isnull=False)
        )
        stopped = list(waiting.values("pk", "node_id", "attempt", "cause"))
        external_waits = list(waiting.filter(status__in=[WorkNodeExecution.Status.RUNNING,
                                                         WorkNodeExecution.Status.AWAITING_REVIEW]))
        reason = _stop_reason(error_code=run.error_code, error=run.error)
        waiting.update(status=WorkNodeExecution.Status.CANCELLED, error=reason, finished_at=now)
        node_states_emit(run_id=run.pk, rows=[{**row, "status": WorkNodeExecution.Status.CANCELLED} for row in stopped])
        for execution in external_waits:
            log_append(execution=execution, event="node_finished", status=WorkNodeExecution.Status.CANCELLED,
                       error=reason, committed=True)
            log_file_close(execution=execution)
        if not run.executions.filter(status=WorkNodeExecution.Status.RUNNING).exists():
            run_stopped_finish(run)
    return run


def run_stopped_finish(run: WorkGraphRun, *, allowed_from: Collection[str] | None = None) -> bool:
    """End a run whose stop was asked for and of which nothing runs any more: ``failed`` with the
    reason a stop with an error code recorded, else ``cancelled``. Return whether this call ended it."""
    error_code, error = WorkGraphRun.objects.filter(pk=run.pk).values_list("error_code", "error").get()
    allowed_from = allowed_from or UNFINISHED_STATUSES
    if error_code:
        return run_status_set(run=run, status=RunStatus.FAILED, error=error, error_code=error_code,
                              allowed_from=allowed_from)
    return run_status_set(run=run, status=RunStatus.CANCELLED, error="cancelled", allowed_from=allowed_from)


def run_stop_reason(run_id: Any) -> str:
    """What an attempt the run's stop ended says: the run was cancelled, or why it was stopped."""
    error_code, error = WorkGraphRun.objects.filter(pk=run_id).values_list("error_code", "error").get()
    return _stop_reason(error_code=error_code, error=error)


def _stop_reason(*, error_code: str, error: str) -> str:
    return f"stopped: {error}" if error_code else "stopped: the run was cancelled"


def planning_run_create(*, task: Task, pipeline: bool = False, stage: str = "",
                        max_cost_usd: Decimal | None = None, **run_fields: Any) -> WorkGraphRun:
    """The one way a planning run is made, for the page, the API, ``manage.py plan`` and the planner
    alike: refused while another run of the task is under way — a plan nobody started is not work under
    way, and the new plan supersedes it — and given the project's budget unless ``max_cost_usd`` is its own.
    ``run_fields`` are the run's other fields (an experiment's start commit and revision pins)."""
    with transaction.atomic():
        task_claim_for_new_run(task_id=task.pk, supersede_unstarted=True)
        run = WorkGraphRun.objects.create(
            task=task, status=RunStatus.PLANNING, pipeline=pipeline, stage=stage,
            max_cost_usd=max_cost_usd if max_cost_usd is not None else task.project.max_run_cost_usd, **run_fields,
        )
        task_status_refresh(task_id=task.pk)
    return run


def task_claim_for_new_run(*, task_id: Any, supersede_unstarted: bool = False) -> None:
    """Lock the task for a new run, refusing (``TaskBusyError``) while another of its runs is under way.

    With ``supersede_unstarted`` (a new plan), a run that is only planned — ``ready``, never started — is
    no refusal: it ends ``cancelled``, its reason saying it was superseded (``SUPERSEDED``).

    Call inside the transaction that creates the run: concurrent requests queue on the task row, and
    each sees what the one before it committed, so a task never gets two runs under way at once.
    """
    Task.objects.select_for_update(no_key=True).filter(pk=task_id).values_list("pk", flat=True).first()
    under_way = runs_latest_first(WorkGraphRun.objects.filter(task_id=task_id).exclude(
        status__in=list(WorkGraphRun.FINISHED_STATUSES))).first()
    if under_way is None:
        return
    if supersede_unstarted and under_way.is_unstarted() and run_status_set(
            run=under_way, status=RunStatus.CANCELLED, error=SUPERSEDED, allowed_from=[RunStatus.READY]):
        return
    raise TaskBusyError(task_id=task_id, run_id=under_way.pk, status=under_way.status)


def task_status_of(run: WorkGraphRun | None, *, incomplete: bool = False) -> str:
    """The status of a task whose latest run is ``run`` (None: it has none yet)."""
    if run is None:
        return Task.Status.DRAFT
    if run.status == RunStatus.FAILED and incomplete:
        return Task.Status.INCOMPLETE
    return _TASK_STATUS_OF_RUN[run.status]


def task_status_refresh(*, task_id: Any) -> str:
    """Store the status and outcome the task's latest run gives it; return the status.

    The task row is locked first, so two runs of one task changing at once refresh it one after the
    other, each from what the other committed. The outcome (the final verdict, the error, what is
    incomplete) is kept while the latest run is finished and cleared while it is not.
    """
    with transaction.atomic():
        Task.objects.select_for_update(no_key=True).filter(pk=task_id).values_list("pk", flat=True).first()
        run = task_latest_run(task_id)
        outcome: dict[str, Any] = {}
        incompleteness = None
        if run is not None and run.is_finished():
            incompleteness = run_incompleteness(run=run) if run.status == RunStatus.FAILED else None
            outcome = {"run_id": str(run.run_id), "run_status": run.status, **_final_verdict(run),
                       "error": run.error}
            if incompleteness is not None:
                outcome.update(incompleteness, error=incompleteness["summary"])
        status = task_status_of(run, incomplete=incompleteness is not None)
        Task.objects.filter(pk=task_id).update(status=status, outcome=outcome)
    return status


_JUDGED = (WorkNodeExecution.Status.SUCCEEDED, WorkNodeExecution.Status.FAILED)


def _final_verdict(run: WorkGraphRun) -> dict[str, Any]:
    """The outcome's verdict fields from the run's last judged final verdict: ``verdict`` (PASS, FAIL,
    INCONCLUSIVE or None without one), its line, and for anything but PASS the ``root_cause``."""
    nodes = (run.graph_manifest or {}).get("nodes", [])
    verdict_ids = [node["node_id"] for node in nodes if node.get("node_type") == "final_verdict"]
    row = None
    if verdict_ids:
        row = (
            run.executions.filter(status__in=_JUDGED, node_id__in=verdict_ids)
            .order_by("-finished_at")
            .only("output_payload")
            .first()
        )
    verdict = final_verdict_read((row.output_payload or {}).get("text", "")) if row else None
    if verdict is None:
        return {"verdict": None}
    fields: dict[str, Any] = {"verdict": verdict.verdict, "verdict_line": verdict.line}
    if verdict.verdict != "PASS":
        fields["root_cause"] = {"category": verdict.root_cause, "detail": verdict.root_cause_detail}
    return fields

