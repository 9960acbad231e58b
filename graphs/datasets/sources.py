"""Where a case can come from: a task (with the commit its latest run started from) or one run, and which
runs a page offers to add — those that went wrong or needed a second try, the cases worth replaying."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Exists, OuterRef, Q

from graphs.models import RunWorkspace, Skill, Task, WorkGraphRun, WorkNodeExecution
from graphs.runs.facts import runs_latest_first

Cause = WorkNodeExecution.Cause
# A run that ended so, or one of whose nodes was sent back by a loop-back or a reviewer, is a case worth
# keeping: it shows where the agents' instructions fell short.
ADDABLE_STATUSES = (WorkGraphRun.Status.FAILED, WorkGraphRun.Status.CANCELLED)
SENT_BACK_CAUSES = (Cause.LOOP_BACK, Cause.DYNAMIC_LOOP_BACK, Cause.REVIEW)
# The fields a case copies of its task.
TASK_FIELDS = ("title", "goal_text", "deliverables", "acceptance_criteria", "constraints", "resources",
               "planning_mode")


@dataclass(frozen=True)
class CaseSource:
    """What a task or a run gives a case: its task's fields, and the commit its run started from (empty
    when no run of it has one). ``named`` is the field that named it: ``from_task`` or ``from_run``."""

    named: str
    task: Task
    run: WorkGraphRun | None
    fields: dict[str, Any]
    skill: Skill | None
    base_commit: str


def source_of_task(task: Task) -> CaseSource:
    """``task``, with the base commit of its latest run that has one (a run that never started has none)."""
    run = runs_latest_first(WorkGraphRun.objects.filter(task=task, workspace__isnull=False)).first()
    return _source(task, run, named="from_task")


def source_of_run(run: WorkGraphRun) -> CaseSource:
    """``run``'s task, with the commit the run started from (empty when it has no workspace)."""
    return _source(run.task, run, named="from_run")


def _source(task: Task, run: WorkGraphRun | None, *, named: str) -> CaseSource:
    commit = RunWorkspace.objects.filter(run=run).values_list("base_commit", flat=True).first() if run else None
    return CaseSource(named=named, task=task, run=run, fields={name: getattr(task, name) for name in TASK_FIELDS},
                      skill=task.skill, base_commit=commit or "")


def run_addable(*, status: str, has_workspace: bool, causes: Iterable[str]) -> bool:
    """Whether a page offers to add a run to a dataset, from what the page read of it already: it failed,
    was cancelled or had a node sent back (looped back, or by a reviewer, as its attempts' ``causes``
    say), and has a base commit to start from (its workspace)."""
    return has_workspace and (status in ADDABLE_STATUSES or any(cause in SENT_BACK_CAUSES for cause in causes))


def runs_addable(runs: Iterable[WorkGraphRun]) -> set[Any]:
    """The ids of ``runs`` a page offers to add to a dataset (``run_addable``'s rule), read in one query."""
    ids = [run.pk for run in runs]
    if not ids:
        return set()
    sent_back = WorkNodeExecution.objects.filter(run_id=OuterRef("pk"), cause__in=SENT_BACK_CAUSES)
    return set(WorkGraphRun.objects.filter(pk__in=ids, workspace__isnull=False)
               .filter(Q(status__in=ADDABLE_STATUSES) | Exists(sent_back)).values_list("pk", flat=True))
