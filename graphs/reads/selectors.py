"""Reads for pages, the API and the live consumers, shaped so the number of queries does not grow with
the number of nodes. Run facts (latest attempts, owners, progress) come from ``graphs.runs.facts``."""

from __future__ import annotations

import shlex
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Exists, F, Max, OuterRef, Q, QuerySet, Subquery, Sum
from django.utils import timezone

from graphs.agents.base import TOKEN_FIELDS
from graphs.domain import manifest as manifest_lib
from graphs.domain import manifest_graph
from graphs.domain.attempt_words import attempt_cause_text, attempt_failure_reason
from graphs.domain.case_manifests import (
    TEST_CASE_MANIFEST,
    CriterionCoverage,
    acceptance_criteria_with_ids,
    case_manifest_in,
    criteria_coverage,
)
from graphs.domain.failure_roles import FailureRole, failure_roles
from graphs.domain.failures import CATEGORIES, FailureClassification
from graphs.models import (
    PLANNING_NODE_ID,
    Artifact,
    AttemptChange,
    ExecutionLogFile,
    ExecutionLogLine,
    Project,
    ProjectMembership,
    RunWorkspace,
    Task,
    WorkGraphRun,
    WorkNodeExecution,
)
from graphs.planning.append_review import ApprovalWait, run_approval_wait
from graphs.runs.accounting import (
    NO_SPEND,
    Spend,
    accounting_of,
    spend_by_project,
    spend_by_run,
    spend_by_task,
    spend_of,
)
from graphs.runs.facts import (
    ManifestNodeCount,
    RunProgress,
    latest_by_node,
    manifest_node_count,
    node_owners,
    progress_from_statuses,
    runs_latest_first,
    runs_progress,
    runs_progress_counted,
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


def latest_run_progress(tasks: list[Task]) -> dict[Any, tuple[WorkGraphRun | None, RunProgress]]:
    """For each task, its newest run and that run's progress (two queries)."""
    runs: dict[Any, WorkGraphRun] = {}
    for run in WorkGraphRun.objects.filter(task__in=tasks).order_by("task_id", "-created_at"):
        runs.setdefault(run.task_id, run)
    progress = runs_progress(runs.values())
    result: dict[Any, tuple[WorkGraphRun | None, RunProgress]] = {}
    for task in tasks:
        run = runs.get(task.pk)
        result[task.pk] = (run, progress[run.pk] if run else RunProgress(total=0))
    return result


def tasks_spend(tasks: list[Task]) -> dict[Any, Spend]:
    """What each task's agent calls cost, every run of it included (one query)."""
    spends = spend_by_task(WorkNodeExecution.objects.filter(run__task__in=tasks))
    return {task.pk: spends.get(task.pk, NO_SPEND) for task in tasks}


def projects_spend(projects: list[Project]) -> dict[Any, Spend]:
    """What each project's agent calls cost, every task of it included (one query)."""
    spends = spend_by_project(WorkNodeExecution.objects.filter(run__task__project__in=projects))
    return {project.pk: spends.get(project.pk, NO_SPEND) for project in projects}


def task_spend(task: Task) -> Spend:
    """What the task's agent calls cost, every run of it included (one query)."""
    return spend_of(WorkNodeExecution.objects.filter(run__task=task))


@dataclass
class ChangedFile:
    path: str
    added: int
    removed: int
    binary: bool
    # The nodes whose landed attempts changed the file, in the order they landed.
    nodes: list[str]


def run_changed_files(run: WorkGraphRun, workspace: RunWorkspace) -> list[ChangedFile]:
    """The run branch's changed files, each with the nodes that changed it (one query)."""
    landed = (
        AttemptChange.objects.filter(run=run).exclude(merge_commit="")
        .order_by("node_exec__finished_at").values_list("node_exec__node_id", "files")
    )
    nodes_of: dict[str, list[str]] = defaultdict(list)
    for node_id, files in landed:
        for changed in files:
            if node_id not in nodes_of[changed["path"]]:
                nodes_of[changed["path"]].append(node_id)
    return [ChangedFile(path=f["path"], added=f["added"], removed=f["removed"], binary=f["binary"],
                        nodes=nodes_of.get(f["path"], [])) for f in workspace.files]


def runs_in_flight(user: AbstractBaseUser) -> QuerySet[WorkGraphRun]:
    active = [WorkGraphRun.Status.PLANNING, WorkGraphRun.Status.RUNNING, WorkGraphRun.Status.AWAITING_APPROVAL]
    return (
        WorkGraphRun.objects.filter(task__project__memberships__user=user, status__in=active)
        .select_related("task__project")
        .order_by("-created_at")
    )


# --- The runs list: every run the user may see, across tasks --------------------------------------------


def runs_for_user(
    user: AbstractBaseUser,
    *,
    project_slug: str = "",
    status: str = "",
    org_node: str = "",
    created_from: date | None = None,
    created_to: date | None = None,
    min_cost_usd: Decimal | None = None,
    text: str = "",
) -> QuerySet[WorkGraphRun]:
    """The runs of the projects the user is a member of, newest first, narrowed by each filter given.

    - ``org_node``: runs in which that org node worked — ran a node or made a planning call. A merged
      run spans several org nodes, and its ``stage`` names only the last to plan, so "the validator's
      runs" are those the validator took part in.
    - ``created_from`` / ``created_to``: the days (in the console's time zone) the run was created
      on, both included.
    - ``min_cost_usd``: runs whose attempts' summed ``cost_usd`` is at least that much; a run none of
      whose calls reported a cost has no sum, and is left out.
    - ``text``: the task's title contains it (in any case), or it is exactly the id of a node with
      an attempt in the run (a planned node that never ran is not found). Node ids are looked up in
      the attempts' indexes, never read out of manifests.

    Each filter is a condition of the one query, so a page of the list costs the same whatever the
    number of runs. The manifests are left unread: ``manifest_nodes`` is counted by the database.
    """
    runs = (
        WorkGraphRun.objects.filter(task__project__memberships__user=user)
        .select_related("task__project")
        .defer("graph_manifest")
        .annotate(manifest_nodes=ManifestNodeCount())
    )
    if project_slug:
        runs = runs.filter(task__project__slug=project_slug)
    if status:
        runs = runs.filter(status=status)
    # Each condition on a run's attempts is a subquery correlated to the run, answered from an index
    # for that run alone: without statistics (a table just loaded), PostgreSQL may run an uncorrelated
    # one again for every run, seconds for a page.
    attempts = WorkNodeExecution.objects.filter(run=OuterRef("pk"))
    if org_node:
        runs = runs.filter(Exists(attempts.filter(subagent_type=org_node)))
    if created_from:
        runs = runs.filter(created_at__gte=_day_start(created_from))
    if created_to and created_to < date.max:
        runs = runs.filter(created_at__lt=_day_start(created_to + timedelta(days=1)))
    if min_cost_usd is not None:
        cost = attempts.order_by().values("run").annotate(cost=Sum("cost_usd")).values("cost")
        runs = runs.alias(cost=Subquery(cost)).filter(cost__gte=min_cost_usd)
    if text:
        # Both halves correlated to the run, not a condition across the run and its joined task, for
        # which PostgreSQL would join every run to every task to test it.
        titled = Task.objects.filter(pk=OuterRef("task_id"), title__icontains=text)
        runs = runs.filter(Exists(titled) | Exists(attempts.filter(node_id=text)))
    return runs_latest_first(runs)


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


@dataclass(frozen=True)
class RunRow:
    """One run as the runs list shows it."""

    run: WorkGraphRun
    progress: RunProgress
    spend: Spend
    # How long it ran: start to finish, or so far while it has not finished; None before it starts.
    duration: timedelta | None


def run_rows(runs: Sequence[WorkGraphRun]) -> list[RunRow]:
    """The runs (from ``runs_for_user``) with their progress and what they cost: two queries."""
    progress = runs_progress_counted(totals={run.pk: run.manifest_nodes for run in runs})
    spends = spend_by_run(WorkNodeExecution.objects.filter(run__in=[run.pk for run in runs]))
    now = timezone.now()
    return [
        RunRow(run=run, progress=progress[run.pk], spend=spends.get(run.pk, NO_SPEND),
               duration=_run_duration(run, now=now))
        for run in runs
    ]


def _run_duration(run: WorkGraphRun, *, now: datetime) -> timedelta | None:
    if run.started_at is None:
        return None
    if run.finished_at is not None:
        return run.finished_at - run.started_at
    return None if run.is_finished() else now - run.started_at


# --- Task detail: the to-do tree ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TreeAttempt:
    """One attempt of a work node as the to-do tree shows it, read as plain values: at 1,000 nodes,
    building model instances for them cost the page more than rendering them, and their garbage made
    the collector pause it."""

    pk: Any
    node_id: str
    attempt: int
    status: str
    cause: str
    cause_node_id: str
    judgment_result: dict | None
    error: str
    failure: dict | None
    started_at: datetime | None
    finished_at: datetime | None

    def duration(self) -> timedelta | None:
        """Return how long the attempt ran, or None if it has not both started and finished."""
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at


# The columns a TreeAttempt is made of, in the order of its fields.
_TREE_ATTEMPT_COLUMNS = (
    "node_exec_id", "node_id", "attempt", "status", "cause", "cause_node_id", "judgment_result", "error", "failure",
    "started_at", "finished_at",
)


@dataclass
class TreeNode:
    node_id: str
    spec: dict
    attempts: list[TreeAttempt] = field(default_factory=list)
    # Set while the node's latest attempt failed or is blocked: a root cause, or because of which.
    failure_role: FailureRole | None = None

    @property
    def latest(self) -> TreeAttempt | None:
        return self.attempts[-1] if self.attempts else None

    @property
    def status(self) -> str:
        return self.latest.status if self.latest else NOT_STARTED


@dataclass
class Stage:
    org_node: str
    planning: list[WorkNodeExecution]
    nodes: list[TreeNode]


@dataclass(frozen=True)
class FailedAttempt:
    execution: WorkNodeExecution | TreeAttempt
    classification: FailureClassification
    # The node's place in the run's failure, when this is its latest attempt and it is still failed.
    role: FailureRole | None = None


@dataclass(frozen=True)
class FailureGroup:
    category: str
    attempts: list[FailedAttempt]


def failures_by_category(
    rows: Iterable[WorkNodeExecution | TreeAttempt], *, roles: Mapping[str, FailureRole] | None = None
) -> list[FailureGroup]:
    """The failed attempts among ``rows`` that carry a classification, grouped by category in the order
    of ``graphs.domain.failures.CATEGORIES``; within a group, in the order of ``rows``. ``roles`` (by node id)
    marks each node's latest failed attempt with its failure role."""
    roles = roles or {}
    rows = list(rows)
    latest = latest_by_node(rows)
    grouped: dict[str, list[FailedAttempt]] = defaultdict(list)
    for row in rows:
        classification = FailureClassification.from_dict(row.failure) if row.status == "failed" else None
        if classification is None:
            continue
        role = roles.get(row.node_id) if latest.get(row.node_id) is row else None
        grouped[classification.category].append(FailedAttempt(row, classification, role))
    return [FailureGroup(category, grouped[category]) for category in CATEGORIES if grouped.get(category)]


def run_failures(run: WorkGraphRun, rows: Iterable[WorkNodeExecution]) -> list[FailureGroup]:
    """The run's failed attempts among ``rows`` (its attempts, planning calls included) by category, each
    node's latest one marked with its failure role. No query: ``rows`` are read as they are."""
    rows = list(rows)
    latest = latest_by_node(row for row in rows if not row.is_planning)
    roles = run_failure_roles(run.graph_manifest or {}, {node_id: row.status for node_id, row in latest.items()})
    return failures_by_category(rows, roles=roles)


@dataclass
class RunTree:
    run: WorkGraphRun
    planning: list[WorkNodeExecution]
    stages: list[Stage]
    progress: RunProgress
    failures: list[FailureGroup] = field(default_factory=list)
    spend: Spend | None = None
    # The run's git branch and its change, when the project's folder is a repository.
    workspace: RunWorkspace | None = None
    # The task's run made just before this one, to compare them; None for its first run.
    previous_run: WorkGraphRun | None = None
    # What the run waits for a reviewer to approve, while it is awaiting approval.
    approval_wait: ApprovalWait | None = None


def task_run_trees(task: Task) -> list[RunTree]:
    """Every run of the task as a to-do tree: planning calls, then nodes grouped by the stage that planned them.

    Five queries whatever the number of runs and nodes: the runs, their planning calls (with the node
    ids each added, which say which stage planned which node), their node attempts as plain values,
    what each run's agent calls cost, summed by the database, and their branches; and one more for a
    run awaiting approval, what it waits for.
    """
    runs = list(runs_latest_first(task.runs.all()))
    in_runs = WorkNodeExecution.objects.filter(run__in=runs).order_by("created_at", "attempt")
    planning: dict[Any, list[WorkNodeExecution]] = defaultdict(list)
    # Of a planning call's payload, the tree needs which nodes it added: the rest holds the agent's
    # answer and the manifest twice over, three times what the run's own manifest weighs.
    calls = in_runs.filter(node_id__startswith=PLANNING_NODE_ID).defer("input_payload", "output_payload")
    for call in calls.annotate(new_node_ids=F("output_payload__new_node_ids")):
        planning[call.run_id].append(call)
    attempts: dict[Any, list[TreeAttempt]] = defaultdict(list)
    for run_id, *values in in_runs.exclude(node_id__startswith=PLANNING_NODE_ID).values_list(
        "run_id", *_TREE_ATTEMPT_COLUMNS
    ):
        attempts[run_id].append(TreeAttempt(*values))
    spends = spend_by_run(in_runs)
    workspaces = {row.run_id: row for row in RunWorkspace.objects.filter(run__in=runs).defer("diff", "files")}
    trees = [_run_tree(run, planning[run.pk], attempts[run.pk]) for run in runs]
    for index, tree in enumerate(trees):
        tree.spend = spends.get(tree.run.pk)
        tree.workspace = workspaces.get(tree.run.pk)
        # Runs are newest first: the one before this run is the next tree.
        tree.previous_run = trees[index + 1].run if index + 1 < len(trees) else None
        tree.approval_wait = run_approval_wait(tree.run)
    return trees


def _run_tree(run: WorkGraphRun, planning: list[WorkNodeExecution], attempts: list[TreeAttempt]) -> RunTree:
    by_node: dict[str, list[TreeAttempt]] = defaultdict(list)
    for row in attempts:
        by_node[row.node_id].append(row)
    for node_attempts in by_node.values():
        node_attempts.sort(key=lambda row: row.attempt)
    manifest = run.graph_manifest or {}
    specs = {node["node_id"]: node for node in manifest.get("nodes", []) if isinstance(node, dict)}
    order = manifest_graph.topological_order(manifest) if specs else []
    roles = run_failure_roles(manifest, {node_id: rows[-1].status for node_id, rows in by_node.items()})
    owner = node_owners(
        ((row.status, row.subagent_type, row.new_node_ids) for row in planning), manifest
    )
    stage_order: list[str] = []
    grouped: dict[str, list[TreeNode]] = defaultdict(list)
    for node_id in order:
        org = owner.get(node_id, "unassigned")
        if org not in grouped:
            stage_order.append(org)
        grouped[org].append(TreeNode(node_id=node_id, spec=specs[node_id], attempts=by_node.get(node_id, []),
                                     failure_role=roles.get(node_id)))
    planning_by_org: dict[str, list[WorkNodeExecution]] = defaultdict(list)
    for row in planning:
        planning_by_org[row.subagent_type].append(row)
    for org in planning_by_org:
        if org not in grouped:
            stage_order.append(org)
    stages = [
        Stage(org_node=org, planning=planning_by_org.get(org, []), nodes=grouped.get(org, [])) for org in stage_order
    ]
    progress = progress_from_statuses(
        (by_node[node_id][-1].status for node_id in order if by_node.get(node_id)), total=len(order)
    )
    return RunTree(run=run, planning=planning, stages=stages, progress=progress,
                   failures=failures_by_category([*planning, *attempts], roles=roles))


def task_criteria_coverage(task: Task, artifacts: Sequence[Artifact]) -> list[CriterionCoverage] | None:
    """Which of the task's acceptance criteria (by id) have a passing case, by the newest test case
    manifest among ``artifacts`` (the task's, newest first, with their runs); None when there is none.
    No query: ``artifacts`` are read as they are."""
    latest = next((artifact for artifact in artifacts if artifact.artifact_type == TEST_CASE_MANIFEST), None)
    if latest is None:
        return None
    return criteria_coverage(acceptance_criteria_with_ids(task.acceptance_criteria), case_manifest_in(latest.content),
                             run_succeeded=latest.run.status == WorkGraphRun.Status.SUCCEEDED)


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
            "started_at", "finished_at", "output_payload__new_node_ids", "agent_calls", "cost_usd", *TOKEN_FIELDS,
        )
    )
    latest = latest_by_node(rows)
    attempts_count: dict[str, int] = defaultdict(int)
    node_cost: dict[str, Decimal] = {}
    for row in rows:
        attempts_count[row["node_id"]] += 1
        row["tokens"] = sum(row[name] for name in TOKEN_FIELDS)
        if row["cost_usd"] is not None:
            node_cost[row["node_id"]] = node_cost.get(row["node_id"], Decimal(0)) + row["cost_usd"]
    planning = [row for row in rows if row["node_id"].startswith(PLANNING_NODE_ID)]
    owners = node_owners(
        ((row["status"], row["subagent_type"], row["output_payload__new_node_ids"]) for row in planning), manifest
    )
    nodes = [_planning_node(row) for row in planning]
    roles = run_failure_roles(manifest, {node_id: row["status"] for node_id, row in latest.items()})
    for spec in manifest.get("nodes", []):
        node_id = spec["node_id"]
        row = latest.get(node_id)
        role = roles.get(node_id)
        nodes.append({**_graph_node(spec, row, attempts=attempts_count.get(node_id, 0), owner=owners.get(node_id, "")),
                      "cost_usd": _float(node_cost.get(node_id)), "failure_role": role.as_dict() if role else None})
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
        # The attempt statuses the page reads as finished and as under way: the models' own sets.
        "statuses": {"finished": sorted(WorkNodeExecution.FINISHED_STATUSES),
                     "active": sorted(WorkNodeExecution.ACTIVE_STATUSES)},
        "run": {
            "run_id": str(run.run_id), "status": run.status, "manifest_version": run.manifest_version,
            "task_id": str(run.task_id), "error": run.error, "error_code": run.error_code,
            "max_cost_usd": _float(run.max_cost_usd),
        },
        "nodes": nodes,
        "edges": edges,
        "attempts": [
            {
                "node_exec_id": str(row["node_exec_id"]), "node_id": row["node_id"], "attempt": row["attempt"],
                "cause": row["cause"], "cause_node_id": row["cause_node_id"], "status": row["status"],
                "started_at": _iso(row["started_at"]), "finished_at": _iso(row["finished_at"]),
                "agent_calls": row["agent_calls"], "cost_usd": _float(row["cost_usd"]), "tokens": row["tokens"],
            }
            for row in rows
        ],
    }


