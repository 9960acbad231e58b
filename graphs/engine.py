"""The orchestrator: runs a run's nodes in dependency order, judges them, retries and loops back.

State lives in the database. Each node attempt is its own ``WorkNodeExecution`` row:

- ``pending``  — created, waiting for its dependencies;
- ``queued``   — dependencies met (``ready_at``), handed to an executor;
- ``running``  — claimed by one worker with a conditional update, heart-beating (a dependant the
  worker that readied it runs next goes there from ``pending`` at once, see ``node_execute_job``);
- then ``succeeded`` / ``failed`` / ``blocked`` / ``cancelled``.

A node's current state is its highest attempt. Scheduling decisions (which rows become queued,
which are blocked, whether the stage is over, which rows a failure creates) are taken under a row
lock on the run, so any number of workers can finish nodes at once without two of them deciding the
same thing. Finishing a row is conditional on the worker still owning it: a worker that was presumed
dead and replaced cannot commit a second result.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import Count, F, Max, Q, QuerySet
from django.utils import timezone

from graphs import manifest as manifest_lib
from graphs.agents import AgentCall, AgentCancelled, AgentError, AgentRunner, get_runner
from graphs.catalogs import ORG_NODES
from graphs.checks import check_run, first_root_cause, first_verdict
from graphs.errors import InvalidTransitionError, WorkGraphError
from graphs.events import node_states_emit, run_event_emit
from graphs.evidence import node_evidence_gaps, node_required_for_completion, run_incompleteness
from graphs.heartbeat import execution_heartbeat
from graphs.jobs import job_handler, job_submit
from graphs.logs import (
    log_append,
    log_closes_wait,
    log_file_close,
    log_file_close_soon,
    log_file_create,
    log_file_open,
    logs_left_open_close,
)
from graphs.manifest import extract_json_payload
from graphs.models import (
    PLANNING_NODE_ID,
    Artifact,
    Skill,
    Task,
    WorkGraphRun,
    WorkNodeExecution,
    planning_node_id,
)
from graphs.prompts import TaskBrief, judge_prompt, node_prompt
from graphs.storable import storable
from graphs.transactions import transaction_unflushed

logger = logging.getLogger(__name__)

Status = WorkNodeExecution.Status
Cause = WorkNodeExecution.Cause
RunStatus = WorkGraphRun.Status

DEFAULT_MAX_ATTEMPTS = 3
# How many of a fan-in's dependencies are checked alone before all of them (see _dependencies_verdict).
_ACTIVE_PROBE = 8
_TERMINAL_BAD = frozenset({Status.FAILED, Status.BLOCKED, Status.CANCELLED})
_RESUBMIT_DOUBLINGS = 6
PROGRESS_EVERY_SECONDS = 0.5
# How long a node job may go on running the dependants it readied itself (see node_execute_job).
CONTINUE_FOR_SECONDS = 5.0
# How many of the attempts one advance readies get a job at once: the others are claimed from the
# database by node jobs as they finish one, and those still waiting DISPATCH_EVERY_SECONDS later get
# jobs of their own, FAN_OUT_JOBS at a time (see run_dispatch_job).
FAN_OUT_JOBS = 16
DISPATCH_EVERY_SECONDS = 1.0
_PROGRESS_RUNS_KEPT = 1024
# What an attempt's row must hold for it to run, besides its ids and what claiming it writes.
_RUNNABLE_FIELDS = ("node_id", "attempt", "cause", "cause_node_id", "not_before", "subagent_type", "skill_ref_id",
                    "input_payload")
_progress_reported: dict[Any, float] = {}
_progress_lock = threading.Lock()
DYNAMIC_ROOT_CAUSES = {"planning": "planner", "coder": "coder", "skill_defect": "coder"}


class EngineError(WorkGraphError):
    """A request the engine cannot carry out (unknown node, run in the wrong state…)."""


@dataclass(frozen=True)
class Judgment:
    ok: bool
    kind: str
    issues: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "kind": self.kind, "issues": self.issues, **self.detail}


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


# --- Starting, advancing, finishing a run ------------------------------------------------------------


def run_start(*, run: WorkGraphRun) -> None:
    """Create a pending first attempt for every manifest node that has none, then schedule what is ready."""
    with _run_locked(run.run_id) as locked:
        if locked.status in (RunStatus.PLANNING_FAILED, RunStatus.CANCELLED, RunStatus.AWAITING_APPROVAL):
            raise InvalidTransitionError(entity="run", current=locked.status, requested=RunStatus.RUNNING)
        known = set(locked.executions.values_list("node_id", flat=True).distinct())
        missing = [n for n in manifest_lib.manifest_node_ids(locked.graph_manifest) if n not in known]
        subagents = _subagent_by_node(locked)
        created = WorkNodeExecution.objects.bulk_create(
            [
                WorkNodeExecution(
                    run=locked,
                    node_id=node_id,
                    subagent_type=subagents.get(node_id, ""),
                    skill_ref_id=_skill_pk(_manifest_node(locked.graph_manifest, node_id)),
                    attempt=1,
                    cause=Cause.INITIAL,
                )
                for node_id in missing
            ]
        )
        now = timezone.now()
        WorkGraphRun.objects.filter(pk=locked.pk).update(
            status=RunStatus.RUNNING, started_at=locked.started_at or now, finished_at=None
        )
        node_states_emit(run_id=locked.pk, rows=created)
        run_event_emit(run_id=locked.pk, event="run_status", status=RunStatus.RUNNING)
    run_advance(run_id=run.run_id)


def run_advance(*, run_id: Any) -> None:
    """Queue pending attempts whose dependencies succeeded, block those behind a failure, close stages."""
    with _run_locked(run_id, with_manifest=False) as run:
        if run.status == RunStatus.RUNNING:
            _advance_all(run, _graph_shape(run))


def _advance_all(run: WorkGraphRun, shape: _GraphShape) -> None:
    """The full pass of ``run_advance`` over every attempt of the run (call under the run lock)."""
    manifest = shape.manifest
    latest = _latest_rows(run)
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
               if up is not None and _upstream_bad(manifest, dep, up["status"])]
        if bad:
            reason = f"blocked: upstream {', '.join(bad)} did not succeed"
            WorkNodeExecution.objects.filter(pk=row["pk"], status=Status.PENDING).update(
                status=Status.BLOCKED, error=reason, finished_at=now
            )
            row["status"] = Status.BLOCKED
            changed.append(row)
            continue
        if all(up is not None and _upstream_done(manifest, dep, up["status"])
               for dep, up in zip(dependencies, upstream, strict=True)):
            ready.append(row)
    changed.extend(_queue(run, ready, now=now))
    node_states_emit(run_id=run.pk, rows=changed)
    done = sum(1 for row in latest.values() if row["status"] not in WorkNodeExecution.ACTIVE_STATUSES)
    run_event_emit(run_id=run.pk, event="progress", done=done, total=len(latest))
    if done == len(latest):
        _stage_end_check(run, shape, latest)


def _advance_after(
    *,
    run_id: Any,
    node_id: str,
    record: Callable[[], None] | None = None,
    close_log: Callable[[], None] | None = None,
    continuation: _Continuation | None = None,
    shape_hint: _GraphShape | None = None,
) -> None:
    """``run_advance`` once an attempt of ``node_id`` has ended, reading only what that can change.

    ``record``, when given, records the attempt's end first, under the same lock and in the same
    transaction: one commit (one wait for the database's disk) fewer per node — except for a leaf of
    a fan-in (as ``shape_hint``, the shape the attempt ran with, tells), which may settle without the
    lock (see ``_fan_in_leaf_settled``). ``continuation`` is passed to ``_queue``: a dependant made
    ready may be claimed for the caller to run. ``close_log`` closes the attempt's log in the same
    transaction — unless a dependant was claimed: the caller then closes it while running that one.

    Every advance leaves the run settled: no pending attempt it could queue or block is left. So a
    success can only ready ``node_id``'s own dependants, and the stage can only be over once no
    attempt is active, which a COUNT tells. Reading every row of the run after every node made a
    fan-out cost grow with the square of its width. Anything else — a failure, a retry or loop-back
    attempt, a dependant to block — takes the full pass, which also handles blocking in cascade.
    """
    if record is not None and shape_hint is not None and _feeds_only_fan_ins(shape_hint, node_id):
        if _fan_in_leaf_settled(run_id=run_id, node_id=node_id, record=_both(record, close_log)):
            return
        record = close_log = None
    with _run_locked(run_id, with_manifest=False) as run:
        if record is not None:
            record()
        if run.status == RunStatus.RUNNING:
            _advance_locked(run, node_id=node_id, continuation=continuation)
        if close_log is not None and (continuation is None or continuation.claimed is None):
            close_log()


def _both(first: Callable[[], None], then: Callable[[], None] | None) -> Callable[[], None]:
    def both() -> None:
        first()
        if then is not None:
            then()

    return both


def _advance_locked(run: WorkGraphRun, *, node_id: str, continuation: _Continuation | None) -> None:
    """The body of ``_advance_after``, under the run lock, once the attempt's end is recorded."""
    shape = _graph_shape(run)
    dependants = shape.dependants.get(node_id, [])
    known = _latest_rows(
        run, node_ids=_rows_to_read(shape, node_id, dependants),
        runnable=continuation is not None,
    )
    finished = known.get(node_id)
    if finished is None or not _upstream_done(shape.manifest, node_id, finished["status"]):
        _advance_all(run, shape)
        return
    ready: list[dict] = []
    waiting = False
    for dependant in dependants:
        row = known.get(dependant)
        if row is None or row["status"] != Status.PENDING:
            continue
        verdict = _dependencies_verdict(run, shape, dependant, known=known)
        if verdict == "blocked":
            _advance_all(run, shape)
            return
        if verdict == "ready":
            ready.append(row)
        waiting = waiting or verdict == "waiting"
    node_states_emit(run_id=run.pk, rows=_queue(run, ready, now=timezone.now(), continuation=continuation))
    # An attempt just queued, or a dependant waiting on an active dependency, means the stage goes on.
    # Counting the run's rows then only serves the progress figure, which is refreshed at most once
    # per PROGRESS_EVERY_SECONDS: a count per node cost a fan-out a scan of the whole run per leaf.
    if (ready or waiting) and not _progress_due(run.pk):
        return
    total, active = _progress_counts(run)
    run_event_emit(run_id=run.pk, event="progress", done=total - active, total=total)
    if active == 0:
        _stage_end_check(run, shape, _latest_rows(run))


def _feeds_only_fan_ins(shape: _GraphShape, node_id: str) -> bool:
    """Whether every dependant of ``node_id`` also waits on other nodes (a leaf of a fan-out/fan-in)."""
    dependants = shape.dependants.get(node_id, [])
    return bool(dependants) and all(len(shape.dependencies.get(d, [])) > 1 for d in dependants)


def _fan_in_leaf_settled(*, run_id: Any, node_id: str, record: Callable[[], None]) -> bool:
    """Commit the result of a node whose dependants all wait on other nodes too, then look — without the
    run lock — whether every dependant still waits on an active dependency. Return True when so: no
    advance is needed, and the lock every leaf of a wide fan-in would otherwise queue on is not taken.

    Safe because every finisher commits before it looks: of two dependencies finishing at once, the one
    that commits last sees the other's result, so a dependant that becomes ready is always seen by
    someone, who takes the locked path (it is queued only while pending, so never twice). The manifest
    is read after the commit for the same reason: an append advances the run after committing its new
    nodes, so whichever of the two comes second sees the other. Anything but "waiting", or no pending
    dependant at all, answers False: the caller takes the locked path.
    """
    with transaction.atomic():
        record()
    run = WorkGraphRun.objects.defer("graph_manifest").get(pk=run_id)
    if run.status != RunStatus.RUNNING:
        return False
    shape = _graph_shape(run)
    dependants = shape.dependants.get(node_id, [])
    known = _latest_rows(run, node_ids=_rows_to_read(shape, node_id, dependants))
    finished = known.get(node_id)
    if finished is None or not _upstream_done(shape.manifest, node_id, finished["status"]):
        return False
    waiting = False
    for dependant in dependants:
        row = known.get(dependant)
        if row is None or row["status"] != Status.PENDING:
            continue
        if _dependencies_verdict(run, shape, dependant, known=known) != "waiting":
            return False
        waiting = True
    return waiting


def _rows_to_read(shape: _GraphShape, node_id: str, dependants: list[str]) -> list[str]:
    """The nodes whose latest rows an advance after ``node_id`` reads at once: the node, its dependants,
    and the last few other dependencies of each dependant (see ``_dependencies_verdict``)."""
    probes = [
        dep for dependant in dependants for dep in shape.dependencies.get(dependant, [])[-_ACTIVE_PROBE - 1 :]
        if dep != node_id
    ]
    return list(dict.fromkeys([node_id, *dependants, *probes]))


def _dependencies_verdict(run: WorkGraphRun, shape: _GraphShape, node_id: str, *, known: dict[str, dict]) -> str:
    """"ready", "blocked" or "waiting": what the full pass would decide for pending ``node_id`` now.

    ``known`` holds latest rows already read. A dependency still active is the usual answer in a wide
    fan-in: among the known rows (the caller reads the last few dependencies with its own), or by an
    EXISTS over a few of the others, it is found without reading every dependency's row.
    """
    dependencies = shape.dependencies.get(node_id, [])
    if any(dep in known and known[dep]["status"] in WorkNodeExecution.ACTIVE_STATUSES for dep in dependencies):
        return "waiting"
    unknown = [dep for dep in dependencies if dep not in known]
    # Dependencies are queued in manifest order, so the last ones are the likeliest to be still active:
    # asking about a few of them first usually settles a wide fan-in without a long IN list.
    probe = unknown[-_ACTIVE_PROBE:]
    if probe and (_any_active(run, probe) or (len(unknown) > len(probe) and _any_active(run, unknown))):
        return "waiting"
    latest = {**known, **_latest_rows(run, node_ids=unknown)} if unknown else known
    upstream = [(dep, latest.get(dep)) for dep in dependencies]
    if any(up is not None and _upstream_bad(shape.manifest, dep, up["status"]) for dep, up in upstream):
        return "blocked"
    if all(up is not None and _upstream_done(shape.manifest, dep, up["status"]) for dep, up in upstream):
        return "ready"
    return "waiting"


def _queue(
    run: WorkGraphRun, ready: list[dict], *, now, continuation: _Continuation | None = None
) -> list[dict]:
    """Mark pending attempts queued (dependencies met now) and hand them to the executor; return them.

    With ``continuation``, the first attempt that may start at once is not handed out but claimed for
    the continuing worker, its log opened, in the caller's transaction (under the run lock): the
    worker then needs neither a broker round trip nor a claim of its own to run it.
    """
    if not ready:
        return []
    kept = None
    if continuation is not None:
        kept = next((row for row in ready if _start_delay(row, now) <= 0), None)
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
        delay = _start_delay(row, now)
        if delay > 0:
            job_submit("node_execute", str(row["pk"]), delay=delay)
        elif handed_out < FAN_OUT_JOBS:
            job_submit("node_execute", str(row["pk"]))
            handed_out += 1
        elif handed_out == FAN_OUT_JOBS:  # the first one left without a job: the rest wait for run_dispatch
            job_submit("run_dispatch", str(run.pk), delay=DISPATCH_EVERY_SECONDS)
            handed_out += 1
    return ready


def _start_delay(row: dict, now) -> float:
    return (row["not_before"] - now).total_seconds() if row["not_before"] else 0.0


def _claim_for(continuation: _Continuation, *, run: WorkGraphRun, row: dict, now) -> bool:
    """Claim a pending attempt for the continuing worker (call under the run lock); return whether it was.

    The attempt is built from ``row`` as the advance read it (a runnable row, see ``_latest_rows``)
    and what the claim wrote, instead of being read again: a round trip per chain node fewer.
    """
    claimed_fields = {"status": Status.RUNNING, "ready_at": now, "started_at": now, "heartbeat_at": now,
                      "worker": continuation.worker}
    claimed = WorkNodeExecution.objects.filter(pk=row["pk"], status=Status.PENDING).update(**claimed_fields)
    if claimed != 1:
        return False
    known = {"node_exec_id": row["pk"], "run_id": run.pk, **{name: row[name] for name in _RUNNABLE_FIELDS},
             **claimed_fields}
    # Fields left out (its output and judgment, empty until it ends…) are deferred: read only if asked for.
    names = [field.attname for field in WorkNodeExecution._meta.concrete_fields if field.attname in known]
    execution = WorkNodeExecution.from_db(connection.alias, names, [known[name] for name in names])
    execution.run = run
    execution._log_file_cache = log_file_create(node_exec_id=row["pk"], project_id=continuation.project_id,
                                                run_id=run.pk)
    continuation.claimed = execution
    return True


def _stage_end_check(run: WorkGraphRun, shape: _GraphShape, latest: dict[str, dict]) -> None:
    """Finish the stage when no attempt is active any more and it really is over."""
    done = all(row["status"] not in WorkNodeExecution.ACTIVE_STATUSES for row in latest.values())
    if done and _stage_complete(run, latest, node_count=len(shape.position)):
        _stage_finished(run, latest)


@dataclass(frozen=True)
class _GraphShape:
    manifest: dict
    nodes: dict[str, dict]
    dependencies: dict[str, list[str]]
    dependants: dict[str, list[str]]
    position: dict[str, int]
    zero_token: frozenset[str]


_shapes: dict[tuple[str, int], _GraphShape] = {}
_shapes_lock = threading.Lock()
_SHAPES_KEPT = 256


def _graph_shape(run: WorkGraphRun) -> _GraphShape:
    """The run's manifest with its nodes by id, dependencies, topological positions and aggregation
    nodes, worked out once per manifest version.

    Every node's attempt and ``run_advance`` after it use these; re-reading and scanning a 500-node
    manifest each time made a fan-out cost grow with the square of its width. A manifest only changes
    by bumping its version. The manifest is shared by every caller in the process: read it, never change it.
    """
    key = (str(run.run_id), run.manifest_version)
    with _shapes_lock:
        shape = _shapes.get(key)
    if shape is not None:
        return shape
    # The version is read again with the manifest: without the run lock it may have moved on since
    # ``run`` was loaded, and a shape must be filed under the version it really belongs to.
    manifest, version = WorkGraphRun.objects.values_list("graph_manifest", "manifest_version").get(pk=run.pk)
    manifest = manifest or {}
    dependencies = manifest_lib.data_dependencies(manifest)
    dependants: dict[str, list[str]] = {}
    for dependant, deps in dependencies.items():
        for dep in deps:
            dependants.setdefault(dep, []).append(dependant)
    order = manifest_lib.topological_order(manifest)
    shape = _GraphShape(
        manifest=manifest,
        nodes={node.get("node_id"): node for node in reversed(manifest.get("nodes", []))},
        dependencies=dependencies,
        dependants=dependants,
        position={node_id: index for index, node_id in enumerate(order)},
        zero_token=_zero_token_nodes(manifest),
    )
    with _shapes_lock:
        if len(_shapes) >= _SHAPES_KEPT:
            _shapes.pop(next(iter(_shapes)))
        _shapes[(str(run.run_id), version)] = shape
    return shape


def _stage_complete(run: WorkGraphRun, latest: dict[str, dict], *, node_count: int) -> bool:
    """Whether the current stage is really over, not between a stage's planning call and its first rows.

    An appending stage is over only once its planning call succeeded and every manifest node has an
    attempt (``run_start`` creates them in the same locked transaction that marks the run running).
    """
    if len(latest) < node_count:
        return False
    if not run.pipeline or run.stage == ORG_NODES[0]:
        return True
    return run.executions.filter(node_id=planning_node_id(run.stage), status=Status.SUCCEEDED).exists()


def _stage_finished(run: WorkGraphRun, latest: dict[str, dict]) -> None:
    """Every node of the run has ended: continue the pipeline, or finish the run and its task."""
    now = timezone.now()
    # _upstream_bad also counts a required node that ended partial (its evidence is missing).
    failed = sorted(
        node_id for node_id, row in latest.items() if _upstream_bad(run.graph_manifest, node_id, row["status"])
    )
    if run.cancel_requested_at is not None:
        _run_finish(run, status=RunStatus.CANCELLED, error="cancelled", now=now)
        return
    if failed:
        _run_finish(run, status=RunStatus.FAILED, error=f"nodes that did not succeed: {', '.join(failed)}", now=now)
        return
    next_stage = pipeline_next_stage(run)
    if next_stage is not None:
        # The argument names the stage being left, so a duplicate of this job cannot skip a stage.
        job_submit("pipeline_step", f"{run.run_id}:{run.stage}")
        return
    _run_finish(run, status=RunStatus.SUCCEEDED, error="", now=now)


def pipeline_next_stage(run: WorkGraphRun) -> str | None:
    """Return the org node that plans next in a pipeline run, or None when the pipeline is done."""
    if not run.pipeline or run.stage not in ORG_NODES:
        return None
    index = ORG_NODES.index(run.stage)
    return ORG_NODES[index + 1] if index + 1 < len(ORG_NODES) else None


def _run_finish(run: WorkGraphRun, *, status: str, error: str, now) -> None:
    WorkGraphRun.objects.filter(pk=run.pk).update(status=status, error=error, finished_at=now)
    run.status = status
    run_event_emit(run_id=run.pk, event="run_status", status=status, error=error)
    if run.pipeline or status != RunStatus.SUCCEEDED:
        task_outcome_record(run=run, error=error)


def task_outcome_record(*, run: WorkGraphRun, error: str = "") -> None:
    """Set the task's status and outcome from how its run ended (the final verdict decides a pipeline)."""
    verdict_row = (
        run.executions.filter(status=Status.SUCCEEDED, node_id__in=_final_verdict_ids(run.graph_manifest))
        .order_by("-finished_at")
        .first()
    )
    verdict = first_verdict(verdict_row.output_payload.get("text", "")) if verdict_row else None
    # A run stopped only by required nodes lacking evidence leaves its task incomplete, not failed.
    incompleteness = run_incompleteness(run=run) if run.status == RunStatus.FAILED else None
    if run.status == RunStatus.CANCELLED:
        status = Task.Status.CANCELLED
    elif run.status == RunStatus.SUCCEEDED:
        status = Task.Status.SUCCEEDED
    elif incompleteness is not None:
        status = Task.Status.INCOMPLETE
    else:
        status = Task.Status.FAILED
    outcome = {"run_id": str(run.run_id), "run_status": run.status, "verdict": verdict, "error": error}
    if incompleteness is not None:
        outcome.update(incompleteness, error=incompleteness["summary"])
    Task.objects.filter(pk=run.task_id).update(status=status, outcome=outcome)


def _final_verdict_ids(manifest: dict) -> list[str]:
    return [n["node_id"] for n in manifest.get("nodes", []) if n.get("node_type") == "final_verdict"]


# --- Running one node attempt ---------------------------------------------------------------------------


@job_handler("node_execute")
def node_execute_job(node_exec_id: str) -> None:
    """Run the attempt, then — while the job is young — a dependant it made ready, in this same worker.

    Handing a chain's next node through the broker cost more than the engine's own work on a quick
    node, while the worker that readied it is free and holds warm connections. The dependant is
    claimed for this worker in the very transaction that readies it, and starts with its upstream
    output in hand. Past ``CONTINUE_FOR_SECONDS`` every dependant goes through the executor, so one
    job does not hold a worker for long while other runs wait. A worker that dies in between leaves
    a running attempt with no heartbeat, which the reaper fails and retries, as for any dead worker.
    """
    continue_until = time.monotonic() + CONTINUE_FOR_SECONDS
    execution = _attempt_claim(node_exec_id)
    upstream_known: dict[str, str] = {}
    while execution is not None:
        task = execution.run.task
        following, upstream_known = _attempt_run(
            execution, runner=get_runner(), continue_until=continue_until, upstream_known=upstream_known
        )
        if following is None and time.monotonic() < continue_until:
            following = _attempt_claim_next(execution.run_id, task=task)
        execution = following
    # No log this job handed to the closer thread is left behind when the job ends (and with it,
    # maybe, the process: a recycled or stopped worker).
    log_closes_wait()


@job_handler("run_dispatch")
def run_dispatch_job(run_id: str) -> None:
    """Give jobs to queued attempts of the run still unclaimed ``DISPATCH_EVERY_SECONDS`` after they were
    queued, ``FAN_OUT_JOBS`` of them at a time, until none is left without one.

    A wide fan-out hands out only ``FAN_OUT_JOBS`` jobs at once: on quick nodes, those jobs claim the
    rest from the database faster than the broker could deliver them a message each (a message whose
    attempt another job took costs a worker a round trip for nothing). Slow nodes leave attempts
    waiting, and these get their jobs here, so they still spread over every free worker. The mark
    (``resubmitted_at``) keeps an attempt from getting a second one from here; the reaper's lost-job
    pass stays the safety net.
    """
    now = timezone.now()
    waiting = (
        WorkNodeExecution.objects.filter(
            run_id=run_id, status=Status.QUEUED, resubmitted_at__isnull=True,
            ready_at__lte=now - timedelta(seconds=DISPATCH_EVERY_SECONDS),
        )
        .filter(Q(not_before__isnull=True) | Q(not_before__lte=now))
        .order_by("ready_at")
    )
    chosen = list(waiting.values_list("pk", flat=True)[:FAN_OUT_JOBS])
    with transaction.atomic():
        WorkNodeExecution.objects.filter(pk__in=chosen, status=Status.QUEUED).update(
            resubmitted_at=now, resubmits=F("resubmits") + 1
        )
        for pk in chosen:
            job_submit("node_execute", str(pk))
        # Attempts queued too recently to be handed out yet, or past this pass's share: look again.
        if WorkNodeExecution.objects.filter(run_id=run_id, status=Status.QUEUED, resubmitted_at__isnull=True).exists():
            job_submit("run_dispatch", run_id, delay=DISPATCH_EVERY_SECONDS)


def node_execution_run(*, node_exec_id: Any, runner: AgentRunner | None = None) -> None:
    """Claim a queued attempt, produce and judge its output, record the result and advance the run."""
    execution = _attempt_claim(node_exec_id)
    if execution is not None:
        _attempt_run(execution, runner=runner or get_runner())


def _attempt_claim(node_exec_id: Any, *, task: Task | None = None) -> WorkNodeExecution | None:
    """Take a queued attempt for this worker and open its log; None when it is not queued (any more).

    ``task``, the run's task with its project as this worker already holds them, spares reading them again.
    """
    now = timezone.now()
    # Claim, read and open the log in one transaction, which need not wait for the disk: a claim a
    # database crash loses leaves the attempt queued for the reaper (see graphs.transactions).
    with transaction_unflushed():
        claimed = WorkNodeExecution.objects.filter(pk=node_exec_id, status=Status.QUEUED).update(
            status=Status.RUNNING, started_at=now, heartbeat_at=now, worker=worker_name()
        )
        if claimed != 1:
            return None  # another worker has it, or it was cancelled/reaped: a redelivered job does nothing
        # The manifest comes from the run's shape, parsed once per version, instead of with every attempt:
        # decoding a 500-node manifest per node made a fan-out cost grow with the square of its width.
        related = "run" if task is not None else "run__task__project"
        execution = WorkNodeExecution.objects.select_related(related).defer("run__graph_manifest").get(pk=node_exec_id)
        if task is not None:
            execution.run.task = task
        node_states_emit(run_id=execution.run_id, rows=[execution])
        log_file_open(execution=execution)
    return execution


def _attempt_claim_next(run_id: Any, *, task: Task) -> WorkNodeExecution | None:
    """Claim for this worker a queued attempt of the run that may start now, if there is one.

    ``SKIP LOCKED`` lets every worker draining a fan-out take a different one without waiting on the
    others; where it is not available (SQLite), a claim lost to another worker is retried a few times.
    """
    for _ in range(3):
        now = timezone.now()
        with transaction_unflushed():
            pk = (
                WorkNodeExecution.objects.select_for_update(skip_locked=True)
                .filter(run_id=run_id, status=Status.QUEUED)
                .filter(Q(not_before__isnull=True) | Q(not_before__lte=now))
                .order_by("ready_at")
                .values_list("pk", flat=True)
                .first()
            )
            if pk is None:
                return None
            execution = _attempt_claim(pk, task=task)
        if execution is not None:
            return execution
    return None


@dataclass
class _Continuation:
    """The worker a dependant made ready may be claimed for, in the advance that readies it."""

    worker: str
    project_id: Any
    claimed: WorkNodeExecution | None = None


def _attempt_run(
    execution: WorkNodeExecution,
    *,
    runner: AgentRunner,
    continue_until: float | None = None,
    upstream_known: dict[str, str] | None = None,
) -> tuple[WorkNodeExecution | None, dict[str, str]]:
    """Run an attempt claimed by this worker: produce and judge its output, record it, advance the run.

    Until ``continue_until`` (a ``time.monotonic()`` value), one dependant made ready is claimed for
    this worker instead of handed to the executor; it is returned, with the upstream output this
    attempt leaves it (``upstream_known`` for its run), for the caller to run next.
    """
    me = worker_name()
    run = execution.run
    log_append(execution=execution, event="node_start", node_id=execution.node_id, attempt=execution.attempt,
               cause=execution.cause, worker=me)
    record: Callable[[], None] | None = None
    shape: _GraphShape | None = None
    try:
        shape = _graph_shape(run)
        run.graph_manifest = shape.manifest
        record = _node_execution_body(
            execution, shape=shape, runner=runner, worker=me, upstream_known=upstream_known or {}
        )
    except (OperationalError, InterfaceError) as error:
        _database_lost(execution, worker=me, error=error)
    except Exception as error:  # a bug must not leave the row running forever
        logger.exception("node %s attempt %s crashed", execution.node_id, execution.attempt)
        _finish(execution, worker=me, status=Status.FAILED, error=f"internal error: {error!r}")

    continuation = None
    if continue_until is not None and time.monotonic() < continue_until:
        continuation = _Continuation(worker=me, project_id=run.task.project_id)
    log_closed = False

    def close_log() -> None:
        nonlocal log_closed
        log_file_close(execution=execution)
        log_closed = True

    advanced = False
    try:
        # A success's log closes in the transaction that records it (one commit for both), unless the
        # advance claims a dependant for this worker: the log then closes on the closer thread (an
        # fsync and an UPDATE) while that dependant runs here.
        _advance_after(run_id=run.run_id, node_id=execution.node_id, record=record,
                       close_log=close_log if record is not None else None, continuation=continuation,
                       shape_hint=shape)
        advanced = True
    except (OperationalError, InterfaceError) as error:
        # Nothing of the failed transaction is kept: a result it was to record is lost with it.
        _database_lost(execution, worker=me, error=error)
        run_advance(run_id=run.run_id)
        continuation = None
    finally:
        if not (advanced and log_closed):
            if advanced and continuation is not None and continuation.claimed is not None:
                log_file_close_soon(execution=execution)  # beside the dependant this worker runs next
            else:
                # A failure's dependants were queued before its log is closed (an fsync and an UPDATE):
                # they start on another worker while this one finishes its bookkeeping.
                log_file_close(execution=execution)
    if continuation is None or continuation.claimed is None:
        return None, {}
    following = continuation.claimed
    # The run as the advance read it under its lock, with the task and project this attempt loaded.
    following.run.task = run.task
    return following, {execution.node_id: execution.output_payload.get("text", "")}


def _database_lost(execution: WorkNodeExecution, *, worker: str, error: Exception) -> None:
    """The database went away under an attempt (a restart, a failover, a killed backend), so what the
    agent produced could not be recorded. On a new connection the attempt is failed as an
    infrastructure loss and retried, exactly as if its worker had died."""
    logger.warning("node %s attempt %s lost its database connection: %s", execution.node_id, execution.attempt, error)
    connection.close()
    _attempt_lost(execution, still_owned=Q(worker=worker), error=f"database connection lost: {error}".strip())


def _node_execution_body(
    execution: WorkNodeExecution,
    *,
    shape: _GraphShape,
    runner: AgentRunner,
    worker: str,
    upstream_known: dict[str, str],
) -> Callable[[], None] | None:
    """Run the attempt and record how it ended — except a passed judgment, which is returned as the
    function that records it, for the caller to call in the same transaction as the run's advance.

    ``upstream_known`` holds outputs of upstream nodes already in hand (the latest successful ones).
    """
    run = execution.run
    node = shape.nodes.get(execution.node_id)
    if node is None:
        _finish(execution, worker=worker, status=Status.FAILED, error="the node is not in the run's manifest")
        return None
    if run.cancel_requested_at is not None:
        _finish(execution, worker=worker, status=Status.CANCELLED, error="the run was cancelled")
        return None
    upstream = _upstream_outputs(run, node, known=upstream_known)
    feedback = list(execution.input_payload.get("feedback", []))
    brief = TaskBrief.from_task(run.task)
    cancel_event = threading.Event()
    with execution_heartbeat(execution, worker=worker, cancel_event=cancel_event):
        try:
            if execution.node_id in shape.zero_token:
                prompt = ""
                text, usage = _aggregate(upstream), None
                log_append(execution=execution, event="aggregated", upstream=list(upstream))
            else:
                prompt = node_prompt(node=node, brief=brief, upstream_outputs=upstream, feedback=feedback)
                text, usage = _call(runner, execution, node=node, prompt=prompt, purpose="node",
                                    cancel_event=cancel_event)
            _save_input(execution, node=node, prompt=prompt, upstream=upstream, feedback=feedback)
            judgment = _judge(runner, execution, node=node, content=text, cancel_event=cancel_event)
        except AgentCancelled:
            _finish(execution, worker=worker, status=Status.CANCELLED, error="stopped: the run was cancelled")
            return None
        except AgentError as error:
            _agent_failed(execution, worker=worker, error=error)
            return None
    output = {"text": text, "usage": usage}
    if judgment.ok:
        return _passed_recorder(execution, worker=worker, node=node, output=output, judgment=judgment)
    _on_fail(execution, worker=worker, node=node, judgment=judgment, output=output)
    return None


def _passed_recorder(
    execution: WorkNodeExecution, *, worker: str, node: dict, output: dict, judgment: Judgment
) -> Callable[[], None]:
    """How an output that passed its judgment ends the attempt — succeeded and promoted, or partial when
    the evidence the node's spec requires is missing — as a function that records it.

    The outcome is worked out here, outside any transaction; the function only writes.
    """
    text = output["text"]
    gaps = node_evidence_gaps(node=node, output=text, execution=execution)
    if gaps:
        gated = Judgment(ok=judgment.ok, kind=judgment.kind, issues=judgment.issues,
                         detail={**judgment.detail, "evidence_gaps": gaps})

        def record_partial() -> None:
            _finish(execution, worker=worker, status=Status.PARTIAL, output=output, judgment=gated,
                    error="incomplete: " + "; ".join(gaps))

        return record_partial

    def record_succeeded() -> None:
        if _finish(execution, worker=worker, status=Status.SUCCEEDED, output=output, judgment=judgment):
            _promote_artifact(execution, node=node, content=text)

    return record_succeeded


def node_attempt_finish_external(
    *, execution: WorkNodeExecution, worker: str, text: str, ok: bool, issues: list[str], extra: dict | None = None
) -> None:
    """Record a result produced outside the workers (a collaboration callback) for an attempt it claimed.

    A success is recorded like an agent's judged output; a failure goes through the node's on_fail,
    with the reported gaps as the judge's issues, so loop-backs and retries work the same way.
    """
    node = _manifest_node(execution.run.graph_manifest, execution.node_id) or {}
    output = {"text": text, "usage": None, **(extra or {})}
    judgment = Judgment(ok=ok, kind="report", issues=issues)
    log_append(execution=execution, event="result_reported", ok=ok, issues=issues, worker=worker)
    if ok:
        _passed_recorder(execution, worker=worker, node=node, output=output, judgment=judgment)()
    else:
        _on_fail(execution, worker=worker, node=node, judgment=judgment, output=output)
    log_file_close(execution=execution)
    run_advance(run_id=execution.run_id)


def _call(
    runner: AgentRunner,
    execution: WorkNodeExecution,
    *,
    node: dict,
    prompt: str,
    purpose: str,
    cancel_event: threading.Event,
) -> tuple[str, dict | None]:
    call = AgentCall(
        org_node=execution.subagent_type or node.get("subagent_type") or "worker",
        prompt=prompt,
        cwd=Path(execution.run.task.project.target_folder),
        timeout=settings.WORKGRAPH_AGENT_TIMEOUT,
        purpose=purpose,
        node=node,
        attempt=execution.attempt,
        on_line=lambda text: log_append(execution=execution, event="agent_output", purpose=purpose, text=text),
        cancel_event=cancel_event,
    )
    log_append(execution=execution, event="agent_call", purpose=purpose, org_node=call.org_node)
    result = runner.run(call)
    return result.text, result.usage


def _judge(
    runner: AgentRunner, execution: WorkNodeExecution, *, node: dict, content: str, cancel_event: threading.Event
) -> Judgment:
    spec = node.get("judgment") or {}
    kind = spec.get("kind", "none")
    if kind == "mechanical":
        result = check_run(spec.get("check_ref", ""), content)
        judgment = Judgment(ok=result.ok, kind=kind, issues=result.issues, detail={"check_ref": spec.get("check_ref")})
    elif kind == "llm":
        prompt = judge_prompt(judge_prompt_template=spec.get("judge_prompt", "{content}"), content=content)
        answer, _ = _call(runner, execution, node=node, prompt=prompt, purpose="judge", cancel_event=cancel_event)
        verdict = extract_json_payload(answer, required_keys=("ok",))
        if verdict is None or not isinstance(verdict.get("ok"), bool):
            judgment = Judgment(ok=False, kind=kind, issues=["the judge's answer held no {ok, issues} JSON object"],
                                detail={"judge_answer": answer[:4000]})
        else:
            issues = [str(issue) for issue in verdict.get("issues") or [] if str(issue).strip()]
            judgment = Judgment(ok=verdict["ok"], kind=kind, issues=issues)
    else:
        judgment = Judgment(ok=True, kind="none")
    log_append(execution=execution, event="judgment", **judgment.as_dict())
    return judgment


def _agent_failed(execution: WorkNodeExecution, *, worker: str, error: AgentError) -> None:
    detail = str(error)
    if error.stderr:
        detail += f" | stderr: {error.stderr.strip()[:2000]}"
    log_append(execution=execution, event="agent_error", kind=error.kind, transient=error.transient, message=detail)
    with _run_locked(execution.run_id) as run:
        if not _finish(execution, worker=worker, status=Status.FAILED, error=f"agent error ({error.kind}): {detail}"):
            return
        if not error.transient:
            return
        used = run.executions.filter(node_id=execution.node_id, cause=Cause.TRANSIENT_RETRY).count()
        if used >= settings.WORKGRAPH_TRANSIENT_RETRIES:
            return
        delay = min(settings.WORKGRAPH_BACKOFF_CAP, settings.WORKGRAPH_BACKOFF_BASE * (2**used))
        _new_attempt(run, execution.node_id, cause=Cause.TRANSIENT_RETRY, not_before_seconds=delay,
                     feedback=list(execution.input_payload.get("feedback", [])))


# --- on_fail ------------------------------------------------------------------------------------------


def _on_fail(execution: WorkNodeExecution, *, worker: str, node: dict, judgment: Judgment, output: dict) -> None:
    """Record the failed judgment and create the attempts it calls for, or leave it terminal when exhausted.

    Both happen under the run lock, so no scheduler ever sees the failure without its follow-up
    attempts (it would block the dependants that should wait for the rerun).
    """
    on_fail = node.get("on_fail") or {}
    action = on_fail.get("action", "hard_fail")
    max_attempts = int(on_fail.get("max_attempts") or DEFAULT_MAX_ATTEMPTS)
    issues = judgment.issues or ["the judge gave no details"]
    content = output["text"]
    with _run_locked(execution.run_id) as run:
        error = "judgment failed: " + "; ".join(judgment.issues)
        if not _finish(execution, worker=worker, status=Status.FAILED, output=output, judgment=judgment, error=error):
            return
        attempts = run.executions.filter(node_id=execution.node_id).exclude(cause=Cause.TRANSIENT_RETRY).count()
        if action == "hard_fail" or attempts >= max_attempts:
            reason = "hard_fail" if action == "hard_fail" else f"{action} exhausted after {attempts} attempts"
            log_append(execution=execution, event="on_fail", action=action, outcome="terminal", reason=reason)
            return
        if action == "retry_self":
            _new_attempt(run, execution.node_id, cause=Cause.RETRY_SELF,
                         feedback=[f"Your previous attempt was rejected: {issue}" for issue in issues])
            log_append(execution=execution, event="on_fail", action=action, outcome="retrying")
            return
        if action == "loop_back":
            target = manifest_lib.loop_back_target(run.graph_manifest, execution.node_id)
            if target is None:
                log_append(execution=execution, event="on_fail", action=action, outcome="terminal",
                           reason="no on_failure edge")
                return
            rerun = manifest_lib.nodes_between(run.graph_manifest, target=target, failing=execution.node_id)
            _loop_back(run, rerun=rerun, cause=Cause.LOOP_BACK, failing=execution.node_id, issues=issues)
            log_append(execution=execution, event="on_fail", action=action, outcome="looped_back", target=target,
                       rerun=rerun)
            return
        if action == "dynamic_loop_back":
            root_cause = first_root_cause(content) or "coder"
            stage = DYNAMIC_ROOT_CAUSES.get(root_cause, "coder")
            if root_cause == "skill_defect":
                _flag_skills(run, stage=stage, note="; ".join(issues) or content[:2000])
            rerun = _stage_and_downstream(run, stage=stage, failing=execution.node_id)
            # The verdict's own words say what the stage got wrong; the check's issue only says "fail".
            _loop_back(run, rerun=rerun, cause=Cause.DYNAMIC_LOOP_BACK, failing=execution.node_id,
                       issues=[*issues, f"the verdict reads:\n{content[:4000]}"])
            log_append(execution=execution, event="on_fail", action=action, outcome="looped_back",
                       root_cause=root_cause, stage=stage, rerun=rerun)


def _loop_back(run: WorkGraphRun, *, rerun: Sequence[str], cause: str, failing: str, issues: list[str]) -> None:
    feedback = [f"Node {failing!r} failed its judgment after using this work: {issue}" for issue in issues]
    for node_id in rerun:
        _new_attempt(run, node_id, cause=cause, cause_node_id=failing, feedback=feedback)


def _stage_and_downstream(run: WorkGraphRun, *, stage: str, failing: str) -> list[str]:
    manifest = run.graph_manifest
    owned = {node_id for node_id, org in _subagent_by_node(run).items() if org == stage}
    chosen = set(owned) | {failing}
    for node_id in owned:
        chosen |= manifest_lib.downstream_of(manifest, node_id)
    return [node_id for node_id in manifest_lib.topological_order(manifest) if node_id in chosen]


def _flag_skills(run: WorkGraphRun, *, stage: str, note: str) -> None:
    skill_ids = {
        node.get("skill_ref")
        for node in run.graph_manifest.get("nodes", [])
        if node.get("skill_ref") and _subagent_by_node(run).get(node["node_id"]) == stage
    }
    Skill.objects.filter(skill_id__in=skill_ids).update(defect_reported_at=timezone.now(), defect_note=note[:4000])


def _new_attempt(
    run: WorkGraphRun,
    node_id: str,
    *,
    cause: str,
    cause_node_id: str = "",
    feedback: list[str] | None = None,
    not_before_seconds: float = 0.0,
) -> WorkNodeExecution:
    """Add the next attempt of ``node_id`` as a pending row (call under the run lock)."""
    highest = run.executions.filter(node_id=node_id).aggregate(top=Max("attempt"))["top"] or 0
    previous = run.executions.filter(node_id=node_id, attempt=highest).first()
    node = _manifest_node(run.graph_manifest, node_id) or {}
    created = WorkNodeExecution.objects.create(
        run=run,
        node_id=node_id,
        subagent_type=previous.subagent_type if previous else _subagent_by_node(run).get(node_id, ""),
        skill_ref_id=_skill_pk(node),
        attempt=highest + 1,
        cause=cause,
        cause_node_id=cause_node_id,
        input_payload={"feedback": feedback or []},
        not_before=timezone.now() + timedelta(seconds=not_before_seconds) if not_before_seconds else None,
    )
    node_states_emit(run_id=run.pk, rows=[created])
    return created


# --- Cancel, fork, reap ----------------------------------------------------------------------------------


def run_cancel(*, run: WorkGraphRun) -> None:
    """Stop a run: waiting attempts are cancelled now, running agents are stopped by their heartbeat."""
    now = timezone.now()
    with _run_locked(run.run_id) as locked:
        if locked.is_finished():
            raise InvalidTransitionError(entity="run", current=locked.status, requested=RunStatus.CANCELLED)
        WorkGraphRun.objects.filter(pk=locked.pk).update(cancel_requested_at=now)
        waiting = locked.executions.filter(status__in=[Status.PENDING, Status.QUEUED])
        cancelled = list(waiting.values("pk", "node_id", "attempt", "cause"))
        waiting.update(status=Status.CANCELLED, error="the run was cancelled", finished_at=now)
        node_states_emit(run_id=locked.pk, rows=[{**row, "status": Status.CANCELLED} for row in cancelled])
        if not locked.executions.filter(status=Status.RUNNING).exists():
            locked.cancel_requested_at = now
            _run_finish(locked, status=RunStatus.CANCELLED, error="cancelled", now=now)


def run_fork(*, run: WorkGraphRun, node_id: str) -> WorkGraphRun:
    """Start a new run of the same manifest that reuses every output upstream of ``node_id``.

    Nodes that are neither ``node_id`` nor downstream of it keep their latest successful output,
    copied as a ``fork`` attempt; ``node_id`` and everything downstream run again.
    """
    manifest = run.graph_manifest
    if node_id not in manifest_lib.manifest_node_ids(manifest):
        raise EngineError(f"node {node_id!r} is not in run {run.run_id}")
    rerun = {node_id} | manifest_lib.downstream_of(manifest, node_id)
    latest = _latest_rows(run)
    with transaction.atomic():
        fork = WorkGraphRun.objects.create(
            task=run.task, graph_manifest=manifest, manifest_version=run.manifest_version, forked_from=run,
            fork_node_id=node_id, status=RunStatus.READY, pipeline=False, stage=run.stage,
        )
        now = timezone.now()
        copies = []
        for planning in run.executions.filter(node_id__startswith=PLANNING_NODE_ID, status=Status.SUCCEEDED):
            copies.append(_copied_row(planning, fork=fork, cause=Cause.PLANNING, now=now))
        for kept_node in latest:
            if kept_node in rerun:
                continue
            # A partial output that is not required for completion counts as done, as when scheduling.
            source = (
                run.executions.filter(node_id=kept_node, status__in=[Status.SUCCEEDED, Status.PARTIAL])
                .order_by("-attempt")
                .first()
            )
            if source is None or not _upstream_done(manifest, kept_node, source.status):
                raise EngineError(
                    f"cannot fork from {node_id!r}: {kept_node!r} would be reused but has no successful output"
                    f" (fork from {kept_node!r} or a node upstream of it)"
                )
            copies.append(_copied_row(source, fork=fork, cause=Cause.FORK, now=now))
        WorkNodeExecution.objects.bulk_create(copies)
        subagents = _subagent_by_node(run)
        WorkNodeExecution.objects.bulk_create(
            [
                WorkNodeExecution(run=fork, node_id=rerun_node, subagent_type=subagents.get(rerun_node, ""),
                                  skill_ref_id=_skill_pk(_manifest_node(manifest, rerun_node)), attempt=1,
                                  cause=Cause.FORK if rerun_node == node_id else Cause.INITIAL)
                for rerun_node in manifest_lib.topological_order(manifest) if rerun_node in rerun
            ]
        )
    run_start(run=fork)
    fork.refresh_from_db()
    return fork


def _copied_row(source: WorkNodeExecution, *, fork: WorkGraphRun, cause: str, now) -> WorkNodeExecution:
    return WorkNodeExecution(
        run=fork, node_id=source.node_id, subagent_type=source.subagent_type, skill_ref_id=source.skill_ref_id,
        attempt=1, cause=cause, status=source.status, error=source.error, input_payload=source.input_payload,
        output_payload={**source.output_payload, "reused_from": str(source.node_exec_id)},
        judgment_result=source.judgment_result, ready_at=now, started_at=now, finished_at=now,
    )


@job_handler("reap")
def reap_job(_: str = "") -> None:
    executions_reap()


def executions_reap(*, stale_after: timedelta | None = None) -> list[str]:
    """Fail attempts whose worker stopped heart-beating, queue a retry for each, and return their ids.

    A worker that died mid-node leaves its row ``running`` forever; the retry is a new attempt with
    cause ``transient_retry`` (a dead worker is an infrastructure failure, not the node's fault).
    Queued attempts whose job was lost are handed to the executor again; claiming is idempotent.
    Logs a killed worker left open on finished attempts are closed.
    Runs left with pending attempts and nothing active to advance them are advanced again.
    """
    stale_after = stale_after or timedelta(seconds=settings.WORKGRAPH_REAP_AFTER_SECONDS)
    cutoff = timezone.now() - stale_after
    reaped: list[str] = []
    stale = WorkNodeExecution.objects.filter(status=Status.RUNNING, heartbeat_at__lt=cutoff).select_related("run")
    for execution in stale:
        error = f"worker {execution.worker} stopped (no heartbeat since {execution.heartbeat_at:%H:%M:%S})"
        if not _attempt_lost(execution, still_owned=Q(heartbeat_at__lt=cutoff), error=error):
            continue
        log_append(execution=execution, event="worker_lost", worker=execution.worker)
        log_file_close(execution=execution)
        reaped.append(str(execution.pk))
        run_advance(run_id=execution.run_id)
    _lost_jobs_resubmit(stale_after=stale_after)
    logs_left_open_close(finished_before=cutoff)
    # A worker killed after committing a node's result but before advancing the run leaves the
    # dependants pending with no attempt left to advance them; advancing such a run again is harmless.
    stalled = (
        WorkGraphRun.objects.filter(status=RunStatus.RUNNING, executions__status=Status.PENDING)
        .exclude(executions__status__in=[Status.QUEUED, Status.RUNNING])
        .values_list("pk", flat=True)
        .distinct()
    )
    for run_id in stalled:
        run_advance(run_id=run_id)
    return reaped


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
    for start in range(0, len(due), 1000):
        chunk = due[start : start + 1000]
        with transaction.atomic():
            WorkNodeExecution.objects.filter(pk__in=chunk, status=Status.QUEUED).update(
                resubmitted_at=now, resubmits=F("resubmits") + 1
            )
            for pk in chunk:
                job_submit("node_execute", str(pk))


def _attempt_lost(execution: WorkNodeExecution, *, still_owned: Q, error: str) -> bool:
    """Fail a running attempt whose work was lost to the infrastructure and queue its retry.

    ``still_owned`` says when the row is still the lost attempt (not finished or reaped meanwhile);
    return whether it was. The retry has cause ``transient_retry`` and counts against the node's
    transient budget, so a node that kills every worker it runs on ends failed instead of looping.
    """
    with _run_locked(execution.run_id) as run:
        now = timezone.now()
        moved = WorkNodeExecution.objects.filter(still_owned, pk=execution.pk, status=Status.RUNNING).update(
            status=Status.FAILED, error=storable(error), finished_at=now
        )
        if moved != 1:
            return False
        execution.status, execution.error, execution.finished_at = Status.FAILED, error, now
        node_states_emit(run_id=run.pk, rows=[execution])
        if execution.is_planning:
            _planning_lost(run, error=error)
        elif run.status == RunStatus.RUNNING and run.cancel_requested_at is None:
            used = run.executions.filter(node_id=execution.node_id, cause=Cause.TRANSIENT_RETRY).count()
            if used < settings.WORKGRAPH_TRANSIENT_RETRIES:
                _new_attempt(run, execution.node_id, cause=Cause.TRANSIENT_RETRY,
                             feedback=list(execution.input_payload.get("feedback", [])))
    return True


def _planning_lost(run: WorkGraphRun, *, error: str) -> None:
    """A planning call whose worker died: the run it was creating or extending ends with the reason.

    Planning is not retried automatically (it may have cost a long agent call, and a person may want to
    read what it produced); the reason is recorded so a lead can plan again or fork.
    """
    reason = f"planning stopped: {error}"
    if run.status in (RunStatus.PLANNING, RunStatus.RUNNING):
        status = RunStatus.PLANNING_FAILED if run.status == RunStatus.PLANNING else RunStatus.FAILED
        _run_finish(run, status=status, error=reason, now=timezone.now())


# --- Helpers ----------------------------------------------------------------------------------------------


@contextmanager
def _run_locked(run_id: Any, *, with_manifest: bool = True) -> Iterator[WorkGraphRun]:
    """Lock the run row for a scheduling decision. ``with_manifest=False`` is the scheduler's lighter
    load, once per node: it has the manifest in the graph shape and needs neither the task nor the
    project (joining and building them took most of the lock's cost)."""
    with transaction.atomic():
        if with_manifest:
            # of=("self",): lock the run row only, not the task and project rows joined in with it.
            runs = WorkGraphRun.objects.select_for_update(of=("self",)).select_related("task__project")
        else:
            runs = WorkGraphRun.objects.select_for_update().defer("graph_manifest")
        yield runs.get(pk=run_id)


def _finish(
    execution: WorkNodeExecution,
    *,
    worker: str,
    status: str,
    output: dict | None = None,
    judgment: Judgment | None = None,
    error: str = "",
) -> bool:
    """Record the end of an attempt (and its input, see ``_save_input``) if this worker still owns it;
    return whether it did."""
    fields: dict[str, Any] = {
        "status": status, "finished_at": timezone.now(), "error": storable(error),
        "input_payload": storable(execution.input_payload),
    }
    if output is not None:
        fields["output_payload"] = storable(output)
    if judgment is not None:
        fields["judgment_result"] = storable(judgment.as_dict())
    owned = WorkNodeExecution.objects.filter(pk=execution.pk, status=Status.RUNNING, worker=worker).update(**fields)
    for name, value in fields.items():
        setattr(execution, name, value)
    if owned == 1:
        node_states_emit(run_id=execution.run_id, rows=[execution])
    log_append(execution=execution, event="node_finished", status=status, error=error, committed=owned == 1)
    return owned == 1


def _save_input(
    execution: WorkNodeExecution, *, node: dict, prompt: str, upstream: dict[str, str], feedback: list[str]
) -> None:
    """Keep the attempt's input on it; ``_finish`` writes it with the result, one UPDATE per node fewer.

    An llm judgment is another agent call, which may take minutes: the input is written before it, so
    the node's page shows the prompt meanwhile.
    """
    payload = {**execution.input_payload, "prompt": prompt, "upstream": sorted(upstream), "feedback": feedback}
    execution.input_payload = payload
    if (node.get("judgment") or {}).get("kind") == "llm":
        WorkNodeExecution.objects.filter(pk=execution.pk).update(input_payload=payload)


def _promote_artifact(execution: WorkNodeExecution, *, node: dict, content: str) -> None:
    promote = node.get("promotes_to_artifact") or {}
    if not promote.get("artifact_type"):
        return
    # A node that ran again (a loop-back) replaces its earlier artifact: the task keeps the accepted version.
    with transaction.atomic():
        Artifact.objects.filter(
            run_id=execution.run_id, node_exec__node_id=execution.node_id, artifact_type=promote["artifact_type"]
        ).delete()
        Artifact.objects.create(
            node_exec=execution, artifact_type=promote["artifact_type"], task_id=execution.run.task_id,
            run_id=execution.run_id, content=content,
        )


def _latest_rows(
    run: WorkGraphRun, *, node_ids: Sequence[str] | None = None, runnable: bool = False
) -> dict[str, dict]:
    """Each node's highest attempt (of every node, or of ``node_ids``), as ``values()`` dicts.

    ``runnable`` rows also hold what running the attempt takes (``_RUNNABLE_FIELDS``), for a caller
    that may claim one and run it without reading it again.
    """
    latest: dict[str, dict] = {}
    if node_ids is None:
        rows = run.executions.exclude(node_id__startswith=PLANNING_NODE_ID)
    else:
        # Manifest node ids never take the planning calls' reserved prefix (graphs.manifest checks).
        rows = WorkNodeExecution.objects.filter(run_id=run.pk, node_id__in=node_ids)
    fields = ["pk", "node_id", "attempt", "status", "cause", "not_before"]
    if runnable:
        fields += [name for name in _RUNNABLE_FIELDS if name not in fields]
    for row in rows.values(*fields):
        current = latest.get(row["node_id"])
        if current is None or row["attempt"] > current["attempt"]:
            latest[row["node_id"]] = row
    return latest


def _latest_states(run: WorkGraphRun) -> QuerySet:
    """One row per node (planning calls left out): its highest attempt and its highest active attempt.

    A node is still active when the two are equal. Grouped in the database, so a fan-out's hundreds of
    rows are counted there rather than read into Python after every node.
    """
    return (
        run.executions.exclude(node_id__startswith=PLANNING_NODE_ID)
        .order_by()
        .values("node_id")
        .annotate(top=Max("attempt"), top_active=Max("attempt", filter=Q(status__in=WorkNodeExecution.ACTIVE_STATUSES)))
    )


def _any_active(run: WorkGraphRun, node_ids: Sequence[str]) -> bool:
    return _latest_states(run).filter(node_id__in=node_ids, top_active=F("top")).exists()


def _progress_due(run_id: Any) -> bool:
    """Whether this process last reported the run's progress ``PROGRESS_EVERY_SECONDS`` ago or more."""
    now = time.monotonic()
    with _progress_lock:
        if now - _progress_reported.get(run_id, float("-inf")) < PROGRESS_EVERY_SECONDS:
            return False
        if len(_progress_reported) >= _PROGRESS_RUNS_KEPT:
            _progress_reported.pop(next(iter(_progress_reported)))
        _progress_reported[run_id] = now
        return True


def _progress_counts(run: WorkGraphRun) -> tuple[int, int]:
    """(nodes that have an attempt, nodes whose latest attempt is still active)."""
    counts = _latest_states(run).aggregate(
        total=Count("node_id"), active=Count("node_id", filter=Q(top_active=F("top")))
    )
    return counts["total"], counts["active"]


def _upstream_outputs(run: WorkGraphRun, node: dict, *, known: dict[str, str] | None = None) -> dict[str, str]:
    """The latest successful output of each dependency of ``node``; those in ``known`` are not read again."""
    dependencies = list(node.get("depends_on") or [])
    outputs = {dep: text for dep, text in (known or {}).items() if dep in dependencies}
    unknown = [dep for dep in dependencies if dep not in outputs]
    if unknown:
        # A partial node that is not required for completion still hands its output on.
        rows = run.executions.filter(
            node_id__in=unknown, status__in=[Status.SUCCEEDED, Status.PARTIAL]
        ).order_by("node_id", "-attempt")
        # Tuples, not instances: the related manager would fetch each instance's deferred run_id again,
        # one query per upstream node.
        for node_id, output in rows.values_list("node_id", "output_payload"):
            outputs.setdefault(node_id, output.get("text", ""))
    return {dep: outputs[dep] for dep in dependencies if dep in outputs}


def _upstream_bad(manifest: dict, node_id: str, status: str) -> bool:
    """Whether an upstream in ``status`` blocks its dependants: failed, blocked or cancelled, or (issue 7)
    partial while required for completion."""
    if status == Status.PARTIAL:
        return node_required_for_completion(_manifest_node(manifest, node_id))
    return status in _TERMINAL_BAD


def _upstream_done(manifest: dict, node_id: str, status: str) -> bool:
    """Whether an upstream in ``status`` lets its dependants run: succeeded, or (issue 7) partial but
    not required for completion."""
    if status == Status.PARTIAL:
        return not node_required_for_completion(_manifest_node(manifest, node_id))
    return status == Status.SUCCEEDED


def _zero_token_nodes(manifest: dict) -> frozenset[str]:
    """Nodes fed only by ``zero_token`` edges: pure aggregations, which need no agent call."""
    incoming: dict[str, list[str]] = {}
    for edge in manifest.get("edges", []):
        if edge.get("edge_type") != "on_failure":
            incoming.setdefault(edge.get("to"), []).append(edge.get("edge_type"))
    return frozenset(node_id for node_id, types in incoming.items() if all(kind == "zero_token" for kind in types))


def _aggregate(upstream: dict[str, str]) -> str:
    return "\n\n".join(f"## {node_id}\n\n{text}" for node_id, text in upstream.items())


def _manifest_node(manifest: dict, node_id: str) -> dict | None:
    for node in manifest.get("nodes", []):
        if node.get("node_id") == node_id:
            return node
    return None


def _skill_pk(node: dict | None) -> int | None:
    skill_id = (node or {}).get("skill_ref")
    if not skill_id:
        return None
    return Skill.objects.filter(skill_id=skill_id).values_list("pk", flat=True).first()


def _subagent_by_node(run: WorkGraphRun) -> dict[str, str]:
    """Map each node_id to the org node that planned it (from the run's planning calls)."""
    owners: dict[str, str] = {}
    planning = run.executions.filter(node_id__startswith=PLANNING_NODE_ID, status=Status.SUCCEEDED).order_by(
        "created_at"
    )
    for execution in planning.only("subagent_type", "output_payload"):
        for node_id in execution.output_payload.get("new_node_ids", []):
            owners.setdefault(node_id, execution.subagent_type)
    for node in run.graph_manifest.get("nodes", []):
        if node.get("subagent_type"):
            owners[node["node_id"]] = node["subagent_type"]
    return owners


def run_wait_finished(*, run_id: Any, timeout: float, poll: float = 0.2) -> WorkGraphRun:
    """Poll until the run has finished or ``timeout`` seconds have passed; return it as it is then."""
    deadline = time.monotonic() + timeout
    while True:
        run = WorkGraphRun.objects.get(pk=run_id)
        if run.is_finished() or time.monotonic() >= deadline:
            return run
        time.sleep(poll)


def task_wait_finished(*, task_id: Any, timeout: float, poll: float = 0.2) -> Task:
    """Poll until the task has an outcome (its pipeline ended) or ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    finished = {Task.Status.SUCCEEDED, Task.Status.FAILED, Task.Status.CANCELLED, Task.Status.INCOMPLETE}
    while True:
        task = Task.objects.get(pk=task_id)
        if task.status in finished or time.monotonic() >= deadline:
            return task
        time.sleep(poll)
