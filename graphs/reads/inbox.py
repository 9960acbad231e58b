"""What waits on people: the viewer's inbox, and the count the navigation shows.

Four kinds of item, each shown only to the roles that may act on it:

- ``approval`` — a plan or appends waiting for a reviewer (reviewers and leads of the run's project);
- ``change_review`` — an attempt's change waiting for a reviewer (``awaiting_review``: reviewers and leads);
- ``external`` — an external node's attempt waiting for its report (leads: a report needs ``start_run``);
- ``budget`` — a run its budget stopped (``budget_exceeded``), while it is still its task's latest run
  (leads: they may raise the budget and resume it, ``graphs.engine.budget_resume``). A newer run of the
  task answers the stop another way, so the stop leaves the inbox then.

The list costs a fixed number of queries however many items there are; the count costs one. Which run
events may change an inbox is ``inbox_event_may_change``'s to say: the inbox sockets follow it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery, Sum

from graphs.domain import manifest_graph
from graphs.models import (
    EXTERNAL_WORKER,
    PLANNING_NODE_ID,
    AppendReview,
    ProjectMembership,
    WorkGraphRun,
    WorkNodeExecution,
)
from graphs.planning.append_review import appends_label
from graphs.projects.roles import ACTIONS

RunStatus = WorkGraphRun.Status
Status = WorkNodeExecution.Status

APPROVAL, EXTERNAL, BUDGET, CHANGE_REVIEW = "approval", "external", "budget", "change_review"
# Who an item waits on: the roles that may act on it (the API takes a report from those who may start a run).
REVIEW_ROLES = ACTIONS["review_plan"]
CHANGE_REVIEW_ROLES = ACTIONS["review_change"]
REPORT_ROLES = ACTIONS["start_run"]
BUDGET_ROLES = ACTIONS["raise_budget"]
# Spend is stored to four places; a sum on SQLite comes back with more.
CENTS_OF_A_CENT = Decimal("0.0001")


@dataclass(frozen=True)
class InboxItem:
    """One thing waiting on the viewer: what it is, since when, and what it holds up."""

    kind: str
    since: datetime
    run_id: Any
    task_id: Any
    task_title: str
    project_slug: str
    project_name: str
    # What waits, in words: "the plan", "the coder's append", "node deploy's report", "the run's budget".
    label: str
    # How many of the run's nodes cannot go on until the item is dealt with.
    nodes_waiting: int
    # The attempt waiting for its report or its review (external and change_review items only).
    node_exec_id: Any = None
    node_id: str = ""
    # The run's budget and what its agent calls cost (budget items only).
    budget_usd: Decimal | None = None
    spent_usd: Decimal | None = None


def inbox_items(user: AbstractBaseUser) -> list[InboxItem]:
    """Everything waiting on ``user``'s roles, oldest first. Six queries, whatever the number of items."""
    if not user.is_authenticated:
        return []
    roles = dict(ProjectMembership.objects.filter(user=user).values_list("project_id", "role"))
    reviewing = [project for project, role in roles.items() if role in REVIEW_ROLES]
    reporting = [project for project, role in roles.items() if role in REPORT_ROLES]
    raising = [project for project, role in roles.items() if role in BUDGET_ROLES]
    changes = [project for project, role in roles.items() if role in CHANGE_REVIEW_ROLES]
    items = _approvals(reviewing) + _external_waits(reporting) + _budget_stops(raising) + _change_reviews(changes)
    items.sort(key=lambda item: item.since)
    return items


def inbox_count(user: AbstractBaseUser) -> int:
    """How many items ``inbox_items`` lists for ``user``: one query, none for a visitor."""
    if not user.is_authenticated:
        return 0
    # A branch per kind, each found from its partial index (a few rows) before it is joined to the viewer's
    # memberships: across an OR of kinds PostgreSQL would walk every task of the viewer's projects instead.
    member = {"task__project__memberships__user": user}
    approvals = WorkGraphRun.objects.filter(
        _approval_q(), task__project__memberships__role__in=REVIEW_ROLES, **member
    ).order_by().values("pk")
    stops = WorkGraphRun.objects.filter(
        _budget_q(), task__project__memberships__role__in=BUDGET_ROLES, **member
    ).order_by().values("pk")
    waits = _waiting_reports().filter(
        run__task__project__memberships__user=user, run__task__project__memberships__role__in=REPORT_ROLES
    ).order_by().values("pk")
    changes = WorkNodeExecution.objects.filter(
        status=Status.AWAITING_REVIEW, run__task__project__memberships__user=user,
        run__task__project__memberships__role__in=CHANGE_REVIEW_ROLES,
    ).order_by().values("pk")
    return approvals.union(stops, waits, changes, all=True).count()


# An attempt pending or queued has only just been made and waits on no one: moving there starts no item
# and ends none. Any other move of an attempt may: an external node's attempt waits for its report while
# it runs and stops waiting as it ends, and a new run's first planning call answers its task's budget stop.
_BEFORE_ANY_WAIT = frozenset({Status.PENDING, Status.QUEUED})


def inbox_event_may_change(event: Mapping[str, Any]) -> bool:
    """Whether a run event (``graphs.logs.events``) may change someone's inbox: any move of a run's status
    (into or out of a wait for approval or a budget stop) and any move of an attempt but into pending or
    queued. Log lines, progress and the other events change no inbox."""
    if event.get("event") == "run_status":
        return True
    if event.get("event") == "nodes":
        return any(node.get("status") not in _BEFORE_ANY_WAIT for node in event.get("nodes", []))
    return False


