"""The task page's to-do tree: each run's planning calls, then its nodes grouped by the stage that planned
them (a run of many nodes folded by stage, each stage's nodes on a page of their own), and its failed
attempts grouped by category."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Case, F, QuerySet, When

from graphs.domain import manifest_graph
from graphs.domain.failure_roles import FailureRole
from graphs.domain.failures import CATEGORIES, FailureClassification
from graphs.models import PLANNING_NODE_ID, DagSpec, RunWorkspace, Task, WorkGraphRun, WorkNodeExecution
from graphs.planning.append_review import ApprovalWait, run_approval_wait
from graphs.planning.dag_specs import IMPORT_ORG_NODE
from graphs.reads.graph import NOT_STARTED, run_failure_roles
from graphs.runs.accounting import Spend, spend_by_run
from graphs.runs.facts import RunProgress, latest_by_node, node_owners, progress_from_statuses, runs_latest_first


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
# Of a folded run's attempts, the columns only its failed ones are read with (the failures list them).
_FAILED_ONLY_COLUMNS = frozenset(
    {"node_exec_id", "cause_node_id", "judgment_result", "error", "failure", "started_at", "finished_at"}
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


# Past this many work nodes a run's to-do tree is folded by stage: each stage says how far its nodes got
# and links to its own page, which lists them a page at a time. Every row of a 10,000-node run is 10 MB
# of page, rendered in seconds, for a lead who reads the stages and the failures.
FOLD_ABOVE_NODES = 300


@dataclass
class Stage:
    org_node: str
    planning: list[WorkNodeExecution]
    nodes: list[TreeNode]
    # A folded run's stage holds no node: how far its nodes are, counted from their latest statuses.
    counted: RunProgress | None = None

    def progress(self) -> RunProgress:
        """How far the stage's nodes are, as the run's own progress counts them."""
        if self.counted is not None:
            return self.counted
        return progress_from_statuses((node.status for node in self.nodes if node.attempts), total=len(self.nodes))

    @property
    def node_count(self) -> int:
        return self.counted.total if self.counted is not None else len(self.nodes)

    @property
    def title(self) -> str:
        return stage_title(self.org_node)


def stage_title(org_node: str) -> str:
    """A stage's heading in words: an imported DAG spec's nodes are its own stage, any other is named after
    its org node ("code_reviewer" reads "Code reviewer")."""
    if org_node == IMPORT_ORG_NODE:
        return "Imported DAG spec"
    words = org_node.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:] if words else org_node


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
    # Whether the run was made from an imported DAG spec (the import, or a run of it again).
    dag_spec: bool = False
    # The run's artifacts, one per node and type (graphs.reads.task_runs.runs_artifacts); the page sets them.
    artifacts: list[Any] = field(default_factory=list)
    # What sent its nodes' attempts (graphs.models.WorkNodeExecution.cause), whether its stages hold nodes or not.
    causes: set[str] = field(default_factory=set)

    @property
    def folded(self) -> bool:
        """Whether the page shows each stage's progress and a link to its nodes, not every node."""
        return self.progress.total > FOLD_ABOVE_NODES


def task_run_trees(task: Task, *, fold: bool = True) -> list[RunTree]:
    """Every run of the task as a to-do tree: planning calls, then nodes grouped by the stage that planned them.

    With ``fold``, a run of more than ``FOLD_ABOVE_NODES`` nodes is read folded: its stages count their
    nodes (``Stage.counted``) and hold none, and only its failed attempts are read whole.

    Six queries whatever the number of runs and nodes, seven with runs of both sizes: the runs, their
    planning calls (with the node ids each added, which say which stage planned which node), their node
    attempts as plain values (of a folded run's, only the failed ones whole, the rest their status and
    cause; runs of both sizes take one query each), what each run's agent calls cost, summed by the
    database, their branches and which were made from a DAG spec; and one more for a run awaiting
    approval, what it waits for.
    """
    runs = list(runs_latest_first(task.runs.all()))
    in_runs = WorkNodeExecution.objects.filter(run__in=runs).order_by("created_at", "attempt")
    trees = _trees(runs, in_runs, fold=fold)
    spends = spend_by_run(in_runs)
    workspaces = {row.run_id: row for row in RunWorkspace.objects.filter(run__in=runs).defer("diff", "files")}
    from_specs = set(DagSpec.objects.filter(run__in=runs).values_list("run_id", flat=True))
    for index, tree in enumerate(trees):
        tree.spend = spends.get(tree.run.pk)
        tree.workspace = workspaces.get(tree.run.pk)
        # Runs are newest first: the one before this run is the next tree.
        tree.previous_run = trees[index + 1].run if index + 1 < len(trees) else None
        tree.approval_wait = run_approval_wait(tree.run)
        tree.dag_spec = tree.run.pk in from_specs
    return trees


def run_stage(run: WorkGraphRun, org_node: str) -> Stage | None:
    """The stage of ``run`` that ``org_node`` planned, with its nodes in the tree's order (two queries);
    None when no stage of the run is that org node's."""
    in_run = WorkNodeExecution.objects.filter(run=run).order_by("created_at", "attempt")
    [tree] = _trees([run], in_run)
    return next((stage for stage in tree.stages if stage.org_node == org_node), None)


