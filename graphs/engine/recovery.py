"""Stopping, forking and recovering runs: cancel, fork from a node, and the reaper of lost work."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import InterfaceError, OperationalError, transaction
from django.db.models import F, Max, Q
from django.utils import timezone

from graphs.audit import audit_record, audit_run_name
from graphs.domain import manifest_graph
from graphs.domain.failures import FailureFacts, failure_classify
from graphs.domain.storable import storable
from graphs.engine.external import external_waits_check
from graphs.engine.finish import run_finish
from graphs.engine.jobs import node_execute_submit, pipeline_plan_submit, plan_fresh_submit
from graphs.engine.on_fail import transient_retry_create
from graphs.engine.scheduler import run_advance, run_start, runs_admit
from graphs.engine.state import (
    Cause,
    RunStatus,
    Status,
    latest_rows,
    manifest_node,
    run_locked,
    skill_pk,
    subagent_by_node,
    upstream_done,
)
from graphs.errors import InvalidTransitionError, WorkGraphError
from graphs.logs.events import node_states_emit
from graphs.logs.store import log_append, log_file_close, logs_left_open_close
from graphs.metrics.counters import reaper_recovery_count
from graphs.models import PLANNING_NODE_ID, AuditEntry, WorkGraphRun, WorkNodeExecution
from graphs.notifications import APPROVAL_WAITING, notify
from graphs.runs.facts import usable_attempts
from graphs.runs.status import run_stop, run_stopped_finish, task_claim_for_new_run, task_status_refresh

logger = logging.getLogger(__name__)

# How many times the reaper's interval for one attempt's lost job doubles, at most.
_RESUBMIT_DOUBLINGS = 6


class EngineError(WorkGraphError):
    """A request the engine cannot carry out (unknown node, run in the wrong state…)."""


def run_cancel(*, run: WorkGraphRun, by: AbstractBaseUser | None = None) -> None:
    """Stop a run: waiting attempts are cancelled now, running agents (planning ones too) are stopped by
    their heartbeat, and the run ends ``cancelled`` once none is left running. The audit log records
    ``by`` cancelling it, unless a stop was asked for already."""
    with transaction.atomic():
        asked_before = WorkGraphRun.objects.select_for_update(no_key=True).filter(pk=run.pk).values_list(
            "cancel_requested_at", flat=True).first()
        if run_stop(run_id=run.run_id) is None:
            run.refresh_from_db(fields=["status", "review_decision"])
            raise InvalidTransitionError(entity="run", current=run.status, requested=RunStatus.CANCELLED)
        if asked_before is None:
            audit_record(actor=by, action=AuditEntry.Action.RUN_CANCELLED, object_type="run", object_id=run.pk,
                         project=run.task.project, summary=f"Cancelled {audit_run_name(run)}")


def run_fork(
    *, run: WorkGraphRun, node_id: str, manifest: dict[str, Any] | None = None,
    fork_edit: dict[str, Any] | None = None, awaiting_approval: bool = False, by: AbstractBaseUser | None = None,
    node_input: dict[str, Any] | None = None,
) -> WorkGraphRun:
    """Start a new run of the same manifest that reuses every output upstream of ``node_id``.

    Nodes that are neither ``node_id`` nor downstream of it keep their latest successful output,
    copied as a ``fork`` attempt; ``node_id`` and everything downstream run again. The fork is the
    task's latest run, so the task follows it.

    An edited fork (``graphs.engine.fork_edits``) passes its edited ``manifest`` and the ``fork_edit``
    it records; with ``awaiting_approval`` it waits for a reviewer instead of starting. The audit log
    records ``by`` forking it, in the transaction that makes the fork. ``node_input`` is the first input
    of ``node_id``'s attempt (a change review it amends, graphs.engine.change_review).
    """
    run.refresh_from_db()
    if not run.is_forkable():
        raise InvalidTransitionError(entity="run", current=run.state_label(), requested="forked")
    if manifest is None:
        manifest = run.graph_manifest
    if node_id not in manifest_graph.manifest_node_ids(manifest):
        raise EngineError(f"node {node_id!r} is not in run {run.run_id}")
    rerun = {node_id} | manifest_graph.downstream_of(manifest, node_id)
    latest = latest_rows(run)
    with transaction.atomic():
        task_claim_for_new_run(task_id=run.task_id)
        fork = WorkGraphRun.objects.create(
            task=run.task, graph_manifest=manifest, manifest_version=run.manifest_version, forked_from=run,
            fork_node_id=node_id, fork_edit=fork_edit or {}, pipeline=False, stage=run.stage,
            status=RunStatus.AWAITING_APPROVAL if awaiting_approval else RunStatus.READY, max_cost_usd=run.max_cost_usd,
        )
        now = timezone.now()
        copies = []
        for planning in run.executions.filter(node_id__startswith=PLANNING_NODE_ID, status=Status.SUCCEEDED):
            copies.append(_copied_row(planning, fork=fork, cause=Cause.PLANNING, now=now))
        for kept_node in latest:
            if kept_node in rerun:
                continue
            # A partial output that is not required for completion counts as done, as when scheduling.
            source = usable_attempts(run.executions.filter(node_id=kept_node)).first()
            if source is None or not upstream_done(manifest, kept_node, source.status):
                raise EngineError(
                    f"cannot fork from {node_id!r}: {kept_node!r} would be reused but has no successful output"
                    f" (fork from {kept_node!r} or a node upstream of it)"
                )
            copies.append(_copied_row(source, fork=fork, cause=Cause.FORK, now=now))
        WorkNodeExecution.objects.bulk_create(copies)
        subagents = subagent_by_node(run)
        WorkNodeExecution.objects.bulk_create(
            [
                WorkNodeExecution(run=fork, node_id=rerun_node, subagent_type=subagents.get(rerun_node, ""),
                                  skill_ref_id=skill_pk(manifest_node(manifest, rerun_node)), attempt=1,
                                  cause=Cause.FORK if rerun_node == node_id else Cause.INITIAL,
                                  input_payload=dict(node_input or {}) if rerun_node == node_id else {})
                for rerun_node in manifest_graph.topological_order(manifest) if rerun_node in rerun
            ]
        )
        _fork_audit(run=run, fork=fork, node_id=node_id, fork_edit=fork_edit, by=by)
        if awaiting_approval:
            task_status_refresh(task_id=run.task_id)
            # Created waiting, the fork never passes through run_status_set, which announces a plan's wait.
            notify(APPROVAL_WAITING, run=fork)
    if not awaiting_approval:
        run_start(run=fork)
    fork.refresh_from_db()
    return fork


def _fork_audit(*, run: WorkGraphRun, fork: WorkGraphRun, node_id: str, fork_edit: dict[str, Any] | None,
                by: AbstractBaseUser | None) -> None:
    edited = bool(fork_edit)
    # An edit records its field before and after; a plain fork changes nothing but where it starts.
    field = (fork_edit or {}).get("field")
    before = {field: fork_edit.get("before")} if field else None
    after = {field: fork_edit.get("after")} if field else None
    audit_record(
        actor=by, action=AuditEntry.Action.RUN_FORK_EDITED if edited else AuditEntry.Action.RUN_FORKED,
        object_type="run", object_id=fork.pk, project=run.task.project, before=before, after=after,
        summary=f"Forked {audit_run_name(run)} from {node_id}{' with its node edited' if edited else ''}"
                f" as run {str(fork.pk)[:8]}",
    )


def _copied_row(source: WorkNodeExecution, *, fork: WorkGraphRun, cause: str, now) -> WorkNodeExecution:
    return WorkNodeExecution(
        run=fork, node_id=source.node_id, subagent_type=source.subagent_type, skill_ref_id=source.skill_ref_id,
        attempt=1, cause=cause, status=source.status, error=source.error, input_payload=source.input_payload,
        output_payload={**source.output_payload, "reused_from": str(source.node_exec_id)},
        judgment_result=source.judgment_result, failure=source.failure, ready_at=now, started_at=now, finished_at=now,
    )


def run_fail_on_internal_error(*, run_id: Any, job: str, error: Exception) -> None:
    """A job of the run broke on something no retry mends (a bug, a value the database refuses): the
    run ends ``failed`` with the reason, and its waiting attempts are blocked, so it is neither left
    under way nor retried for ever. Attempts still running finish; the ended run takes nothing more."""
    reason = f"internal error in {job}: {error!r}"
    with run_locked(run_id) as run:
        if run.is_finished():
            return
        now = timezone.now()
        waiting = run.executions.filter(status__in=[Status.PENDING, Status.QUEUED])
        blocked = list(waiting.values("pk", "node_id", "attempt", "cause"))
        waiting.update(status=Status.BLOCKED, error=storable(f"blocked: {reason}"), finished_at=now)
        node_states_emit(run_id=run.pk, rows=[{**row, "status": Status.BLOCKED} for row in blocked])
        run_finish(run, status=RunStatus.FAILED, error=reason)


def reap_job(_: str = "") -> None:
    executions_reap()


def executions_reap(*, stale_after: timedelta | None = None) -> list[str]:
    """Fail attempts whose worker stopped heart-beating, queue a retry for each, and return their ids.

    A worker that died mid-node leaves its row ``running`` forever; the retry is a new attempt with
    cause ``transient_retry`` (a dead worker is an infrastructure failure, not the node's fault).
    Queued attempts whose job was lost are handed to the executor again; claiming is idempotent.
    Logs a killed worker left open on finished attempts are closed. Runs whose next step was lost
    are taken up again: advanced, started or planned (``_lost_run_steps_resume``), and queued runs
    admitted while slots are free (``runs_admit``: the job a run's end submits may have been lost). External
    nodes' attempts waiting for a report have no worker to lose: they are timed out past their deadline
    instead (``external_waits_check``).
    """
    if stale_after is None:
        stale_after = timedelta(seconds=settings.WORKGRAPH_REAP_AFTER_SECONDS)
    cutoff = timezone.now() - stale_after
    reaped: list[str] = []
    stale = WorkNodeExecution.objects.filter(
        status=Status.RUNNING, heartbeat_at__lt=cutoff, deadline_at__isnull=True
    ).select_related("run")
    for execution in stale:
        error = f"worker {execution.worker} stopped (no heartbeat since {execution.heartbeat_at:%H:%M:%S})"
        if not attempt_lost(execution, still_owned=Q(heartbeat_at__lt=cutoff), error=error):
            continue
        log_append(execution=execution, event="worker_lost", worker=execution.worker)
        log_file_close(execution=execution)
        reaped.append(str(execution.pk))
        reaper_recovery_count(kind="attempt_lost")
        _run_advance_or_fail(run_id=execution.run_id)
    external_waits_check()
    _lost_jobs_resubmit(stale_after=stale_after)
    logs_left_open_close(finished_before=cutoff)
    _lost_run_steps_resume(cutoff=cutoff)
    runs_admit()
    return reaped


def _lost_run_steps_resume(*, cutoff) -> None:
    """Take up again the runs whose next step was lost before ``cutoff`` — a worker killed, or a job
    that gave up on the database — so the reaper never leaves a run under way with nothing to move it.

    Each step is idempotent: an advance settles what is already settled, a start refuses a run that is
    not ready any more, and a duplicate plan job finds its run already being planned.
    """
    # A run with nothing queued or running, quiet since the cutoff: its last advance never happened
    # (dependants left pending, or a stage that never ended).
    quiet = (
        WorkGraphRun.objects.filter(status=RunStatus.RUNNING, created_at__lt=cutoff)
        .exclude(executions__status__in=[Status.QUEUED, Status.RUNNING])
        .annotate(last_finished=Max("executions__finished_at"))
        .filter(Q(last_finished__lt=cutoff) | Q(last_finished__isnull=True))
        .values_list("pk", flat=True)
    )
    for run_id in quiet:
        _run_advance_or_fail(run_id=run_id)
    # A pipeline's first plan stored, approved where asked, but never started.
    planned = (
        WorkGraphRun.objects.filter(status=RunStatus.READY, pipeline=True, created_at__lt=cutoff)
        .filter(executions__node_id=PLANNING_NODE_ID, executions__finished_at__lt=cutoff)
        .exclude(executions__cause__in=[Cause.INITIAL, Cause.FORK])
        .distinct()
    )
    for run in planned:
        try:
            run_start(run=run)
        except InvalidTransitionError:
            continue  # started (or cancelled) meanwhile
    # A run created for a plan whose job never made its planning call.
    unplanned = (
        WorkGraphRun.objects.filter(status=RunStatus.PLANNING, created_at__lt=cutoff, cancel_requested_at__isnull=True)
        .exclude(executions__node_id=PLANNING_NODE_ID)
        .values_list("pk", "pipeline", "stage")
    )
    for run_id, pipeline, stage in unplanned:
        if pipeline:
            pipeline_plan_submit(run_id=run_id)
        else:
            plan_fresh_submit(run_id=run_id, org_node=stage)


def _run_advance_or_fail(*, run_id: Any) -> None:
    """Advance a run for the reaper; a run whose advance breaks on a bug ends failed with the reason,
    instead of breaking every later pass of the reaper at the same place."""
    try:
        run_advance(run_id=run_id)
    except (OperationalError, InterfaceError):
        raise  # the database is away: the next pass tries again
    except Exception as error:
        logger.exception("advancing run %s for the reaper failed", run_id)
        run_fail_on_internal_error(run_id=run_id, job="the reaper's advance", error=error)


def _lost_jobs_resubmit(*, stale_after: timedelta) -> None:
    """Hand out again the jobs of attempts queued for longer than ``stale_after`` and still unclaimed.

    Their message may be lost (a broker restarted without its data) or merely waiting behind a long
    queue; a duplicate costs one no-op claim. The interval doubles with each resubmission of the same
    attempt (up to 64 times ``stale_after``), so a long backlog is not copied into the broker on every pass.
    """
    now = timezone.now()
    cutoff = now - stale_after
    candidates = (
        WorkNodeExecution.objects.filter(status=Status.QUEUED, ready_at__lt=cutoff)
        .filter(Q(not_before__isnull=True) | Q(not_before__lt=cutoff))
        .filter(Q(resubmitted_at__isnull=True) | Q(resubmitted_at__lt=cutoff))
        .values_list("pk", "resubmits", "resubmitted_at")
    )
    due = [
        pk for pk, resubmits, resubmitted_at in candidates
        if resubmitted_at is None or resubmitted_at < now - stale_after * 2 ** min(resubmits, _RESUBMIT_DOUBLINGS)
    ]
    reaper_recovery_count(kind="job_resubmitted", count=len(due))
    for start in range(0, len(due), 1000):
        chunk = due[start : start + 1000]
        with transaction.atomic():
            WorkNodeExecution.objects.filter(pk__in=chunk, status=Status.QUEUED).update(
                resubmitted_at=now, resubmits=F("resubmits") + 1
            )
            for pk in chunk:
                node_execute_submit(node_exec_id=pk)


def attempt_lost(execution: WorkNodeExecution, *, still_owned: Q, error: str) -> bool:
    """Fail a running attempt whose work was lost to the infrastructure and queue its retry.

    ``still_owned`` says when the row is still the lost attempt (not finished or reaped meanwhile);
    return whether it was. The retry has cause ``transient_retry`` and counts against the node's
    transient budget.
    """
    with run_locked(execution.run_id) as run:
        now = timezone.now()
        failure = failure_classify(FailureFacts(error=error)).as_dict()
        moved = WorkNodeExecution.objects.filter(still_owned, pk=execution.pk, status=Status.RUNNING).update(
            status=Status.FAILED, error=storable(error), finished_at=now, failure=failure
        )
        if moved != 1:
            return False
        execution.status, execution.error, execution.finished_at = Status.FAILED, error, now
        execution.failure = failure
        node_states_emit(run_id=run.pk, rows=[execution])
        if execution.is_planning:
            _planning_lost(run, error=error)
        elif run.status == RunStatus.RUNNING and run.cancel_requested_at is None:
            transient_retry_create(run, execution, backoff=False)
    return True


def _planning_lost(run: WorkGraphRun, *, error: str) -> None:
    """A planning call whose worker died: the run it was creating or extending ends with the reason
    (or ``cancelled``, when a cancel was waiting for that call to stop).

    Planning is not retried automatically (it may have cost a long agent call, and a person may want to
    read what it produced); the reason is recorded so a lead can plan again or fork.
    """
    if run.status not in (RunStatus.PLANNING, RunStatus.RUNNING):
        return
    if run.cancel_requested_at is not None:
        run_stopped_finish(run)
        return
    status = RunStatus.PLANNING_FAILED if run.status == RunStatus.PLANNING else RunStatus.FAILED
    run_finish(run, status=status, error=f"planning stopped: {error}")

