"""Creating a task: the one way pages, the API and the collaboration endpoints make one."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser

from graphs.models import Project, Skill, Task


def task_create(
    *,
    project: Project,
    created_by: AbstractBaseUser | None,
    title: str,
    goal_text: str,
    deliverables: Sequence[str] = (),
    acceptance_criteria: Sequence[str] = (),
    acceptance_ids: Sequence[str] = (),
    constraints: Sequence[str] = (),
    resources: Sequence[str] = (),
    task_type: str = Task.TaskType.DYNAMIC,
    workflow_id: str = "",
    skill: Skill | None = None,
    planning_mode: str = Task.PlanningMode.GRAPH,
    hidden: bool = False,
) -> Task:
    """Create a task in ``project``. It starts ``draft``: its status follows its runs from then on. A ``hidden``
    task (an experiment's) is left out of task lists."""
    return Task.objects.create(
        project=project, created_by=created_by, title=title, goal_text=goal_text, deliverables=list(deliverables),
        acceptance_criteria=list(acceptance_criteria), acceptance_ids=list(acceptance_ids),
        constraints=list(constraints), resources=list(resources),
        task_type=task_type, workflow_id=workflow_id, skill=skill, planning_mode=planning_mode,
        hidden=hidden,
    )
