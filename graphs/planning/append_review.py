"""Appends wait for a reviewer: in a project that requires plan approval, the nodes an append adds — a
pipeline's coder or validator stage, a gap-driven round, an append asked for through the API or the
``plan`` command — get no attempt, so nothing of them runs, until a reviewer approves them, as the
first plan's nodes wait for theirs.

``append_review_open`` is called by the merge of an append (``graphs.planning.plan_store``), under the run's lock
and in the merge's transaction: no scheduler ever sees the nodes merged and the run not waiting. The
decisions are ``graphs.engine.review``'s; the reads here are what the pages and the API show of a wait.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import F

from graphs.domain import manifest_nodes
from graphs.logs.store import log_append
from graphs.models import AppendReview, WorkGraphRun, WorkNodeExecution
from graphs.runs.status import run_status_set

RunStatus = WorkGraphRun.Status
# What a run awaiting approval waits for: its fresh plan, or one or more appends.
PLAN_STAGE = "plan"
APPEND_STAGE = "append"
# How much of an agent node's prompt the review shows: enough to tell what it is asked, not all of it.
PROMPT_SHOWN_CHARS = 300


def append_review_open(
    *, run: WorkGraphRun, planning_execution: WorkNodeExecution, new_node_ids: list[str]
) -> AppendReview | None:
    """Hold the nodes an append just merged into ``run`` for a reviewer when its project requires plan
    approval: the run goes ``awaiting_approval``. Call under the run's lock, in the merge's transaction.
    Return the review opened, or None when none is needed.

    An append merged while the run's own plan is still planned or waits for its reviewer opens none:
    the plan's approval covers the manifest as it is then. One merged while another append waits joins
    the wait: the reviewer's one decision covers both.
    """
    if not run.task.project.require_plan_approval or not new_node_ids:
        return None
    waiting = run.append_reviews.filter(status=AppendReview.Status.PENDING).order_by("created_at").first()
    if run.status == RunStatus.PLANNING or (run.status == RunStatus.AWAITING_APPROVAL and waiting is None):
        return None
    review = AppendReview.objects.create(
        run=run, planning_execution=planning_execution, new_node_ids=new_node_ids,
        resume_status=waiting.resume_status if waiting is not None else run.status,
    )
    if waiting is None:
        run_status_set(run=run, status=RunStatus.AWAITING_APPROVAL, allowed_from=[RunStatus.READY, RunStatus.RUNNING])
    log_append(execution=planning_execution, event="append_awaiting_approval", new_node_ids=new_node_ids)
    return review


def append_reviews_waiting(run_id: Any) -> list[AppendReview]:
    """The run's appends waiting for a reviewer, oldest first, each read with its planning call's
    ``org_node``, ``gap_round`` (None but for a gap-driven round) and ``call_status``."""
    return _with_call(AppendReview.objects.filter(run_id=run_id, status=AppendReview.Status.PENDING))


def append_reviews_of(run_id: Any) -> list[AppendReview]:
    """Every append of the run that waited for a reviewer, oldest first, read as ``append_reviews_waiting``
    reads them, with their reviewer."""
    return _with_call(AppendReview.objects.filter(run_id=run_id).select_related("reviewed_by"))


def append_label(review: AppendReview) -> str:
    """How pages name an append (read by ``append_reviews_of``): "the coder's append", or once a
    gap-driven round's planning call is recorded, "the planner's gap round 2"."""
    if review.gap_round is not None:
        return f"the {review.org_node}'s gap round {review.gap_round}"
    return f"the {review.org_node}'s append"


def appends_label(reviews: Iterable[AppendReview]) -> str:
    """The names of several appends, joined by "and"."""
    return " and ".join(append_label(review) for review in reviews)


@dataclass(frozen=True)
class ApprovalWait:
    """What a run awaiting approval waits for: ``stage`` "plan" or "append", and its words."""

    stage: str
    label: str
    # The planning calls of the appends waiting (none for a plan).
    planning_execution_ids: list[Any] = field(default_factory=list)


