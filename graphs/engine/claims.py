"""Claiming a queued attempt of a run for a worker that is about to be free, without a broker message.

A worker that has just finished a node of a wide fan-out holds warm connections and the run's shape;
taking the next queued sibling itself costs a few statements, where a job per node would cost a round
trip through the broker and a claim of its own. It does so only while no other job waits for a worker:
a run going on in one worker would otherwise keep the nodes of every other run waiting behind it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from graphs.engine.state import RUN_FIELDS, RUNNABLE_FIELDS, Status
from graphs.engine.statements import attempt_next_queued_lock, row_update
from graphs.executors import jobs_wait
from graphs.logs.events import node_states_emit
from graphs.logs.store import log_file_create
from graphs.models import WorkNodeExecution
from graphs.runs.accounting import ACCOUNTING_FIELDS

# Where SKIP LOCKED is not available (SQLite), a claim another worker won is tried again this many times.
_CLAIM_TRIES = 3
# What running a claimed attempt reads of its row and its run's. The rest of the attempt (its output,
# judgment, error…) is empty until it ends, and the manifest comes from the run's shape: building and
# decoding only these keeps the claim cheap for every leaf of a fan-out.
_CLAIMED_FIELDS = (
    *RUNNABLE_FIELDS, *ACCOUNTING_FIELDS, "status", "ready_at", "started_at", "heartbeat_at", "finished_at", "worker",
)


@dataclass
class Continuation:
    """The worker an attempt of the run may be claimed for while it records or advances the last one."""

    worker: str
    project_id: Any
    claimed: WorkNodeExecution | None = None


def continuing(until: float | None) -> bool:
    """Whether a worker may take its own run's next attempt itself: before ``until`` (a
    ``time.monotonic()`` value; None: never), and while no job waits for a worker. When one does, the
    attempt goes through the executor behind it, first come first served."""
    return until is not None and time.monotonic() < until and not jobs_wait()


def queued_attempt_claim(*, run_id: Any, worker: str, project_id: Any) -> WorkNodeExecution | None:
    """Claim for ``worker`` the run's longest-waiting queued attempt that may start now, open its log and
    return it, with its run as it is now (what running it reads: ``_CLAIMED_FIELDS`` and
    ``RUN_FIELDS``); None when there is none. Call it inside a transaction: the row lock taken by the
    SELECT is what makes the claim the worker's.

    ``SKIP LOCKED`` lets every worker draining a fan-out take a different one without waiting on the
    others; the conditional UPDATE is what decides where it is not available (SQLite).
    """
    for _ in range(_CLAIM_TRIES):
        now = timezone.now()
        # Siblings readied together are taken in manifest order (the order their rows were created in),
        # as a fan-in's probes expect (see fan_in.dependencies_verdict); left to itself, PostgreSQL
        # returns tied rows in whatever order their updated versions lie on disk.
        execution = attempt_next_queued_lock(run_id=run_id, now=now, names=_CLAIMED_FIELDS,
                                             run_names=RUN_FIELDS)
        if execution is None:
            return None
        claimed = {"status": Status.RUNNING, "started_at": now, "heartbeat_at": now, "worker": worker}
        if row_update(WorkNodeExecution, pk=execution.pk, where={"status": Status.QUEUED}, values=claimed) != 1:
            continue
        for name, value in claimed.items():
            setattr(execution, name, value)
        node_states_emit(run_id=run_id, rows=[execution])
        execution._log_file_cache = log_file_create(node_exec_id=execution.pk, project_id=project_id)
        return execution
    return None
