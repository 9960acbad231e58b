"""What the scheduler reads about a run: its lock, its graph's shape, its nodes' latest rows, its progress.

A node's current state is its highest attempt. Scheduling decisions are taken under a row lock on
the run (``run_locked``), so any number of workers can finish nodes at once without two of them
deciding the same thing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Max, Q, QuerySet

from graphs.domain import manifest_graph
from graphs.engine.statements import row_locked_read, rows_read
from graphs.models import PLANNING_NODE_ID, Skill, WorkGraphRun, WorkNodeExecution
from graphs.runs.evidence import node_required_for_completion
from graphs.runs.facts import (
    RunProgress,
    latest_attempts,
    latest_by_node,
    node_owners,
    progress_from_statuses,
    run_progress_counted,
)

Status = WorkNodeExecution.Status
Cause = WorkNodeExecution.Cause
RunStatus = WorkGraphRun.Status

# What the scheduler reads of a run with every node: all but the manifest, which is in the graph shape.
RUN_FIELDS = tuple(field.name for field in WorkGraphRun._meta.concrete_fields if field.name != "graph_manifest")
_TERMINAL_BAD = frozenset({Status.FAILED, Status.BLOCKED, Status.CANCELLED})
# What an attempt's row must hold for it to run, besides its ids and what claiming it writes.
RUNNABLE_FIELDS = ("node_id", "attempt", "cause", "cause_node_id", "not_before", "subagent_type", "skill_ref_id",
                   "input_payload")
# The live progress figure is recounted at most this often per run and process: counting a fan-out's
# rows after every leaf would scan the whole run per leaf.
PROGRESS_EVERY_SECONDS = 0.5
_PROGRESS_RUNS_KEPT = 1024
_progress_reported: dict[Any, float] = {}
_progress_lock = threading.Lock()


@contextmanager
def run_locked(run_id: Any, *, with_manifest: bool = True) -> Iterator[WorkGraphRun]:
    """Lock the run row for a scheduling decision. ``with_manifest=False`` is the scheduler's lighter
    load, once per node: it has the manifest in the graph shape and needs neither the task nor the
    project, whose joining and building would be most of the lock's cost."""
    with transaction.atomic():
        if with_manifest:
            # of=("self",): lock the run row only, not the task and project rows joined in with it.
            locked = WorkGraphRun.objects.select_for_update(no_key=True, of=("self",))
            yield locked.select_related("task__project").get(pk=run_id)
        else:
            yield row_locked_read(WorkGraphRun, pk=run_id, names=RUN_FIELDS)


@dataclass(frozen=True)
class GraphShape:
    manifest: dict
    nodes: dict[str, dict]
    dependencies: dict[str, list[str]]
    dependants: dict[str, list[str]]
    position: dict[str, int]
    zero_token: frozenset[str]
    version: int


_shapes: dict[tuple[str, int], GraphShape] = {}
_shapes_lock = threading.Lock()
_SHAPES_KEPT = 256


def graph_shape(run: WorkGraphRun) -> GraphShape:
    """The run's manifest with its nodes by id, dependencies, topological positions and aggregation
    nodes, worked out once per manifest version and kept for the process.

    Every attempt and every advance after one use these, so a 500-node manifest is not read and
    scanned per node. A manifest only changes by bumping its version. The manifest is shared by every
    caller in the process: read it, never change it.
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
    dependencies = manifest_graph.data_dependencies(manifest)
    dependants: dict[str, list[str]] = {}
    for dependant, deps in dependencies.items():
        for dep in deps:
            dependants.setdefault(dep, []).append(dependant)
    order = manifest_graph.topological_order(manifest)
    shape = GraphShape(
        manifest=manifest,
        nodes={node.get("node_id"): node for node in reversed(manifest.get("nodes", []))},
        dependencies=dependencies,
        dependants=dependants,
        position={node_id: index for index, node_id in enumerate(order)},
        zero_token=_zero_token_nodes(manifest),
        version=version,
    )
    with _shapes_lock:
        if len(_shapes) >= _SHAPES_KEPT:
            _shapes.pop(next(iter(_shapes)))
        _shapes[(str(run.run_id), version)] = shape
    return shape


# What a scheduling decision reads of each node's latest attempt.
LATEST_FIELDS = ("pk", "node_id", "attempt", "status", "cause", "not_before")


def latest_rows(
    run: WorkGraphRun, *, node_ids: Sequence[str] | None = None, runnable: bool = False
) -> dict[str, dict]:
    """Each node's highest attempt (of every node, or of ``node_ids``), as ``values()`` dicts.

    ``runnable`` rows also hold what running the attempt takes (``RUNNABLE_FIELDS``), for a caller
    that may claim one and run it without reading it again.
    """
    fields = list(LATEST_FIELDS)
    if runnable:
        fields += [name for name in RUNNABLE_FIELDS if name not in fields]
    if node_ids is None:
        return latest_by_node(run.executions.exclude(node_id__startswith=PLANNING_NODE_ID).values(*fields))
    # Manifest node ids never take the planning calls' reserved prefix (graphs.domain.manifest checks).
    return latest_by_node(rows_read(WorkNodeExecution, fields, where={"run_id": run.pk}, within=("node_id", node_ids)))


def _latest_states(run: WorkGraphRun) -> QuerySet:
    """One row per node (planning calls left out): its highest attempt and its highest active attempt.

    A node is still active when the two are equal. Grouped in the database, so a wide fan-out's rows
    are not read into Python to answer one question.
    """
    return (
        run.executions.exclude(node_id__startswith=PLANNING_NODE_ID)
        .order_by()
        .values("node_id")
        .annotate(top=Max("attempt"), top_active=Max("attempt", filter=Q(status__in=WorkNodeExecution.ACTIVE_STATUSES)))
    )


def any_active(run: WorkGraphRun, node_ids: Sequence[str]) -> bool:
    return _latest_states(run).filter(node_id__in=node_ids, top_active=F("top")).exists()


def any_active_left(run: WorkGraphRun) -> bool:
    """Whether any node's latest attempt is still active (pending, queued or running): found from the
    index on the attempts' run and status, where counting every node's latest attempt reads the run."""
    return latest_attempts(run.executions.filter(status__in=WorkNodeExecution.ACTIVE_STATUSES)).exists()


def start_delay(row: dict, now: datetime) -> float:
    """How long a ready attempt (a row as ``latest_rows`` reads it) waits before it may start: its backoff."""
    return (row["not_before"] - now).total_seconds() if row["not_before"] else 0.0


def progress_due(run_id: Any) -> bool:
    """Whether this process last reported the run's progress ``PROGRESS_EVERY_SECONDS`` ago or more."""
    now = time.monotonic()
    with _progress_lock:
        if now - _progress_reported.get(run_id, float("-inf")) < PROGRESS_EVERY_SECONDS:
            return False
        if len(_progress_reported) >= _PROGRESS_RUNS_KEPT:
            _progress_reported.pop(next(iter(_progress_reported)))
        _progress_reported[run_id] = now
        return True