def run_approval_wait(run: WorkGraphRun) -> ApprovalWait | None:
    """What ``run`` waits for a reviewer to approve; None unless it is awaiting approval (one query then)."""
    if run.status != RunStatus.AWAITING_APPROVAL:
        return None
    waiting = append_reviews_waiting(run.pk)
    if not waiting:
        return ApprovalWait(stage=PLAN_STAGE, label="the plan")
    return ApprovalWait(stage=APPEND_STAGE, label=appends_label(waiting),
                        planning_execution_ids=[review.planning_execution_id for review in waiting])


@dataclass(frozen=True)
class AppendedNode:
    """One node an append adds, as its reviewer reads it."""

    node_id: str
    is_command: bool
    # "command" for a command node, else the org node whose agent does it.
    runs: str
    # What an agent node is asked: its prompt's start, or its catalog artifact type.
    work: str
    depends_on: list[str]
    # The commands it runs — its own, its judgment's, a validator's test script — as
    # ``graphs.reads.executions.plan_commands`` shapes them.
    commands: list[dict[str, Any]]


@dataclass(frozen=True)
class AppendShown:
    """An append that waited (or waits) for a reviewer, with the nodes it adds, command nodes first."""

    review: AppendReview
    label: str
    nodes: list[AppendedNode]

    @property
    def waiting(self) -> bool:
        return self.review.status == AppendReview.Status.PENDING

    @property
    def runs_commands(self) -> bool:
        return any(node.commands for node in self.nodes)


def run_appends_shown(run: WorkGraphRun) -> list[AppendShown]:
    """Every append of ``run`` that waited for a reviewer, oldest first, with what it adds: the nodes
    that run a command of their own, then those judged by one, then the others, each group in manifest
    order — what can run a program on the project's machine is read first. One query."""
    specs = [node for node in (run.graph_manifest or {}).get("nodes", []) if isinstance(node, dict)]
    shown = []
    for review in append_reviews_of(run.pk):
        added = set(review.new_node_ids)
        nodes = [_appended_node(spec, org_node=review.org_node, manifest=run.graph_manifest)
                 for spec in specs if spec.get("node_id") in added]
        nodes.sort(key=_reading_order)
        shown.append(AppendShown(review=review, label=append_label(review), nodes=nodes))
    return shown


def _with_call(reviews) -> list[AppendReview]:
    return list(reviews.annotate(
        org_node=F("planning_execution__subagent_type"),
        gap_round=F("planning_execution__output_payload__gap__round"),
        call_status=F("planning_execution__status"),
    ).order_by("created_at"))


def _appended_node(spec: dict, *, org_node: str, manifest: dict) -> AppendedNode:
    # The org node the engine reads for the node: its own subagent_type, else the append's planner.
    planned_by = str(spec.get("subagent_type") or org_node)
    commands = [
        {"node_id": spec["node_id"], "runs_as": listed["runs_as"], "command": shlex.join(listed["argv"]),
         "timeout_seconds": listed["timeout_seconds"] or settings.WORKGRAPH_COMMAND_TIMEOUT}
        for listed in manifest_nodes.node_commands_planned(spec, org_node=planned_by, manifest=manifest)
    ]
    is_command = manifest_nodes.is_command_node(spec)
    work = "" if is_command else str(spec.get("task_prompt") or spec.get("artifact_type") or "")
    if len(work) > PROMPT_SHOWN_CHARS:
        work = work[:PROMPT_SHOWN_CHARS] + "…"
    return AppendedNode(
        node_id=spec["node_id"], is_command=is_command,
        runs="command" if is_command else planned_by,
        work=work, depends_on=list(spec.get("depends_on") or []), commands=commands,
    )


def _reading_order(node: AppendedNode) -> int:
    if node.is_command:
        return 0
    return 1 if node.commands else 2
