"""Reads for pages and the API, shaped so the number of queries does not grow with the number of nodes."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q, QuerySet

from graphs import manifest as manifest_lib
from graphs.models import (
    PLANNING_NODE_ID,
    Project,
    ProjectMembership,
    Task,
    WorkGraphRun,
    WorkNodeExecution,
)

NOT_STARTED = "not_started"


def projects_for_user(user: AbstractBaseUser) -> QuerySet[Project]:
    return Project.objects.filter(memberships__user=user).distinct()


def project_role(user: AbstractBaseUser, project_id: Any) -> str | None:
    """Return the user's role in the project, or None when they are not a member."""
    if not user.is_authenticated:
        return None
    return (
        ProjectMembership.objects.filter(user=user, project_id=project_id).values_list("role", flat=True).first()
    )


def tasks_for_user(
    user: AbstractBaseUser, *, project_slug: str = "", status: str = "", text: str = ""
) -> QuerySet[Task]:
    tasks = Task.objects.filter(project__memberships__user=user).select_related("project")
    if project_slug:
        tasks = tasks.filter(project__slug=project_slug)
    if status:
        tasks = tasks.filter(status=status)
    if text:
        tasks = tasks.filter(Q(title__icontains=text) | Q(goal_text__icontains=text))
    return tasks.order_by("-created_at")


@dataclass(frozen=True)
class Progress:
    done: int
    total: int

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


def latest_run_progress(tasks: list[Task]) -> dict[Any, tuple[WorkGraphRun | None, Progress]]:
    """For each task, its newest run and how many of that run's nodes have succeeded (two queries)."""
    runs: dict[Any, WorkGraphRun] = {}
    for run in WorkGraphRun.objects.filter(task__in=tasks).order_by("task_id", "-created_at"):
        runs.setdefault(run.task_id, run)
    done = dict(
        WorkNodeExecution.objects.filter(run__in=list(runs.values()), status=WorkNodeExecution.Status.SUCCEEDED)
        .exclude(node_id__startswith=PLANNING_NODE_ID)
        .values("run")
        .annotate(done=Count("node_id", distinct=True))
        .values_list("run", "done")
    )
    result: dict[Any, tuple[WorkGraphRun | None, Progress]] = {}
    for task in tasks:
        run = runs.get(task.pk)
        total = len((run.graph_manifest or {}).get("nodes", [])) if run else 0
        result[task.pk] = (run, Progress(done=done.get(run.pk, 0) if run else 0, total=total))
    return result


def runs_in_flight(user: AbstractBaseUser) -> QuerySet[WorkGraphRun]:
    active = [WorkGraphRun.Status.PLANNING, WorkGraphRun.Status.RUNNING, WorkGraphRun.Status.AWAITING_APPROVAL]
    return (
        WorkGraphRun.objects.filter(task__project__memberships__user=user, status__in=active)
        .select_related("task__project")
        .order_by("-created_at")
    )


# --- Task detail: the to-do tree ------------------------------------------------------------------------


@dataclass
class TreeNode:
    node_id: str
    spec: dict
    attempts: list[WorkNodeExecution] = field(default_factory=list)

    @property
    def latest(self) -> WorkNodeExecution | None:
        return self.attempts[-1] if self.attempts else None

    @property
    def status(self) -> str:
        return self.latest.status if self.latest else NOT_STARTED


@dataclass
class Stage:
    org_node: str
    planning: list[WorkNodeExecution]
    nodes: list[TreeNode]


@dataclass
class RunTree:
    run: WorkGraphRun
    planning: list[WorkNodeExecution]
    stages: list[Stage]
    progress: Progress


