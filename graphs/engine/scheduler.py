"""Starting and advancing a run: which attempts become queued or blocked, and who runs them.

An attempt's row goes ``pending`` (waiting for its dependencies) → ``queued`` (dependencies met,
``ready_at``, handed to an executor) → ``running`` (claimed by one worker with a conditional update,
heart-beating) → ``succeeded`` / ``partial`` / ``failed`` / ``blocked`` / ``cancelled``. A dependant
that the worker which readied it runs next goes from ``pending`` to ``running`` at once (``queue``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from graphs.domain import manifest_graph
from graphs.engine.claims import Continuation
from graphs.engine.fan_in import (
    dependencies_verdict,
    fan_in_leaf_settled,
    feeds_only_fan_ins,
    rows_to_read,
)
from graphs.engine.finish import stage_end_check
from graphs.engine.jobs import node_execute_submit, run_dispatch_submit
from graphs.engine.record import Recorder
from graphs.engine.state import (
    RUNNABLE_FIELDS,
    Cause,
    GraphShape,
    RunStatus,
    Status,
    any_active_left,
    graph_shape,
    latest_rows,
    progress_count,
    progress_due,
    run_locked,
    skill_pks,
    start_delay,
    subagent_by_node,
    upstream_bad,
    upstream_done,
)
from graphs.engine.statements import row_update
from graphs.errors import InvalidTransitionError
from graphs.logs.events import node_states_emit, run_event_emit
from graphs.logs.store import log_file_create
from graphs.models import WorkGraphRun, WorkNodeExecution
from graphs.runs.accounting import ACCOUNTING_DEFAULTS
from graphs.runs.admission import run_admissible_next, run_admission_open
from graphs.runs.facts import RunProgress, progress_from_statuses
from graphs.runs.status import run_status_set

# How many of the attempts one advance readies get a job at once: the others are claimed from the
# database by node jobs as they finish one, and those still waiting DISPATCH_EVERY_SECONDS later get
# jobs of their own, FAN_OUT_JOBS at a time (see run_dispatch_job). A broker message per node would
# cost a worker a round trip for every attempt another job already took.
FAN_OUT_JOBS = 16
DISPATCH_EVERY_SECONDS = 1.0


def run_start(*, run: WorkGraphRun, max_cost_usd: Decimal | None = None) -> None:
    """Start a ready run: a pending first attempt for every manifest node, then schedule what is ready.
    ``max_cost_usd`` replaces the budget the run was planned with (its project's).

    While the console runs its limit of runs (``graphs.runs.admission``) the run is ``queued`` instead,
    its budget stored: ``runs_admit`` starts it once a running run ends.

    Any other status is refused (``InvalidTransitionError``): a run still planning, awaiting approval,
    rejected, queued, running or ended cannot be started.
    """
    budget = {"max_cost_usd": max_cost_usd} if max_cost_usd is not None else {}
    with transaction.atomic():
        if not run_admission_open():
            with run_locked(run.run_id, with_manifest=False) as locked:
                _startable_check(locked, allowed=RunStatus.READY)
                run_status_set(run=locked, status=RunStatus.QUEUED, queued_at=timezone.now(), **budget)
            return
        _nodes_create(run_id=run.run_id, allowed=RunStatus.READY, **budget)
    run_advance(run_id=run.run_id)


def runs_admit() -> list[Any]:
    """Start queued runs, the first queued first, while fewer than the limit run; return their ids.

    Each is admitted in a transaction of its own under the admission lock: never more runs running
    than the limit, nor a run started twice. A run whose cancel came first is passed over.
    """
    admitted: list[Any] = []
    refused: set[Any] = set()
    while True:
        try:
            with transaction.atomic():
                run_id = run_admissible_next(skip=frozenset(refused))
                if run_id is None:
                    return admitted
                _nodes_create(run_id=run_id, allowed=RunStatus.QUEUED)
        except InvalidTransitionError:
            refused.add(run_id)
            continue
        admitted.append(run_id)
        run_advance(run_id=run_id)


def runs_admit_job(_: str = "") -> None:
    runs_admit()


def run_stage_start(*, run: WorkGraphRun) -> None:
    """Start the nodes a pipeline stage appended to its running run."""
    _nodes_start(run_id=run.run_id, allowed=RunStatus.RUNNING)


def run_append_start(*, run: WorkGraphRun) -> None:
    """Start the nodes of an append a reviewer approved: the run goes from awaiting approval to running."""
    _nodes_start(run_id=run.run_id, allowed=RunStatus.AWAITING_APPROVAL)


def _nodes_start(*, run_id: Any, allowed: str, **fields: Any) -> None:
    """Create a pending first attempt for every manifest node that has none, then schedule what is ready."""
    _nodes_create(run_id=run_id, allowed=allowed, **fields)
    run_advance(run_id=run_id)


def _startable_check(locked: WorkGraphRun, *, allowed: str) -> None:
    if locked.status != allowed or locked.cancel_requested_at is not None:
        current = "cancelling" if locked.cancel_requested_at is not None else locked.state_label()
        raise InvalidTransitionError(entity="run", current=current, requested=RunStatus.RUNNING)


def _nodes_create(*, run_id: Any, allowed: str, **fields: Any) -> None:
    """Create a pending first attempt for every manifest node that has none; the run goes running."""
    with run_locked(run_id) as locked:
        _startable_check(locked, allowed=allowed)
        known = set(locked.executions.values_list("node_id", flat=True).distinct())
        missing = [n for n in manifest_graph.manifest_node_ids(locked.graph_manifest) if n not in known]
        subagents = subagent_by_node(locked)
        # Looked up once for all the nodes: a 10,000-node run starts in one pass, with one query for skills.
        specs = {node.get("node_id"): node for node in locked.graph_manifest.get("nodes", [])}
        skills = skill_pks(specs[node_id] for node_id in missing)
        created = WorkNodeExecution.objects.bulk_create(
            [
                WorkNodeExecution(
                    run=locked,
                    node_id=node_id,
                    subagent_type=subagents.get(node_id, ""),
                    skill_ref_id=skills.get(specs[node_id].get("skill_ref")),
                    attempt=1,
                    cause=Cause.INITIAL,
                )
                for node_id in missing
            ]
        )
        node_states_emit(run_id=locked.pk, rows=created)
        run_status_set(run=locked, status=RunStatus.RUNNING, started_at=locked.started_at or timezone.now(),
                       finished_at=None, **fields)


def run_advance(*, run_id: Any) -> None:
    """Queue pending attempts whose dependencies succeeded, block those behind a failure, close stages."""
    with run_locked(run_id, with_manifest=False) as run:
        if run.status == RunStatus.RUNNING:
            _advance_all(run, graph_shape(run))


def _advance_all(run: WorkGraphRun, shape: GraphShape) -> None:
    """The full pass of ``run_advance`` over every attempt of the run (call under the run lock)."""
    manifest = shape.manifest
    latest = latest_rows(run)
    now = timezone.now()
    ready: list[dict] = []
    changed: list[dict] = []
    # Topological order matters: a node blocked here blocks its own pending dependants in the same pass.
    pending = sorted(
        (row for row in latest.values() if row["status"] == Status.PENDING),
        key=lambda row: shape.position.get(row["node_id"], 0),
    )
    for row in pending:
        dependencies = shape.dependencies.get(row["node_id"], [])
        upstream = [latest.get(dep) for dep in dependencies]
        bad = [dep for dep, up in zip(dependencies, upstream, strict=True)
               if up is not None and upstream_bad(manifest, dep, up["status"])]
        if bad:
            reason = f"blocked: upstream {', '.join(bad)} did not succeed"
            WorkNodeExecution.objects.filter(pk=row["pk"], status=Status.PENDING).update(
                status=Status.BLOCKED, error=reason, finished_at=now
            )
            row["status"] = Status.BLOCKED
            changed.append(row)
            continue
        if all(up is not None and upstream_done(manifest, dep, up["status"])
               for dep, up in zip(dependencies, upstream, strict=True)):
            ready.append(row)
    changed.extend(queue(run, ready, now=now))
    node_states_emit(run_id=run.pk, rows=changed)
    progress = progress_from_statuses((row["status"] for row in latest.values()), total=len(shape.position))
    _progress_emit(run, progress)
    if progress.active == 0:
        stage_end_check(run, shape, latest)


def _progress_emit(run: WorkGraphRun, progress: RunProgress) -> None:
    run_event_emit(run_id=run.pk, event="progress", **progress.as_dict())


def advance_after(
    *,
    run_id: Any,
    node_id: str,
    record: Recorder | None = None,
    close_log: Callable[[], None] | None = None,
    continuation: Continuation | None = None,
    shape_hint: GraphShape | None = None,
) -> None:
    """``run_advance`` once an attempt of ``node_id`` has ended, reading only what that can change.

    ``record``, when given, records the attempt's end first, under the same lock and in the same
    transaction: one commit (one wait for the database's disk) fewer per node — except for a leaf of
    a fan-in (as ``shape_hint``, the shape the attempt ran with, tells), which may settle without the
    lock (see ``fan_in_leaf_settled``). ``continuation`` is passed to ``queue``: a dependant made
    ready may be claimed for the caller to run. ``close_log`` closes the attempt's log in the same
    transaction — unless a dependant was claimed: the caller then closes it while running that one.

    Every advance leaves the run settled: no pending attempt it could queue or block is left. So a
    success can only ready ``node_id``'s own dependants, and the stage can only be over once no
    attempt is active, which a COUNT tells; reading every row of the run after every node would make
    a fan-out cost grow with the square of its width. Anything else — a failure, a retry or loop-back
    attempt, a dependant to block — takes the full pass, which also handles blocking in cascade.
    """
    if record is not None and shape_hint is not None and feeds_only_fan_ins(shape_hint, node_id):
        if fan_in_leaf_settled(run_id=run_id, node_id=node_id, record=_both(record, close_log), shape=shape_hint,
                               continuation=continuation):
            if progress_due(run_id):
                _progress_emit(WorkGraphRun(pk=run_id), progress_count(WorkGraphRun(pk=run_id), shape_hint))
            return
        record = close_log = None
    recount = False
    with run_locked(run_id, with_manifest=False) as run:
        if record is not None:
            record()
        if run.status == RunStatus.RUNNING and shape_hint is not None and shape_hint.version != run.manifest_version:
            # The attempt ran with an earlier manifest. Nodes an append added may wait on a leaf that
            # settled without looking, trusting its claimed sibling (see fan_in_leaf_settled) to look
            # after it: only the full pass finds them.
            _advance_all(run, graph_shape(run))
        elif run.status == RunStatus.RUNNING:
            recount = _advance_locked(run, node_id=node_id, continuation=continuation)
        if close_log is not None and (continuation is None or continuation.claimed is None):
            close_log()
    if recount:
        # After the commit: counting reads every node of the run, which the other workers finishing
        # nodes would otherwise wait on, queued behind the run lock.
        _progress_emit(run, progress_count(run, graph_shape(run)))


def _both(first: Recorder, then: Callable[[], None] | None) -> Recorder:
    def both() -> str | None:
        status = first()
        if then is not None:
            then()
        return status

    return both


def _advance_locked(run: WorkGraphRun, *, node_id: str, continuation: Continuation | None) -> bool:
    """The body of ``advance_after``, under the run lock, once the attempt's end is recorded. Return
    whether the run's progress is to be counted and sent once the lock is released.

    What it reads is the node's own dependants and their other dependencies, whatever the run's size:
    the whole run is read only at the stage's end, once no node's latest attempt is active.
    """
    shape = graph_shape(run)
    dependants = shape.dependants.get(node_id, [])
    known = latest_rows(run, node_ids=rows_to_read(shape, node_id, dependants), runnable=continuation is not None)
    finished = known.get(node_id)
    if finished is None or not upstream_done(shape.manifest, node_id, finished["status"]):
        _advance_all(run, shape)
        return False
    ready: list[dict] = []
    waiting = False
    for dependant in dependants:
        row = known.get(dependant)
        if row is None or row["status"] != Status.PENDING:
            continue
        verdict = dependencies_verdict(run, shape, dependant, known=known)
        if verdict == "blocked":
            _advance_all(run, shape)
            return False
        if verdict == "ready":
            ready.append(row)
        waiting = waiting or verdict == "waiting"
    node_states_emit(run_id=run.pk, rows=queue(run, ready, now=timezone.now(), continuation=continuation))
    # An attempt just queued, a dependant waiting on an active dependency, or any node's latest attempt
    # still active (an index lookup) means the stage goes on: counting the run's rows then only serves
    # the progress figure, refreshed at most twice a second, after the commit.
    if ready or waiting or any_active_left(run):
        return progress_due(run.pk)
    progress = progress_count(run, shape)
    _progress_emit(run, progress)
    if progress.active == 0:
        stage_end_check(run, shape, latest_rows(run))
    return False


def queue(run: WorkGraphRun, ready: list[dict], *, now, continuation: Continuation | None = None) -> list[dict]:
    """Mark pending attempts queued (dependencies met now) and hand them to the executor; return them.

    With ``continuation``, the first attempt that may start at once is not handed out but claimed for
    the continuing worker, its log opened, in the caller's transaction (under the run lock): the
    worker then needs neither a broker round trip nor a claim of its own to run it.
    """
    if not ready:
        return []
    kept = None
    if continuation is not None and continuation.claimed is None:
        kept = next((row for row in ready if start_delay(row, now) <= 0), None)
        if kept is not None and _claim_for(continuation, run=run, row=kept, now=now):
            kept["status"] = Status.RUNNING
        else:
            kept = None
    queued = [row for row in ready if row is not kept]
    if queued:
        WorkNodeExecution.objects.filter(pk__in=[row["pk"] for row in queued], status=Status.PENDING).update(
            status=Status.QUEUED, ready_at=now
        )
    handed_out = 0
    for row in queued:
        row["status"] = Status.QUEUED
        delay = start_delay(row, now)
        if delay > 0:
            node_execute_submit(node_exec_id=row["pk"], delay=delay)
        elif handed_out < FAN_OUT_JOBS:
            node_execute_submit(node_exec_id=row["pk"])
            handed_out += 1
        elif handed_out == FAN_OUT_JOBS:  # the first one left without a job: the rest wait for run_dispatch
            run_dispatch_submit(run_id=run.pk, delay=DISPATCH_EVERY_SECONDS)
            handed_out += 1
    return ready


def _claim_for(continuation: Continuation, *, run: WorkGraphRun, row: dict, now) -> bool:
    """Claim a pending attempt for the continuing worker (call under the run lock); return whether it was.

    The attempt is built from ``row`` as the advance read it (a runnable row, see ``latest_rows``)
    and what the claim wrote, instead of being read again: a round trip per chain node fewer.
    """
    claimed_fields = {"status": Status.RUNNING, "ready_at": now, "started_at": now, "heartbeat_at": now,
                      "worker": continuation.worker}
    if row_update(WorkNodeExecution, pk=row["pk"], where={"status": Status.PENDING}, values=claimed_fields) != 1:
        return False
    known = {"node_exec_id": row["pk"], "run_id": run.pk, **{name: row[name] for name in RUNNABLE_FIELDS},
             **claimed_fields, **ACCOUNTING_DEFAULTS}
    # Fields left out (its output and judgment, empty until it ends…) are deferred: read only if asked for.
    names = [field.attname for field in WorkNodeExecution._meta.concrete_fields if field.attname in known]
    execution = WorkNodeExecution.from_db(connection.alias, names, [known[name] for name in names])
    execution.run = run
    execution._log_file_cache = log_file_create(node_exec_id=row["pk"], project_id=continuation.project_id)
    continuation.claimed = execution
    return True


def run_dispatch_job(run_id: str) -> None:
    """Give jobs to queued attempts of the run still unclaimed ``DISPATCH_EVERY_SECONDS`` after they were
    queued, ``FAN_OUT_JOBS`` of them at a time, until none is left without one.

    Slow nodes leave attempts waiting while the first jobs run; these get their jobs here, so they
    still spread over every free worker. The mark (``resubmitted_at``) keeps an attempt from getting a
    second one from here; the reaper's lost-job pass stays the safety net.
    """
    now = timezone.now()
    waiting = (
        WorkNodeExecution.objects.filter(
            run_id=run_id, status=Status.QUEUED, resubmitted_at__isnull=True,
            ready_at__lte=now - timedelta(seconds=DISPATCH_EVERY_SECONDS),
        )
        .filter(Q(not_before__isnull=True) | Q(not_before__lte=now))
        .order_by("ready_at", "created_at")
    )
    chosen = list(waiting.values_list("pk", flat=True)[:FAN_OUT_JOBS])
    with transaction.atomic():
        WorkNodeExecution.objects.filter(pk__in=chosen, status=Status.QUEUED).update(
            resubmitted_at=now, resubmits=F("resubmits") + 1
        )
        for pk in chosen:
            node_execute_submit(node_exec_id=pk)
        # Attempts queued too recently to be handed out yet, or past this pass's share: look again.
        if WorkNodeExecution.objects.filter(run_id=run_id, status=Status.QUEUED, resubmitted_at__isnull=True).exists():
            run_dispatch_submit(run_id=run_id, delay=DISPATCH_EVERY_SECONDS)
