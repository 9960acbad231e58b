"""Reads for the skill pages: the filtered list with its usage counts, the owners, and where a skill was used."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from graphs.models import ProjectMembership, Skill, SkillRevision, Task, WorkGraphRun, WorkNodeExecution

USAGE_LIMIT = 200


def skills_for_admin(*, status: str = "", owner: str = "", text: str = "") -> QuerySet[Skill]:
    """Skills matching the filters, each annotated with revision, execution and run counts."""
    executions = WorkNodeExecution.objects.filter(skill_ref=OuterRef("pk"))
    skills = Skill.objects.annotate(
        revision_count=_count_of(SkillRevision.objects.filter(skill=OuterRef("pk")), group="skill", column="pk"),
        execution_count=_count_of(executions, group="skill_ref", column="pk"),
        run_count=_count_of(executions, group="skill_ref", column="run", distinct=True),
    )
    if status:
        skills = skills.filter(status=status)
    if owner:
        skills = skills.filter(owner_org_node=owner)
    if text:
        skills = skills.filter(
            Q(skill_id__icontains=text) | Q(name__icontains=text) | Q(description__icontains=text)
            | Q(body__icontains=text)
        )
    return skills.order_by("skill_id")


def _count_of(rows: QuerySet, *, group: str, column: str, distinct: bool = False) -> Coalesce:
    # A correlated subquery per count: joining executions and revisions in one query would multiply rows.
    counts = rows.order_by().values(group).annotate(n=Count(column, distinct=distinct)).values("n")
    return Coalesce(Subquery(counts[:1], output_field=IntegerField()), 0)


def skill_owners() -> list[str]:
    """The distinct owner org nodes of all skills, for the list filter."""
    return list(
        Skill.objects.exclude(owner_org_node="").order_by("owner_org_node")
        .values_list("owner_org_node", flat=True).distinct()
    )


@dataclass(frozen=True)
class SkillUsage:
    """Where a skill was used, as far as the viewer may see: the node executions (newest first, at most
    ``USAGE_LIMIT``), runs and tasks of the viewer's projects, and how many of each other projects hold."""

    executions: list[WorkNodeExecution]
    execution_count: int
    runs: list[WorkGraphRun]
    tasks: list[Task]
    hidden_execution_count: int
    hidden_run_count: int
    hidden_task_count: int


def skill_usage(*, skill: Skill, viewer: AbstractBaseUser) -> SkillUsage:
    """The executions and runs that referenced ``skill`` and the tasks that chose it, in ``viewer``'s
    projects; of the others only their number (six queries).

    Managing skills is no project membership: titles and names of other projects stay hidden.
    """
    projects = ProjectMembership.objects.filter(user=viewer).values("project_id")
    executions = WorkNodeExecution.objects.filter(skill_ref=skill)
    runs = WorkGraphRun.objects.filter(pk__in=executions.values("run_id"))
    tasks = Task.objects.filter(skill=skill)
    execution_counts = _visible_counts(executions, Q(run__task__project__in=projects))
    run_counts = _visible_counts(runs, Q(task__project__in=projects))
    task_counts = _visible_counts(tasks, Q(project__in=projects))
    return SkillUsage(
        executions=list(
            executions.filter(run__task__project__in=projects).select_related("run__task__project")
            .order_by("-created_at")[:USAGE_LIMIT]
        ),
        execution_count=execution_counts["visible"],
        runs=list(runs.filter(task__project__in=projects).select_related("task__project").order_by("-created_at")),
        tasks=list(tasks.filter(project__in=projects).select_related("project").order_by("-created_at")[:USAGE_LIMIT]),
        hidden_execution_count=execution_counts["total"] - execution_counts["visible"],
        hidden_run_count=run_counts["total"] - run_counts["visible"],
        hidden_task_count=task_counts["total"] - task_counts["visible"],
    )


def _visible_counts(rows: QuerySet, visible: Q) -> dict[str, int]:
    return rows.aggregate(total=Count("pk"), visible=Count("pk", filter=visible))