def run_failure_roles(manifest: dict, statuses: Mapping[str, str]) -> dict[str, FailureRole]:
    """The failure role of each failed or blocked manifest node, by the status of its latest attempt
    (``statuses``): which are root causes, which failed or were blocked because of one."""
    nodes = [spec for spec in manifest.get("nodes", []) if isinstance(spec, dict) and "node_id" in spec]
    return failure_roles(
        dependencies={spec["node_id"]: list(spec.get("depends_on") or []) for spec in nodes},
        statuses={spec["node_id"]: statuses[spec["node_id"]] for spec in nodes if spec["node_id"] in statuses},
    )


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
        "org_node": owner or (row or {}).get("subagent_type") or "",
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


def _float(value: Decimal | None) -> float | None:
    return float(value) if value is not None else None


def _iso(value) -> str | None:
    return value.isoformat() if value else None


# --- The live consumers' reads ------------------------------------------------------------------------


def user_active(*, user_id: Any) -> bool:
    return get_user_model().objects.filter(pk=user_id, is_active=True).exists()


def execution_visible(*, node_exec_id: Any, user: AbstractBaseUser) -> bool:
    return WorkNodeExecution.objects.filter(pk=node_exec_id, run__task__project__memberships__user=user).exists()


def run_visible(*, run_id: Any, user: AbstractBaseUser) -> bool:
    return WorkGraphRun.objects.filter(pk=run_id, task__project__memberships__user=user).exists()


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


