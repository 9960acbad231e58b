"""The advance after one attempt, told cheaply for wide fan-ins: which rows it reads, and whether a
dependant is ready, blocked or still waiting — without reading every dependency's row, nor taking the
run lock while the dependants wait or are only to be queued."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from graphs.engine.claims import Continuation, queued_attempt_claim
from graphs.engine.jobs import node_execute_submit
from graphs.engine.record import Recorder
from graphs.engine.state import (
    LATEST_FIELDS,
    GraphShape,
    RunStatus,
    Status,
    any_active,
    latest_rows,
    start_delay,
    upstream_bad,
    upstream_done,
)
from graphs.engine.statements import row_update
from graphs.logs.events import node_states_emit
from graphs.models import WorkGraphRun, WorkNodeExecution
from graphs.runs.facts import latest_by_node

# How many of a fan-in's dependencies are checked alone before all of them (see dependencies_verdict).
_ACTIVE_PROBE = 8
# How many dependants a leaf queues itself without the run lock; more take the locked path, whose
# queue hands out a few jobs at a time (scheduler.FAN_OUT_JOBS).
_READY_UNLOCKED = 4


def feeds_only_fan_ins(shape: GraphShape, node_id: str) -> bool:
    """Whether every dependant of ``node_id`` also waits on other nodes (a leaf of a fan-out/fan-in)."""
    dependants = shape.dependants.get(node_id, [])
    return bool(dependants) and all(len(shape.dependencies.get(d, [])) > 1 for d in dependants)


def fan_in_leaf_settled(
    *, run_id: Any, node_id: str, record: Recorder, shape: GraphShape, continuation: Continuation | None = None,
) -> bool:
    """Commit the result of a node whose dependants all wait on other nodes too, then look — without the
    run lock — whether each pending dependant still waits on an active dependency or is ready now, and
    queue the ready ones. Return True when every pending one was settled so: no advance is needed, and
    the lock every node of a wide or layered graph would otherwise queue on is not taken.

    Safe because every finisher commits before it looks: of two dependencies finishing at once, the one
    that commits last sees the other's result, so a dependant that becomes ready is always seen by
    someone, who queues it (only while pending, so never twice). The run's status and manifest version
    are read after the commit, with the rows, for the same reason: an append advances the run after
    committing its new nodes, so whichever of the two comes second sees the other; a version other than
    ``shape``'s (the one the attempt ran with) answers False. A dependant to block, more ready ones than
    ``_READY_UNLOCKED``, one ready that the continuing worker could run itself (the locked path claims
    it for it: no broker round trip), or no pending dependant at all (the stage may be over) answer
    False: the caller takes the locked path.

    With ``continuation``, a queued sibling is claimed for the continuing worker in the transaction that
    records this result: one commit for both. When every dependant waits on that sibling too, nothing
    is read after the commit (see ``_held_back_by_claim``).
    """
    with transaction.atomic():
        status = record()
        if continuation is not None:
            continuation.claimed = queued_attempt_claim(run_id=run_id, worker=continuation.worker,
                                                        project_id=continuation.project_id)
    if continuation is not None and _held_back_by_claim(shape, node_id, status=status, claimed=continuation.claimed):
        return True
    dependants = shape.dependants.get(node_id, [])
    rows = list(
        WorkNodeExecution.objects.filter(run_id=run_id, node_id__in=rows_to_read(shape, node_id, dependants))
        .values(*LATEST_FIELDS, "run__status", "run__manifest_version")
    )
    if not rows or (rows[0]["run__status"], rows[0]["run__manifest_version"]) != (RunStatus.RUNNING, shape.version):
        return False
    known = latest_by_node(rows)
    finished = known.get(node_id)
    if finished is None or not upstream_done(shape.manifest, node_id, finished["status"]):
        return False
    run = WorkGraphRun(pk=run_id)  # all the checks below need of the run is its id
    pending = False
    ready: list[dict] = []
    for dependant in dependants:
        row = known.get(dependant)
        if row is None or row["status"] != Status.PENDING:
            continue
        verdict = dependencies_verdict(run, shape, dependant, known=known)
        if verdict == "blocked":
            return False
        if verdict == "ready":
            ready.append(row)
        pending = True
    if len(ready) > _READY_UNLOCKED or (ready and continuation is not None and continuation.claimed is None):
        return False
    node_states_emit(run_id=run_id, rows=[row for row in ready if _queued_unlocked(row)])
    return pending


def _queued_unlocked(row: dict) -> bool:
    """Queue a pending dependant found ready, without the run lock, and hand it to the executor; return
    whether this call queued it.

    The conditional update decides: of two dependencies finishing at once that both find it ready, one
    queues it. A stop that cancels the run's waiting attempts meanwhile either comes first (the update
    finds it cancelled) or cancels it queued, as any queued attempt.
    """
    now = timezone.now()
    if row_update(WorkNodeExecution, pk=row["pk"], where={"status": Status.PENDING},
                  values={"status": Status.QUEUED, "ready_at": now}) != 1:
        return False
    row["status"] = Status.QUEUED
    node_execute_submit(node_exec_id=row["pk"], delay=max(start_delay(row, now), 0.0))
    return True


def _held_back_by_claim(
    shape: GraphShape, node_id: str, *, status: str | None, claimed: WorkNodeExecution | None
) -> bool:
    """Whether the sibling claimed with ``node_id``'s result, in the same transaction, holds back every
    dependant: it is one of each one's dependencies, and running — this worker's — at that commit.

    No dependant can be ready then, so there is nothing to look at. The claim's read of the run stands
    in for the look's: running, with the manifest the attempt ran with. An append committed after that
    read is found by the claimed sibling's own advance, whose version is then behind the run's (see
    ``advance_after``); a result other than one that lets dependants run (a required partial) takes the
    look as before, which blocks them at once.
    """
    if claimed is None or status is None or not upstream_done(shape.manifest, node_id, status):
        return False
    if (claimed.run.status, claimed.run.manifest_version) != (RunStatus.RUNNING, shape.version):
        return False
    dependants = shape.dependants.get(node_id, [])
    return bool(dependants) and all(claimed.node_id in shape.dependencies.get(d, []) for d in dependants)


def rows_to_read(shape: GraphShape, node_id: str, dependants: list[str]) -> list[str]:
    """The nodes whose latest rows an advance after ``node_id`` reads at once: the node, its dependants,
    and the last few other dependencies of each dependant (see ``dependencies_verdict``)."""
    probes = [
        dep for dependant in dependants for dep in shape.dependencies.get(dependant, [])[-_ACTIVE_PROBE - 1 :]
        if dep != node_id
    ]
    return list(dict.fromkeys([node_id, *dependants, *probes]))


def dependencies_verdict(run: WorkGraphRun, shape: GraphShape, node_id: str, *, known: dict[str, dict]) -> str:
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
    if probe and (any_active(run, probe) or (len(unknown) > len(probe) and any_active(run, unknown))):
        return "waiting"
    latest = {**known, **latest_rows(run, node_ids=unknown)} if unknown else known
    upstream = [(dep, latest.get(dep)) for dep in dependencies]
    if any(up is not None and upstream_bad(shape.manifest, dep, up["status"]) for dep, up in upstream):
        return "blocked"
    if all(up is not None and upstream_done(shape.manifest, dep, up["status"]) for dep, up in upstream):
        return "ready"
    return "waiting"