def task_run_trees(task: Task) -> list[RunTree]:
    """Every run of the task as a to-do tree: planning calls, then nodes grouped by the stage that planned them.

    Three queries whatever the number of runs and nodes: the runs, their planning calls (whose payload
    says which stage added which node), and their node attempts without the bulky payloads.
    """
    runs = list(task.runs.order_by("-created_at"))
    executions: dict[Any, list[WorkNodeExecution]] = defaultdict(list)
    in_runs = WorkNodeExecution.objects.filter(run__in=runs).order_by("created_at", "attempt")
    planning = in_runs.filter(node_id__startswith=PLANNING_NODE_ID).defer("input_payload")
    attempts = in_runs.exclude(node_id__startswith=PLANNING_NODE_ID).defer("input_payload", "output_payload")
    for row in [*planning, *attempts]:
        executions[row.run_id].append(row)
    return [_run_tree(run, executions[run.pk]) for run in runs]


def _run_tree(run: WorkGraphRun, rows: list[WorkNodeExecution]) -> RunTree:
    planning = [row for row in rows if row.is_planning]
    by_node: dict[str, list[WorkNodeExecution]] = defaultdict(list)
    for row in rows:
        if not row.is_planning:
            by_node[row.node_id].append(row)
    for attempts in by_node.values():
        attempts.sort(key=lambda row: row.attempt)
    manifest = run.graph_manifest or {}
    specs = {node["node_id"]: node for node in manifest.get("nodes", []) if isinstance(node, dict)}
    order = manifest_lib.topological_order(manifest) if specs else []
    owner = _owners(planning, manifest)
    stage_order: list[str] = []
    grouped: dict[str, list[TreeNode]] = defaultdict(list)
    for node_id in order:
        org = owner.get(node_id, "unassigned")
        if org not in grouped:
            stage_order.append(org)
        grouped[org].append(TreeNode(node_id=node_id, spec=specs[node_id], attempts=by_node.get(node_id, [])))
    planning_by_org: dict[str, list[WorkNodeExecution]] = defaultdict(list)
    for row in planning:
        planning_by_org[row.subagent_type].append(row)
    for org in planning_by_org:
        if org not in grouped:
            stage_order.append(org)
    stages = [
        Stage(org_node=org, planning=planning_by_org.get(org, []), nodes=grouped.get(org, [])) for org in stage_order
    ]
    done = sum(1 for node_id in order if by_node.get(node_id) and by_node[node_id][-1].status == "succeeded")
    return RunTree(run=run, planning=planning, stages=stages, progress=Progress(done=done, total=len(order)))


def _owners(planning: list[WorkNodeExecution], manifest: dict) -> dict[str, str]:
    """Map node_id → the org node whose planning call added it (explicit subagent_type wins)."""
    owners: dict[str, str] = {}
    for row in planning:
        if row.status == WorkNodeExecution.Status.SUCCEEDED:
            for node_id in (row.output_payload or {}).get("new_node_ids", []):
                owners.setdefault(node_id, row.subagent_type)
    for node in manifest.get("nodes", []):
        if isinstance(node, dict) and node.get("subagent_type"):
            owners[node["node_id"]] = node["subagent_type"]
    return owners


# --- Run graph data ---------------------------------------------------------------------------------------


