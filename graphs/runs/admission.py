"""Admission: how many runs run at once, and the queue of the runs started past that limit.

A run started while ``WORKGRAPH_MAX_ACTIVE_RUNS`` runs are ``running`` (or while others wait before
it) is ``queued`` instead, ``queued_at`` stamped, its budget kept on it. When a running run leaves
``running`` — it ends, or waits for a reviewer — the oldest queued run is admitted: its nodes are
created and scheduled as a start does (``graphs.engine.scheduler.runs_admit``, a job submitted when
that change commits; the reaper's pass admits too, so a lost job strands no run). A run's nodes
become ready only once it is admitted: the nodes of the runs under way never wait behind the ready
nodes of every run started.

Every admission, and every run leaving ``running``, counts under one lock (``admission_lock``): two
admissions never both take the last slot, and a run queued while another ends is seen by that end.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Q, QuerySet

from graphs.executors import job_submit
from graphs.models import WorkGraphRun

RunStatus = WorkGraphRun.Status
# The job that admits queued runs while slots are free (its handler: graphs.engine.scheduler.runs_admit_job).
RUNS_ADMIT_JOB = "runs_admit"
# The key of PostgreSQL's advisory lock on admissions ("WG_admit"); nothing else takes it.
_ADMISSION_LOCK_KEY = 0x57475F61646D6974


def max_active_runs() -> int:
    """How many runs may be ``running`` at once (``WORKGRAPH_MAX_ACTIVE_RUNS``); 0: no limit."""
    return settings.WORKGRAPH_MAX_ACTIVE_RUNS


def admission_lock() -> None:
    """Hold the console's admission lock until the current transaction ends (call inside one).

    On PostgreSQL a transaction-scoped advisory lock; on SQLite every write transaction already takes
    the database's write lock first (``BEGIN IMMEDIATE``), so admissions run one at a time anyway.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_ADMISSION_LOCK_KEY])


def queued_runs() -> QuerySet[WorkGraphRun]:
    """The runs waiting for admission, first queued first (read from the ``run_queued`` index)."""
    return WorkGraphRun.objects.filter(status=RunStatus.QUEUED).order_by("queued_at", "run_id")


def run_admission_open() -> bool:
    """Whether a run started now may run at once: no limit, or none queued before it and a slot free.
    Takes the admission lock: call in the transaction that starts or queues the run."""
    limit = max_active_runs()
    if not limit:
        return True
    admission_lock()
    return not queued_runs().exists() and _running_count() < limit


def run_admissible_next(*, skip: frozenset[Any] = frozenset()) -> Any | None:
    """The id of the queued run to admit now — the oldest whose cancel was not asked for, but none of
    ``skip`` — or None: no slot is free, or none waits. Takes the admission lock: call in the
    transaction that admits it."""
    limit = max_active_runs()
    admission_lock()
    if limit and _running_count() >= limit:
        return None
    waiting = queued_runs().filter(cancel_requested_at__isnull=True).exclude(pk__in=list(skip))
    return waiting.values_list("pk", flat=True).first()


def run_left_running() -> None:
    """A running run leaves ``running`` in this transaction: once it commits, the oldest queued run is
    admitted in its place (a job), if any waits. The admission lock makes a run queued meanwhile wait
    for this transaction, and be seen here."""
    if not max_active_runs():
        return
    admission_lock()
    if queued_runs().exists():
        runs_admit_submit()


def runs_admit_submit() -> None:
    """Admit queued runs while slots are free (a job, once the surrounding transaction commits)."""
    job_submit(RUNS_ADMIT_JOB, "")


def run_queue_position(run: WorkGraphRun) -> int | None:
    """Where a queued run waits: 1 for the next admitted. None for a run that is not queued."""
    if run.status != RunStatus.QUEUED or run.queued_at is None:
        return None
    before = Q(queued_at__lt=run.queued_at) | Q(queued_at=run.queued_at, run_id__lt=run.run_id)
    return queued_runs().filter(before).count() + 1


def _running_count() -> int:
    return WorkGraphRun.objects.filter(status=RunStatus.RUNNING).count()
