"""The live consumers' reads: where an attempt's log stands, what changed in a run since last looked, and
whether any run of a person's projects moved since last looked."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Max, OuterRef, Q, Subquery

from graphs.models import PLANNING_NODE_ID, ExecutionLogFile, ExecutionLogLine, WorkGraphRun, WorkNodeExecution
from graphs.runs.facts import latest_by_node, manifest_node_count, progress_from_statuses
from graphs.runs.status import UNFINISHED_STATUSES


@dataclass(frozen=True)
class LogState:
    """Where one attempt's log stands, as a watcher of it needs to know."""

    log_file: ExecutionLogFile | None
    complete: bool  # the log was closed, or the execution ended without ever opening one
    last_seq: int  # the seq of its last line once closed, else 0
    stored_seq: int  # the highest seq stored so far


def log_state_read(*, node_exec_id: Any) -> LogState | None:
    """Where the execution's log stands, or None when the execution does not exist."""
    return log_states_read(node_exec_ids=[node_exec_id]).get(str(node_exec_id))


def log_states_read(*, node_exec_ids: list[Any]) -> dict[str, LogState]:
    """Where each execution's log stands, keyed by the execution's id as text, in one query.

    Executions that no longer exist are left out. The highest stored seq is read per log from the
    (log, seq) index, newest first: a long log costs what a short one does.
    """
    newest = ExecutionLogLine.objects.filter(log_file=OuterRef("log_file__log_file_id")).order_by("-seq")
    rows = (
        WorkNodeExecution.objects.filter(pk__in=node_exec_ids)
        .annotate(stored_seq=Subquery(newest.values("seq")[:1]))
        .values("pk", "status", "log_file__log_file_id", "log_file__status", "log_file__last_seq", "stored_seq")
    )
    states: dict[str, LogState] = {}
    for row in rows:
        if row["log_file__log_file_id"] is None:
            complete = row["status"] in WorkNodeExecution.FINISHED_STATUSES
            states[str(row["pk"])] = LogState(log_file=None, complete=complete, last_seq=0, stored_seq=0)
            continue
        closed = row["log_file__status"] == ExecutionLogFile.Status.CLOSED
        states[str(row["pk"])] = LogState(
            log_file=ExecutionLogFile(log_file_id=row["log_file__log_file_id"], status=row["log_file__status"]),
            complete=closed, last_seq=row["log_file__last_seq"] if closed else 0, stored_seq=row["stored_seq"] or 0,
        )
    return states


def run_fingerprint_read(*, run_id: Any) -> tuple:
    """What changes whenever the run or any attempt of it changes state (one query, no rows read out)."""
    return tuple(
        WorkGraphRun.objects.filter(pk=run_id)
        .annotate(
            attempts=Count("executions"), last_ready=Max("executions__ready_at"),
            last_started=Max("executions__started_at"), last_finished=Max("executions__finished_at"),
        )
        .values_list("status", "manifest_version", "attempts", "last_ready", "last_started", "last_finished")
        .first()
        or ()
    )


def runs_fingerprint_read(*, user: AbstractBaseUser) -> str:
    """A short token that changes whenever a run of ``user``'s projects starts, moves or ends, or an attempt of
    one under way is made, queued, started, ends or waits for a reviewer (one query, no rows read out).

    Only the runs under way are read — how many in each status, their newest start and cancel, their
    attempts' number, newest times and how many have ended or wait — so it costs what the runs in flight
    cost, not the history: a run that starts joins them and one that ends leaves them. What the list pages
    show of a run that ended does not change until it is resumed, and then it is under way again.
    """
    ended, waiting = WorkNodeExecution.FINISHED_STATUSES, WorkNodeExecution.WAITING_STATUSES
    row = WorkGraphRun.objects.filter(task__project__memberships__user=user, status__in=UNFINISHED_STATUSES).aggregate(
        runs=Count("pk", distinct=True),
        **{status: Count("pk", distinct=True, filter=Q(status=status)) for status in UNFINISHED_STATUSES},
        newest=Max("created_at"), started=Max("started_at"), stopping=Max("cancel_requested_at"),
        attempts=Count("executions"), attempt_made=Max("executions__created_at"),
        attempt_ready=Max("executions__ready_at"), attempt_started=Max("executions__started_at"),
        attempt_finished=Max("executions__finished_at"),
        attempts_ended=Count("executions", filter=Q(executions__status__in=ended)),
        attempts_waiting=Count("executions", filter=Q(executions__status__in=waiting)),
    )
    return hashlib.blake2b(repr(sorted(row.items())).encode(), digest_size=8).hexdigest()


def run_snapshot_read(*, run_id: Any) -> dict[str, Any] | None:
    """The run's status, manifest version, progress and each node's latest attempt, planning calls
    included (two queries); None when the run does not exist."""
    run = WorkGraphRun.objects.filter(pk=run_id).values("status", "manifest_version", "graph_manifest").first()
    if run is None:
        return None
    rows = WorkNodeExecution.objects.filter(run_id=run_id).values(
        "node_exec_id", "node_id", "attempt", "status", "cause", "created_at"
    )
    latest = sorted(latest_by_node(rows).values(), key=lambda row: (row["created_at"], row["node_id"]))
    nodes = [
        {"node_exec_id": str(row["node_exec_id"]), "node_id": row["node_id"], "attempt": row["attempt"],
         "status": row["status"], "cause": row["cause"]}
        for row in latest
    ]
    progress = progress_from_statuses(
        (node["status"] for node in nodes if not node["node_id"].startswith(PLANNING_NODE_ID)),
        total=manifest_node_count(run["graph_manifest"]),
    )
    return {
        "run_id": str(run_id),
        "status": run["status"],
        "manifest_version": run["manifest_version"],
        "progress": progress.as_dict(),
        "nodes": nodes,
    }
