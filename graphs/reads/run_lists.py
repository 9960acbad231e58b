"""The run lists: runs in flight, the runs page with its filters, and a run branch's changed files."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Lower
from django.utils import timezone

from graphs.models import (
    PLANNING_NODE_ID,
    AttemptChange,
    ProjectMembership,
    RunWorkspace,
    Task,
    WorkGraphRun,
    WorkNodeExecution,
)
from graphs.runs.accounting import NO_SPEND, Spend, spend_by_run
from graphs.runs.facts import ManifestNodeCount, RunProgress, runs_latest_first, runs_progress_counted


def runs_in_flight(user: AbstractBaseUser) -> QuerySet[WorkGraphRun]:
    active = [WorkGraphRun.Status.PLANNING, WorkGraphRun.Status.QUEUED, WorkGraphRun.Status.RUNNING,
              WorkGraphRun.Status.AWAITING_APPROVAL]
    return (
        WorkGraphRun.objects.filter(task__project__memberships__user=user, status__in=active)
        .select_related("task__project")
        .order_by("-created_at")
    )


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
    experiment: int | None = None,
    text_per_run: bool = False,
) -> QuerySet[WorkGraphRun]:
    """The runs of the projects the user is a member of, newest first, narrowed by each filter given.

    - ``org_node``: runs in which that org node worked — ran a node or made a planning call. A merged
      run spans several org nodes, and its ``stage`` names only the last to plan, so "the validator's
      runs" are those the validator took part in.
    - ``created_from`` / ``created_to``: the days (in the console's time zone) the run was created
      on, both included.
    - ``min_cost_usd``: runs whose attempts' summed ``cost_usd`` is at least that much; a run none of
      whose calls reported a cost has no sum, and is left out.
    - ``experiment``: the runs an experiment made of its cases (graphs.experiments).
    - ``text``: the task's title contains it, or the id of a node with an attempt in the run contains
      it (``coder`` and ``unit`` both find ``coder_unit``), in any case; a planned node that never ran
      is not found. Node ids are looked up in the attempts, never read out of manifests: on PostgreSQL
      from the trigram index on them (``execution_node_trigram``), which answers a substring as an
      exact id is answered from a b-tree. With ``text_per_run``, each run's own attempts are tested as
      the runs are read instead: for a search known to match thousands of runs, whose page is then
      found among the newest few hundred.

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
    if experiment is not None:
        runs = runs.filter(experiment_item__experiment_id=experiment)
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
        # The run's own sum of its attempts' costs (kept by graphs.runs.accounting), from its index.
        runs = runs.filter(cost_usd__gte=min_cost_usd)
    if text:
        # Two sets each found once and hashed (the tasks whose title holds it, the runs with an attempt of a
        # node whose id does), not a condition across the run and its joined task, for which PostgreSQL
        # would join every run to every task to test it, nor one correlated to each run, read per run —
        # unless asked: a search matching thousands of runs finds a page's sooner run by run, newest first.
        titled = Task.objects.filter(title__icontains=text).order_by().values("pk")
        if text_per_run:
            # A scalar subquery, which PostgreSQL runs for each run it reads; an EXISTS it may still hash.
            runs = runs.alias(node_found=Subquery(attempts.filter(node_id__icontains=text).order_by().values("pk")[:1]))
            nodes = Q(node_found__isnull=False)
        else:
            nodes = Q(pk__in=_runs_with_node_matching(text))
        runs = runs.filter(Q(task_id__in=titled) | nodes)
    return runs_latest_first(runs)


def runs_by_key(user: AbstractBaseUser, keys: list[Any]) -> list[WorkGraphRun]:
    """The runs of ``keys`` that the user may see, as ``runs_for_user`` gives them, in no order: a page
    whose runs' keys are known (``graphs.reads.paging.BoundedPaginator``) read by them alone."""
    return list(runs_for_user(user).filter(pk__in=keys).order_by())


def _runs_with_node_matching(text: str) -> QuerySet[WorkNodeExecution]:
    """The runs with an attempt of a node whose id contains ``text`` (any case), as one uncorrelated set:
    PostgreSQL finds the attempts in the trigram index once and hashes their runs, where a subquery
    correlated to each run would read that run's attempts for every run listed."""
    return WorkNodeExecution.objects.filter(node_id__icontains=text).order_by().values("run_id")


def run_list_org_nodes(user: AbstractBaseUser) -> list[str]:
    """The org nodes that worked (ran a node or planned) in the runs the user may see, by name: what the
    runs list's org node filter offers.

    One query, whatever the number of attempts: the distinct org nodes are walked one after the next in
    the (org node, run) index — a few probes, where a DISTINCT reads every attempt — and each is kept
    once its first attempt in a run the user may see is found, walking that index from its start.
    ``OFFSET 0`` keeps PostgreSQL from turning that search into a join of every attempt.
    """
    quote = connection.ops.quote_name
    attempts, runs, tasks, members = (quote(model._meta.db_table) for model in (
        WorkNodeExecution, WorkGraphRun, Task, ProjectMembership))
    # Only the models' quoted table names are formatted in; the user is a parameter.
    sql = f"""
        WITH RECURSIVE org_node(name) AS (
            SELECT MIN(subagent_type) FROM {attempts}
            UNION ALL
            SELECT (SELECT MIN(subagent_type) FROM {attempts} WHERE subagent_type > org_node.name)
            FROM org_node WHERE org_node.name IS NOT NULL
        )
        SELECT name FROM org_node WHERE name IS NOT NULL AND EXISTS (
            SELECT 1 FROM {attempts} attempt
            JOIN {runs} run ON run.run_id = attempt.run_id
            JOIN {tasks} task ON task.task_id = run.task_id
            JOIN {members} member ON member.project_id = task.project_id AND member.user_id = %s
            WHERE attempt.subagent_type = org_node.name
            LIMIT 1 OFFSET 0
        )
        ORDER BY name
    """  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(sql, [user.pk])
        return [name for (name,) in cursor.fetchall()]


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


@dataclass(frozen=True)
class MatchedAttempt:
    """An attempt of a node whose id the list was searched by: one of two attempts to compare."""

    node_exec_id: Any
    node_id: str
    attempt: int
    status: str


@dataclass(frozen=True)
class RunRow:
    """One run as the runs list shows it."""

    run: WorkGraphRun
    progress: RunProgress
    spend: Spend
    # How long it ran: start to finish, or so far while it has not finished; None before it starts.
    duration: timedelta | None
    # Searched by a part of a node id: the run's attempts of the nodes it matches (at most MATCHED_SHOWN).
    matched: list[MatchedAttempt] = field(default_factory=list)


# A row lists this many of the attempts a search matched; the run's graph has the rest.
MATCHED_SHOWN = 6


def run_rows(runs: Sequence[WorkGraphRun], *, node_text: str = "") -> list[RunRow]:
    """The runs (from ``runs_for_user``) with their progress and what they cost: two queries; a third
    with ``node_text``, the attempts of the nodes whose id contains it."""
    ids = [run.pk for run in runs]
    progress = runs_progress_counted(totals={run.pk: run.manifest_nodes for run in runs})
    spends = spend_by_run(WorkNodeExecution.objects.filter(run__in=ids))
    matched = _attempts_matching(ids, node_text) if node_text and ids else {}
    now = timezone.now()
    return [
        RunRow(run=run, progress=progress[run.pk], spend=spends.get(run.pk, NO_SPEND),
               duration=_run_duration(run, now=now), matched=matched.get(run.pk, []))
        for run in runs
    ]


def _attempts_matching(run_ids: list[Any], text: str) -> dict[Any, list[MatchedAttempt]]:
    # The page's runs' few attempts are read by run and their node ids tested one by one. Tested as
    # ``icontains`` (``UPPER(node_id) LIKE``), PostgreSQL would also read every attempt of every run whose
    # node id holds the text from the trigram index to intersect it with them: 22,000 for ``feature_4``.
    rows = (
        WorkNodeExecution.objects.filter(run__in=run_ids)
        .alias(node_lower=Lower("node_id")).filter(node_lower__contains=text.lower())
        .exclude(node_id__startswith=PLANNING_NODE_ID)
        .order_by("run_id", "node_id", "attempt")
        .values_list("run_id", "node_exec_id", "node_id", "attempt", "status")
    )
    matched: dict[Any, list[MatchedAttempt]] = defaultdict(list)
    for run_id, node_exec_id, node_id, attempt, status in rows:
        if len(matched[run_id]) < MATCHED_SHOWN:
            matched[run_id].append(MatchedAttempt(node_exec_id=node_exec_id, node_id=node_id, attempt=attempt,
                                                  status=status))
    return matched


def _run_duration(run: WorkGraphRun, *, now: datetime) -> timedelta | None:
    if run.started_at is None:
        return None
    if run.finished_at is not None:
        return run.finished_at - run.started_at
    return None if run.is_finished() else now - run.started_at


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