def progress_count(run: WorkGraphRun, shape: GraphShape) -> RunProgress:
    """The run's progress, counted from each node's latest attempt.

    On PostgreSQL the latest attempts are read in one pass over the index on (run, node, attempt
    descending): the grouped count's anti-join, planned for a freshly loaded run before its table has
    statistics, compares every row of the run with every other (3.4 s at 1,000 nodes).
    """
    if connection.vendor != "postgresql":
        return run_progress_counted(run_id=run.pk, total=len(shape.position))
    statuses = (run.executions.exclude(node_id__startswith=PLANNING_NODE_ID).order_by("node_id", "-attempt")
                .distinct("node_id").values_list("status", flat=True))
    return progress_from_statuses(statuses, total=len(shape.position))


def upstream_bad(manifest: dict, node_id: str, status: str) -> bool:
    """Whether an upstream in ``status`` blocks its dependants: failed, blocked or cancelled, or
    partial while its spec requires it for completion."""
    if status == Status.PARTIAL:
        return node_required_for_completion(manifest_node(manifest, node_id))
    return status in _TERMINAL_BAD


def upstream_done(manifest: dict, node_id: str, status: str) -> bool:
    """Whether an upstream in ``status`` lets its dependants run: succeeded, or partial while its spec
    does not require it for completion."""
    if status == Status.PARTIAL:
        return not node_required_for_completion(manifest_node(manifest, node_id))
    return status == Status.SUCCEEDED


def _zero_token_nodes(manifest: dict) -> frozenset[str]:
    """Nodes fed only by ``zero_token`` edges: pure aggregations, which need no agent call."""
    incoming: dict[str, list[str]] = {}
    for edge in manifest.get("edges", []):
        if edge.get("edge_type") != "on_failure":
            incoming.setdefault(edge.get("to"), []).append(edge.get("edge_type"))
    return frozenset(node_id for node_id, types in incoming.items() if all(kind == "zero_token" for kind in types))


def manifest_node(manifest: dict, node_id: str) -> dict | None:
    for node in manifest.get("nodes", []):
        if node.get("node_id") == node_id:
            return node
    return None


def skill_pk(node: dict | None) -> int | None:
    skill_id = (node or {}).get("skill_ref")
    if not skill_id:
        return None
    return Skill.objects.filter(skill_id=skill_id).values_list("pk", flat=True).first()


def skill_pks(nodes: Iterable[dict]) -> dict[str, int]:
    """The primary key of each skill that ``nodes`` name (``skill_ref``), by skill id: one query for all,
    none when no node names one."""
    skill_ids = {node["skill_ref"] for node in nodes if node.get("skill_ref")}
    if not skill_ids:
        return {}
    return dict(Skill.objects.filter(skill_id__in=skill_ids).values_list("skill_id", "pk"))


def subagent_by_node(run: WorkGraphRun) -> dict[str, str]:
    """Map each node_id to the org node that planned it (``graphs.runs.facts.node_owners``)."""
    planning = run.executions.filter(node_id__startswith=PLANNING_NODE_ID).order_by("created_at")
    return node_owners(
        planning.values_list("status", "subagent_type", "output_payload__new_node_ids"), run.graph_manifest
    )
