"""The task lists and the task page's header: tasks a user may see, each task's newest run and its progress,
what tasks and projects cost, and which acceptance criteria have a passing case."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from graphs.domain.case_manifests import (
    TEST_CASE_MANIFEST,
    CriterionCoverage,
    acceptance_criteria_with_ids,
    case_manifest_in,
    criteria_coverage,
)
from graphs.models import Artifact, Project, Task, WorkGraphRun, WorkNodeExecution
from graphs.runs.accounting import NO_SPEND, Spend, spend_by_project, spend_by_task, spend_of
from graphs.runs.facts import RunProgress, runs_progress


def tasks_for_user(
    user: AbstractBaseUser, *, project_slug: str = "", status: str = "", text: str = ""
) -> QuerySet[Task]:
    # An experiment's own tasks are its measurement, no work of the project's (graphs.models.experiments).
    tasks = Task.objects.filter(project__memberships__user=user, hidden=False).select_related("project")
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


def task_criteria_coverage(task: Task, artifacts: Sequence[Artifact]) -> list[CriterionCoverage] | None:
    """Which of the task's acceptance criteria (by id) have a passing case, by the newest test case
    manifest among ``artifacts`` (the task's, newest first, with their runs); None when there is none.
    No query: ``artifacts`` are read as they are."""
    latest = next((artifact for artifact in artifacts if artifact.artifact_type == TEST_CASE_MANIFEST), None)
    if latest is None:
        return None
    return criteria_coverage(acceptance_criteria_with_ids(task.acceptance_criteria), case_manifest_in(latest.content),
                             run_succeeded=latest.run.status == WorkGraphRun.Status.SUCCEEDED)