# --- One attempt, one planning call: as pages and the API show them -------------------------------------


def execution_detail(execution: WorkNodeExecution) -> dict[str, Any]:
    """One attempt as the DAG's side panel and the API show it: ids, status, timings, its prompt, output
    and judgment, and every attempt of its node (one query for those)."""
    attempts = (
        WorkNodeExecution.objects.filter(run_id=execution.run_id, node_id=execution.node_id)
        .order_by("attempt")
        .values("node_exec_id", "attempt", "status", "cause", "cause_node_id", "error", "judgment_result", "failure",
                "started_at", "finished_at")
    )
    output = execution.output_payload or {}
    return {
        "node_exec_id": execution.pk,
        "run_id": execution.run_id,
        "node_id": execution.node_id,
        "is_planning": execution.is_planning,
        "subagent_type": execution.subagent_type,
        "org_node": execution.subagent_type,
        "attempt": execution.attempt,
        "cause": execution.cause,
        "cause_node_id": execution.cause_node_id,
        "status": execution.status,
        "error": execution.error,
        "judgment_result": execution.judgment_result,
        "judgment": execution.judgment_result,
        "failure": execution.failure,
        "ready_at": execution.ready_at,
        "started_at": execution.started_at,
        "finished_at": execution.finished_at,
        "prompt": (execution.input_payload or {}).get("prompt", ""),
        # A planning call's answer is its raw response; a node's is its text.
        "output": output.get("raw_response", "") if execution.is_planning else output.get("text", ""),
        "cause_text": attempt_cause_text(execution.cause, execution.cause_node_id),
        "attempts": [_attempt_summary(attempt) for attempt in attempts],
        **accounting_of(execution),
    }