def _approval_q() -> Q:
    return Q(status=RunStatus.AWAITING_APPROVAL)


def _budget_q() -> Q:
    newer = WorkGraphRun.objects.filter(task_id=OuterRef("task_id"), created_at__gt=OuterRef("created_at"))
    return Q(status=RunStatus.FAILED, error_code=WorkGraphRun.StopCode.BUDGET_EXCEEDED) & ~Q(Exists(newer))


def _waiting_reports() -> QuerySet[WorkNodeExecution]:
    return WorkNodeExecution.objects.filter(status=Status.RUNNING, worker=EXTERNAL_WORKER, deadline_at__isnull=False)


def _about(run: WorkGraphRun) -> dict[str, Any]:
    task = run.task
    return {"run_id": run.pk, "task_id": task.pk, "task_title": task.title,
            "project_slug": task.project.slug, "project_name": task.project.name}


def _approvals(projects: list[Any]) -> list[InboxItem]:
    """Two queries: the runs awaiting approval, then their waiting appends."""
    if not projects:
        return []
    planned = WorkNodeExecution.objects.filter(run_id=OuterRef("pk"), node_id__startswith=PLANNING_NODE_ID)
    runs = list(
        WorkGraphRun.objects.filter(_approval_q(), task__project_id__in=projects)
        .select_related("task__project")
        .annotate(planned_at=Subquery(planned.order_by("-finished_at").values("finished_at")[:1]))
    )
    waiting: dict[Any, list[AppendReview]] = {}
    reviews = (
        AppendReview.objects.filter(run_id__in=[run.pk for run in runs], status=AppendReview.Status.PENDING)
        .annotate(org_node=F("planning_execution__subagent_type"),
                  gap_round=F("planning_execution__output_payload__gap__round"))
        .order_by("created_at")
    )
    for review in reviews:
        waiting.setdefault(review.run_id, []).append(review)
    items = []
    for run in runs:
        appends = waiting.get(run.pk, [])
        if appends:
            label = appends_label(appends)
            nodes = len({node_id for review in appends for node_id in review.new_node_ids})
            since = appends[0].created_at
        else:
            label = "the plan"
            nodes = len(manifest_graph.manifest_node_ids(run.graph_manifest))
            since = run.planned_at or run.created_at
        items.append(InboxItem(kind=APPROVAL, since=since, label=label, nodes_waiting=nodes, **_about(run)))
    return items


def _external_waits(projects: list[Any]) -> list[InboxItem]:
    """One query: the attempts waiting for a report, with their runs."""
    if not projects:
        return []
    rows = _waiting_reports().filter(run__task__project_id__in=projects).select_related("run__task__project")
    items = []
    for execution in rows:
        run = execution.run
        try:
            behind = manifest_graph.downstream_of(run.graph_manifest, execution.node_id)
        except KeyError:  # an attempt of a node no longer in the manifest holds up nothing after it
            behind = set()
        items.append(InboxItem(
            kind=EXTERNAL, since=execution.started_at or execution.created_at,
            label=f"node {execution.node_id}'s report", nodes_waiting=len(behind) + 1,
            node_exec_id=execution.pk, node_id=execution.node_id, **_about(run),
        ))
    return items


def _budget_stops(projects: list[Any]) -> list[InboxItem]:
    """One query: the runs stopped by their budget, with their spend and how many nodes did not finish."""
    if not projects:
        return []
    done = Q(executions__status__in=[Status.SUCCEEDED, Status.PARTIAL]) & ~Q(
        executions__node_id__startswith=PLANNING_NODE_ID)
    runs = (
        WorkGraphRun.objects.filter(_budget_q(), task__project_id__in=projects)
        .select_related("task__project")
        .annotate(spent=Sum("executions__cost_usd"),
                  nodes_done=Count("executions__node_id", filter=done, distinct=True))
    )
    items = []
    for run in runs:
        total = len(manifest_graph.manifest_node_ids(run.graph_manifest))
        items.append(InboxItem(
            kind=BUDGET, since=run.finished_at or run.created_at, label="the run's budget",
            nodes_waiting=max(total - run.nodes_done, 0), budget_usd=run.max_cost_usd,
            spent_usd=Decimal(run.spent or 0).quantize(CENTS_OF_A_CENT), **_about(run),
        ))
    return items



def _change_reviews(projects: list[Any]) -> list[InboxItem]:
    """One query: the attempts whose change waits for a reviewer, with their runs."""
    if not projects:
        return []
    rows = (WorkNodeExecution.objects.filter(status=Status.AWAITING_REVIEW, run__task__project_id__in=projects)
            .select_related("run__task__project").defer("input_payload", "output_payload"))
    items = []
    for execution in rows:
        run = execution.run
        try:
            behind = manifest_graph.downstream_of(run.graph_manifest, execution.node_id)
        except KeyError:
            behind = set()
        items.append(InboxItem(
            kind=CHANGE_REVIEW, since=execution.finished_at or execution.created_at,
            label=f"node {execution.node_id}'s change", nodes_waiting=len(behind) + 1,
            node_exec_id=execution.pk, node_id=execution.node_id, **_about(run),
        ))
    return items