def run_graph_data(run: WorkGraphRun) -> dict[str, Any]:
    """The run's DAG for the visualizer: nodes with live status, edges with loop-back counts, every attempt.

    One query for the executions whatever the graph size (the run is already loaded).
    """
    manifest = run.graph_manifest or {}
    rows = list(
        WorkNodeExecution.objects.filter(run=run)
        .order_by("created_at", "attempt")
        .values(
            "node_exec_id", "node_id", "attempt", "cause", "cause_node_id", "status", "subagent_type",
            "started_at", "finished_at", "output_payload__new_node_ids",
        )
    )
    latest: dict[str, dict] = {}
    attempts_count: dict[str, int] = defaultdict(int)
    owners: dict[str, str] = {}
    for row in rows:
        node_id = row["node_id"]
        attempts_count[node_id] += 1
        if node_id not in latest or row["attempt"] > latest[node_id]["attempt"]:
            latest[node_id] = row
        if node_id.startswith(PLANNING_NODE_ID) and row["status"] == "succeeded":
            for new_id in row["output_payload__new_node_ids"] or []:
                owners.setdefault(new_id, row["subagent_type"])
    nodes = [_planning_node(row) for row in rows if row["node_id"].startswith(PLANNING_NODE_ID)]
    for spec in manifest.get("nodes", []):
        node_id = spec["node_id"]
        row = latest.get(node_id)
        nodes.append(_graph_node(spec, row, attempts=attempts_count.get(node_id, 0), owner=owners.get(node_id, "")))
    loop_back_runs = _loop_back_firings(rows)
    edges = [
        {
            "from": edge["from"],
            "to": edge["to"],
            "edge_type": edge.get("edge_type", "needs_judgment"),
            "fired": loop_back_runs.get(edge["from"], 0) if edge.get("edge_type") == "on_failure" else 0,
        }
        for edge in manifest.get("edges", [])
        if isinstance(edge, dict) and "from" in edge and "to" in edge
    ]
    return {
        "run": {
            "run_id": str(run.run_id), "status": run.status, "manifest_version": run.manifest_version,
            "task_id": str(run.task_id), "error": run.error,
        },
        "nodes": nodes,
        "edges": edges,
        "attempts": [
            {
                "node_exec_id": str(row["node_exec_id"]), "node_id": row["node_id"], "attempt": row["attempt"],
                "cause": row["cause"], "cause_node_id": row["cause_node_id"], "status": row["status"],
                "started_at": _iso(row["started_at"]), "finished_at": _iso(row["finished_at"]),
            }
            for row in rows
        ],
    }


def _loop_back_firings(rows: list[dict]) -> dict[str, int]:
    """How many times each failing node sent the run back: one firing per failed attempt that looped back."""
    firings: dict[str, set[int]] = defaultdict(set)
    for row in rows:
        if row["cause"] == "loop_back" and row["cause_node_id"] and row["node_id"] == row["cause_node_id"]:
            # The failing node's own rerun marks one firing (its previous attempt failed and looped back).
            firings[row["cause_node_id"]].add(row["attempt"])
    return {node_id: len(attempts) for node_id, attempts in firings.items()}


def _graph_node(spec: dict, row: dict | None, *, attempts: int, owner: str) -> dict[str, Any]:
    judgment = spec.get("judgment") or {}
    on_fail = spec.get("on_fail") or {}
    return {
        "node_id": spec["node_id"],
        "label": spec["node_id"],
        "org_node": spec.get("subagent_type") or owner or (row or {}).get("subagent_type") or "",
        "kind": "catalog" if "artifact_type" in spec else "generic",
        "artifact_type": spec.get("artifact_type"),
        "node_type": spec.get("node_type"),
        "judgment_kind": judgment.get("kind", "none"),
        "on_fail_action": on_fail.get("action"),
        "status": row["status"] if row else NOT_STARTED,
        "attempts": attempts,
        "latest_exec_id": str(row["node_exec_id"]) if row else None,
        "duration_ms": _duration_ms(row),
        "depends_on": list(spec.get("depends_on") or []),
    }


def _planning_node(row: dict) -> dict[str, Any]:
    return {
        "node_id": row["node_id"] if row["attempt"] == 1 else f"{row['node_id']}#{row['attempt']}",
        "label": row["node_id"],
        "org_node": row["subagent_type"],
        "kind": "planning",
        "artifact_type": None,
        "node_type": None,
        "judgment_kind": "none",
        "on_fail_action": None,
        "status": row["status"],
        "attempts": 1,
        "latest_exec_id": str(row["node_exec_id"]),
        "duration_ms": _duration_ms(row),
        "depends_on": [],
    }


def _duration_ms(row: dict | None) -> int | None:
    if not row or not row["started_at"] or not row["finished_at"]:
        return None
    return int((row["finished_at"] - row["started_at"]).total_seconds() * 1000)


def _iso(value) -> str | None:
    return value.isoformat() if value else None