def _attempt_summary(attempt: dict[str, Any]) -> dict[str, Any]:
    return {
        **attempt,
        "cause_text": attempt_cause_text(attempt["cause"], attempt["cause_node_id"]),
        "reason": attempt_failure_reason(status=attempt["status"], error=attempt["error"],
                                         judgment_result=attempt["judgment_result"]),
    }


def planning_call_detail(call: WorkNodeExecution) -> dict[str, Any]:
    """One planning call as the planning inspector and the API show it: the prompt, the raw answer, the
    repair request and its answer, the extracted and the normalized manifest, notes and errors."""
    payload = call.output_payload or {}
    return {
        "execution": call,
        "node_exec_id": call.pk,
        "node_id": call.node_id,
        "org_node": call.subagent_type,
        "attempt": call.attempt,
        "status": call.status,
        "error": call.error,
        "prompt": (call.input_payload or {}).get("prompt", ""),
        "raw_response": payload.get("raw_response", ""),
        "repair_prompt": payload.get("repair_prompt"),
        "repair_response": payload.get("repair_response"),
        "extracted_manifest": payload.get("extracted_manifest"),
        "manifest": payload.get("manifest"),
        "normalization_notes": payload.get("normalization_notes") or [],
        "validation_errors": payload.get("validation_errors") or [],
        "new_node_ids": payload.get("new_node_ids") or [],
    }


def plan_commands(run: WorkGraphRun) -> list[dict[str, Any]]:
    """Every command the run's manifest runs (command nodes and command judgments), in manifest order:
    ``node_id``, ``runs_as`` (``node`` or ``judgment``), ``command`` (the argv as a shell would quote it,
    for reading; it runs without a shell) and ``timeout_seconds`` (the console's default when unset)."""
    return [
        {"node_id": listed["node_id"], "runs_as": listed["runs_as"], "command": shlex.join(listed["argv"]),
         "timeout_seconds": listed["timeout_seconds"] or settings.WORKGRAPH_COMMAND_TIMEOUT}
        for listed in manifest_lib.manifest_commands(run.graph_manifest or {})
    ]


def planning_calls(run: WorkGraphRun) -> list[dict[str, Any]]:
    """Every planning call of the run, oldest first, as ``planning_call_detail`` shapes it."""
    calls = WorkNodeExecution.objects.filter(run_id=run.pk, node_id__startswith=PLANNING_NODE_ID).order_by("created_at")
    return [planning_call_detail(call) for call in calls]
