"""One definition of each fact about a run, read the same way by the engine, the pages, the API, the
live events and the collaboration layer.

- a task's **latest run** is its newest (``runs_latest_first``, ``task_latest_run``);
- a node's **latest attempt** is its highest-numbered row (``node_latest_attempt`` for one node,
  ``latest_by_node`` and ``latest_attempts`` for many);
- a node's **latest usable output** is that of its highest attempt that succeeded or ended partial
  (``USABLE_STATUSES``, ``usable_attempts``): a partial node not required for completion hands it on;
- the **org node** that planned a node is the planning call that added it, unless the node names its
  own ``subagent_type`` (``node_owners``);
- a run's **progress** counts its manifest's work nodes: ``done`` is those whose latest attempt has
  finished, whatever the outcome, with the outcomes counted beside it (``RunProgress``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from django.db.models import Count, Exists, F, Func, IntegerField, OuterRef, QuerySet

from graphs.models import PLANNING_NODE_ID, WorkGraphRun, WorkNodeExecution

Status = WorkNodeExecution.Status
Row = TypeVar("Row")


# Newest first, and among runs created in the same instant the one with the higher id.
LATEST_RUN_FIRST = ("-created_at", "-run_id")
USABLE_STATUSES = (Status.SUCCEEDED, Status.PARTIAL)


def runs_latest_first(runs: QuerySet[WorkGraphRun]) -> QuerySet[WorkGraphRun]:
    """``runs`` ordered newest first."""
    return runs.order_by(*LATEST_RUN_FIRST)


def task_latest_run(task_id: Any) -> WorkGraphRun | None:
    """The task's newest run, or None when it has none."""
    return runs_latest_first(WorkGraphRun.objects.filter(task_id=task_id)).first()


def task_latest_run_id(task_id: Any) -> Any | None:
    """The id of the task's newest run, or None when it has none: its manifest, which grows with its
    graph, left unread."""
    return runs_latest_first(WorkGraphRun.objects.filter(task_id=task_id)).values_list("pk", flat=True).first()


def usable_attempts(executions: QuerySet[WorkNodeExecution]) -> QuerySet[WorkNodeExecution]:
    """``executions`` whose output a dependant may use, each node's highest attempt first."""
    return executions.filter(status__in=USABLE_STATUSES).order_by("node_id", "-attempt")


def _get(row: Any, name: str) -> Any:
    return row[name] if isinstance(row, Mapping) else getattr(row, name)


def latest_by_node(rows: Iterable[Row]) -> dict[str, Row]:
    """Each node's highest attempt among ``rows`` (model instances or ``values()`` dicts), by node_id."""
    latest: dict[str, Row] = {}
    for row in rows:
        node_id = _get(row, "node_id")
        current = latest.get(node_id)
        if current is None or _get(row, "attempt") > _get(current, "attempt"):
            latest[node_id] = row
    return latest


def node_latest_attempt(*, run: WorkGraphRun, node_id: str) -> WorkNodeExecution | None:
    """``node_id``'s latest attempt in ``run`` (its ``run`` already set), or None when it has none yet."""
    return run.executions.filter(node_id=node_id).order_by("-attempt").first()


def latest_attempts(executions: QuerySet[WorkNodeExecution]) -> QuerySet[WorkNodeExecution]:
    """Narrow ``executions`` to each work node's latest attempt, in the database (planning calls left out)."""
    newer = WorkNodeExecution.objects.filter(
        run_id=OuterRef("run_id"), node_id=OuterRef("node_id"), attempt__gt=OuterRef("attempt")
    )
    return executions.exclude(node_id__startswith=PLANNING_NODE_ID).filter(~Exists(newer))


def node_owners(
    planning_calls: Iterable[tuple[str, str, list[str] | None]], manifest: Mapping[str, Any] | None
) -> dict[str, str]:
    """Map node_id → the org node that planned it.

    ``planning_calls`` are a run's planning calls as ``(status, org node, new node ids)``, oldest
    first: the first successful call that added a node owns it. A node's own ``subagent_type`` wins
    over its planner.
    """
    owners: dict[str, str] = {}
    for status, org_node, new_ids in planning_calls:
        if status != Status.SUCCEEDED:
            continue
        for node_id in new_ids or []:
            owners.setdefault(node_id, org_node)
    for node in (manifest or {}).get("nodes", []):
        if isinstance(node, Mapping) and node.get("subagent_type"):
            owners[node["node_id"]] = node["subagent_type"]
    return owners


