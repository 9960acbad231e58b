"""Claiming an attempt of a run for a worker that is about to be free, without a broker message.

A worker that has just finished a node of a wide fan-out holds warm connections and the run's shape;
taking the next queued sibling itself costs a few statements, where a job per node would cost a round
trip through the broker and a claim of its own. It does so only while no other job waits for a worker:
a run going on in one worker would otherwise keep the nodes of every other run waiting behind it.

A chain's node claims its one dependant the same way, and without the run lock: the locked advance
would read the run, then the dependant's row, then claim it, under a lock no other worker wants; here
one conditional UPDATE reads what decides the claim and makes it (``chain_next_claimed``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from graphs.engine.record import Recorder
from graphs.engine.state import (
    RUN_FIELDS,
    RUNNABLE_FIELDS,
    GraphShape,
    Status,
    progress_count,
    progress_due,
    upstream_done,
)
from graphs.engine.statements import attempt_latest_claim, attempt_next_queued_lock, row_update
from graphs.executors import jobs_wait, jobs_wait_ask
from graphs.logs.events import node_states_emit, run_event_emit
from graphs.logs.store import log_file_create, log_file_inserted
from graphs.models import WorkNodeExecution
from graphs.runs.accounting import ACCOUNTING_FIELDS

# Where SKIP LOCKED is not available (SQLite), a claim another worker won is tried again this many times.
_CLAIM_TRIES = 3
# What running a claimed attempt reads of its row and its run's. The rest of the attempt (its output,
# judgment, error…) is empty until it ends, and the manifest comes from the run's shape: building and
# decoding only these keeps the claim cheap for every leaf of a fan-out.
CLAIMED_FIELDS = (
    *RUNNABLE_FIELDS, *ACCOUNTING_FIELDS, "status", "ready_at", "started_at", "heartbeat_at", "finished_at", "worker",
)


@dataclass
class Continuation:
    """The worker an attempt of the run may be claimed for while it records or advances the last one,
    if ``free()`` says so (see ``continuation_ask``)."""

    worker: str
    project_id: Any
    free: Callable[[], bool]
    claimed: WorkNodeExecution | None = None


def continuing(until: float | None) -> bool:
    """Whether a worker may take its own run's next attempt itself: before ``until`` (a
    ``time.monotonic()`` value; None: never), and while no job waits for a worker. When one does, the
    attempt goes through the executor behind it, first come first served."""
    return until is not None and time.monotonic() < until and not jobs_wait()


def continuation_ask(until: float | None, *, worker: str, project_id: Any) -> Continuation | None:
    """``continuing``, asked now: None past ``until``; else a continuation whose ``free()`` reads whether
    no job waited when it was asked — the broker answering while the worker records its node (see
    ``executors.jobs_wait_ask``). ``free()`` must be called at least once; it reads the answer once."""
    if until is None or time.monotonic() >= until:
        return None
    waits = jobs_wait_ask()
    answer: list[bool] = []

    def free() -> bool:
        if not answer:
            answer.append(not waits())
        return answer[0]

    return Continuation(worker=worker, project_id=project_id, free=free)


def queued_attempt_claim(*, run_id: Any, worker: str, project_id: Any) -> WorkNodeExecution | None:
    """Claim for ``worker`` the run's longest-waiting queued attempt that may start now, open its log and
    return it, with its run as it is now (what running it reads: ``CLAIMED_FIELDS`` and
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
        execution = attempt_next_queued_lock(run_id=run_id, now=now, names=CLAIMED_FIELDS,
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


def chain_next(shape: GraphShape, node_id: str) -> str | None:
    """``node_id``'s one dependant when that waits on ``node_id`` alone, else None."""
    dependants = shape.dependants.get(node_id, [])
    if len(dependants) == 1 and shape.dependencies.get(dependants[0]) == [node_id]:
        return dependants[0]
    return None


def chain_next_claimed(
    execution: WorkNodeExecution, *, dependant: str, record: Recorder, close_log: Callable[[], None] | None,
    continuation: Continuation, shape: GraphShape,
) -> bool:
    """Record the attempt's end and, when it lets ``dependant`` run, claim that one's latest attempt for
    the continuing worker, in one transaction; return whether it was claimed. When it was not, the end
    is recorded and the log closed all the same: the caller advances under the lock, recording nothing.

    What the locked advance decides from the rows it reads, the claim's conditions decide at once: the
    dependant's latest attempt is pending and out of its backoff (its one dependency has just ended
    done, so it is ready); this attempt is still its node's latest (no loop-back has added another);
    the run is running, not asked to stop, at the manifest version the attempt ran with. A stop
    (a cancel, a spent budget) cancels the pending dependant under the run lock: before the claim, the
    claim finds it cancelled — or waits on that row and then does; after it, the dependant is running,
    as one the locked advance claimed just before the stop, and its worker stops it, as any running
    attempt. An append committed after the claim read the run is found by the dependant's own advance,
    the manifest it was handed then behind the run's (see ``scheduler.advance_after``). The stage
    cannot end here: the dependant it claims is active.
    """
    with transaction.atomic():
        status = record()
        claim = None
        # The broker's answer is read once the end is recorded: it came back meanwhile.
        if status is not None and upstream_done(shape.manifest, execution.node_id, status) and continuation.free():
            now = timezone.now()  # once this attempt has ended: the dependant starts after it
            values = {"status": Status.RUNNING, "ready_at": now, "started_at": now, "heartbeat_at": now,
                      "worker": continuation.worker}
            # The claim makes the dependant's log header too where it can, else it is made after it.
            claim = attempt_latest_claim(
                run_id=execution.run_id, node_id=dependant, after=(execution.node_id, execution.attempt),
                manifest_version=shape.version, now=now, values=values, names=CLAIMED_FIELDS,
                log_project_id=continuation.project_id)
        if claim is None:
            if close_log is not None:
                close_log()
            return False
        claimed = claim.execution
        # The run this attempt ran with: the claim found it as it was then, running and not asked to stop.
        claimed.run = execution.run
        if claim.log_created is None:
            claimed._log_file_cache = log_file_create(node_exec_id=claimed.pk, project_id=continuation.project_id)
        else:
            claimed._log_file_cache = log_file_inserted(node_exec_id=claimed.pk, project_id=continuation.project_id,
                                                        created=claim.log_created)
        node_states_emit(run_id=execution.run_id, rows=[claimed])
        continuation.claimed = claimed
    if progress_due(execution.run_id):
        # After the commit, as the locked advance does: counting reads every node of the run.
        run_event_emit(run_id=execution.run_id, event="progress",
                       **progress_count(execution.run, shape).as_dict())
    return True