def _trees(runs: list[WorkGraphRun], in_runs: QuerySet[WorkNodeExecution], *, fold: bool = False) -> list[RunTree]:
    """Each run's tree from ``in_runs`` (the runs' attempts): its planning calls, and its node attempts as
    plain values; with ``fold``, a run of many nodes from its attempts' statuses and its failed attempts."""
    planning: dict[Any, list[WorkNodeExecution]] = defaultdict(list)
    # Of a planning call's payload, the tree needs which nodes it added: the rest holds the agent's
    # answer and the manifest twice over, three times what the run's own manifest weighs.
    calls = in_runs.filter(node_id__startswith=PLANNING_NODE_ID).defer("input_payload", "output_payload")
    for call in calls.annotate(new_node_ids=F("output_payload__new_node_ids")):
        planning[call.run_id].append(call)
    nodes = in_runs.exclude(node_id__startswith=PLANNING_NODE_ID)
    folded = {run.pk for run in runs if fold and len(manifest_graph.manifest_node_ids(run.graph_manifest or {}))
              > FOLD_ABOVE_NODES}
    attempts: dict[Any, list[TreeAttempt]] = defaultdict(list)
    if len(folded) < len(runs):
        for run_id, *values in nodes.exclude(run_id__in=folded).values_list("run_id", *_TREE_ATTEMPT_COLUMNS):
            attempts[run_id].append(TreeAttempt(*values))
    states: dict[Any, list[tuple[str, int, str, str]]] = defaultdict(list)
    if folded:
        # Building 10,000 attempts, their times and payloads, cost the page more than all else: a folded
        # run's stages need each attempt's status, and its failures only the failed attempts whole.
        failed = WorkNodeExecution.Status.FAILED
        whole_if_failed = {f"{column}_if_failed": Case(When(status=failed, then=F(column)),
                                                       output_field=WorkNodeExecution._meta.get_field(column))
                           for column in _FAILED_ONLY_COLUMNS}
        rows = nodes.filter(run_id__in=folded).annotate(**whole_if_failed).values_list(
            "run_id", *(f"{column}_if_failed" if column in _FAILED_ONLY_COLUMNS else column
                        for column in _TREE_ATTEMPT_COLUMNS))
        for run_id, *values in rows:
            row = TreeAttempt(*values)
            states[run_id].append((row.node_id, row.attempt, row.status, row.cause))
            if row.status == failed:
                attempts[run_id].append(row)
    return [
        _folded_tree(run, planning[run.pk], states[run.pk], attempts[run.pk]) if run.pk in folded
        else _run_tree(run, planning[run.pk], attempts[run.pk])
        for run in runs
    ]


def _folded_tree(run: WorkGraphRun, planning: list[WorkNodeExecution], states: list[tuple[str, int, str, str]],
                 failed: list[TreeAttempt]) -> RunTree:
    """A run's tree folded by stage, from each attempt's ``states`` (node id, attempt, status, cause) and
    its ``failed`` attempts: the same stages, progress and failures as ``_run_tree``'s, without a node."""
    manifest = run.graph_manifest or {}
    node_ids = manifest_graph.manifest_node_ids(manifest)
    in_manifest = set(node_ids)
    latest: dict[str, tuple[int, str]] = {}
    causes: set[str] = set()
    for node_id, attempt, status, cause in states:
        if node_id in in_manifest:
            causes.add(cause)
        if node_id not in latest or attempt > latest[node_id][0]:
            latest[node_id] = (attempt, status)
    statuses = {node_id: status for node_id, (_, status) in latest.items()}
    roles = run_failure_roles(manifest, statuses)
    owner = node_owners(((row.status, row.subagent_type, row.new_node_ids) for row in planning), manifest)
    members: dict[str, list[str]] = defaultdict(list)
    for node_id in node_ids:
        members[owner.get(node_id, "unassigned")].append(node_id)
    stage_order = list(members)
    if len(members) > 1:
        # Stages come in the order of their first node in the run's order, which only then needs walking.
        stage_order = list(dict.fromkeys(owner.get(node_id, "unassigned")
                                         for node_id in manifest_graph.topological_order(manifest)))
    planning_by_org: dict[str, list[WorkNodeExecution]] = defaultdict(list)
    for row in planning:
        planning_by_org[row.subagent_type].append(row)
    stage_order += [org for org in planning_by_org if org not in members]
    stages = [
        Stage(org_node=org, planning=planning_by_org.get(org, []), nodes=[],
              counted=progress_from_statuses((statuses[node_id] for node_id in members.get(org, [])
                                              if node_id in statuses), total=len(members.get(org, []))))
        for org in stage_order
    ]
    progress = progress_from_statuses((statuses[node_id] for node_id in node_ids if node_id in statuses),
                                      total=len(node_ids))
    # Only the failed attempts are read: a node's role marks its failed attempt when that is its latest.
    failed_roles = {node_id: role for node_id, role in roles.items() if statuses.get(node_id) == "failed"}
    return RunTree(run=run, planning=planning, stages=stages, progress=progress, causes=causes,
                   failures=failures_by_category([*planning, *failed], roles=failed_roles))


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
                   failures=failures_by_category([*planning, *attempts], roles=roles),
                   causes={row.cause for node_id in order for row in by_node.get(node_id, [])})