@dataclass(frozen=True)
class RunProgress:
    """How far a run's work nodes are: ``total`` in its manifest, each latest attempt's outcome counted."""

    total: int
    succeeded: int = 0
    partial: int = 0
    failed: int = 0
    blocked: int = 0
    cancelled: int = 0
    active: int = 0
    # Nodes whose change waits for a reviewer: neither done nor active.
    awaiting_review: int = 0

    @property
    def done(self) -> int:
        """Nodes whose latest attempt has finished, whatever its outcome."""
        return self.succeeded + self.partial + self.failed + self.blocked + self.cancelled

    def summary(self) -> str:
        """What pages show, live and on reload alike: ``7/10 done · 3 succeeded · 1 failed · 3 blocked``."""
        outcomes = [(self.succeeded, "succeeded"), (self.partial, "partial"), (self.failed, "failed"),
                    (self.blocked, "blocked"), (self.cancelled, "cancelled")]
        counted = [f"{count} {label}" for count, label in outcomes if count]
        if self.awaiting_review:
            counted.append(f"{self.awaiting_review} awaiting review")
        return " · ".join([f"{self.done}/{self.total} done", *counted])

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "done": self.done, "summary": self.summary()}


def progress_from_statuses(statuses: Iterable[str], *, total: int) -> RunProgress:
    """The progress of a run whose work nodes' latest attempts have ``statuses``."""
    counts: dict[str, int] = {}
    for status in statuses:
        counts[status] = counts.get(status, 0) + 1
    return _progress_from_counts(counts, total=total)


def _progress_from_counts(counts: Mapping[str, int], *, total: int) -> RunProgress:
    return RunProgress(
        total=total,
        succeeded=counts.get(Status.SUCCEEDED, 0),
        partial=counts.get(Status.PARTIAL, 0),
        failed=counts.get(Status.FAILED, 0),
        blocked=counts.get(Status.BLOCKED, 0),
        cancelled=counts.get(Status.CANCELLED, 0),
        active=sum(counts.get(status, 0) for status in WorkNodeExecution.ACTIVE_STATUSES),
        awaiting_review=counts.get(Status.AWAITING_REVIEW, 0),
    )


def manifest_node_count(manifest: Mapping[str, Any] | None) -> int:
    return sum(1 for node in (manifest or {}).get("nodes", []) if isinstance(node, Mapping))


class ManifestNodeCount(Func):
    """The number of nodes in a run's ``graph_manifest``, counted by the database: a list of runs
    need not read their manifests, which grow with their graphs. 0 without a node list."""

    output_field = IntegerField()

    def __init__(self, manifest: str = "graph_manifest") -> None:
        super().__init__(F(manifest))

    def as_sqlite(self, compiler, connection, **extra_context):
        return self.as_sql(compiler, connection, template="COALESCE(json_array_length(%(expressions)s, '$.nodes'), 0)",
                           **extra_context)

    def as_postgresql(self, compiler, connection, **extra_context):
        template = ("COALESCE(jsonb_array_length(CASE WHEN jsonb_typeof(%(expressions)s -> 'nodes') = 'array'"
                    " THEN %(expressions)s -> 'nodes' END), 0)")
        return self.as_sql(compiler, connection, template=template, **extra_context)


def run_node_total(run: WorkGraphRun) -> int:
    """How many nodes ``run``'s manifest holds: counted from the manifest when it is loaded, else by the
    database, which then sends a number and not the manifest (3.7 MB at 10,000 nodes)."""
    if "graph_manifest" not in run.get_deferred_fields():
        return manifest_node_count(run.graph_manifest)
    return WorkGraphRun.objects.filter(pk=run.pk).values_list(ManifestNodeCount(), flat=True).get()


def runs_progress(runs: Iterable[WorkGraphRun]) -> dict[Any, RunProgress]:
    """Each run's progress by run_id (one query whatever the number of runs and nodes)."""
    return runs_progress_counted(totals={run.pk: manifest_node_count(run.graph_manifest) for run in runs})


def runs_progress_counted(*, totals: Mapping[Any, int]) -> dict[Any, RunProgress]:
    """The progress of each run in ``totals`` (run_id → the number of work nodes in its manifest), in
    one query whatever the number of runs and nodes."""
    counts: dict[Any, dict[str, int]] = {run_id: {} for run_id in totals}
    grouped = (
        latest_attempts(WorkNodeExecution.objects.filter(run_id__in=list(totals)))
        .order_by()
        .values("run_id", "status")
        .annotate(count=Count("pk"))
        .values_list("run_id", "status", "count")
    )
    for run_id, status, count in grouped:
        counts[run_id][status] = count
    return {run_id: _progress_from_counts(counts[run_id], total=total) for run_id, total in totals.items()}


def run_progress_counted(*, run_id: Any, total: int) -> RunProgress:
    """The progress of one run whose manifest holds ``total`` work nodes (one grouped query)."""
    grouped = (
        latest_attempts(WorkNodeExecution.objects.filter(run_id=run_id))
        .order_by()
        .values("status")
        .annotate(count=Count("pk"))
        .values_list("status", "count")
    )
    return _progress_from_counts(dict(grouped), total=total)
