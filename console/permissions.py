"""Who may see and do what. Objects of a project the user is not a member of answer 404, not 403.

What each role in a project may do is graphs.projects.roles' table (``ACTIONS``). Skill administration
and creating projects are global permissions.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.http import Http404

from graphs.models import Project, Task, WorkGraphRun, WorkNodeExecution
from graphs.projects.roles import ACTIONS, project_role

# Creating a project is not a role in one: Django's model permission, given by an administrator.
PROJECT_CREATE_PERMISSION = "graphs.add_project"


def can(role: str | None, action: str) -> bool:
    return role is not None and role in ACTIONS[action]


def require(role: str | None, action: str) -> None:
    if not can(role, action):
        raise PermissionDenied(f"your role ({role or 'none'}) may not {action.replace('_', ' ')}")


def may_create_projects(user: AbstractBaseUser) -> bool:
    return user.is_authenticated and user.has_perm(PROJECT_CREATE_PERMISSION)


def project_for_member(user: AbstractBaseUser, slug: str) -> tuple[Project, str]:
    return _member_or_404(user, Project.objects.filter(slug=slug).first(), lambda p: p.pk)


def audit_reader(user: AbstractBaseUser) -> bool:
    """Whether ``user`` reads the whole audit log and exports it: the console's administrators (staff)."""
    return user.is_authenticated and user.is_active and user.is_staff


def project_for_audit(user: AbstractBaseUser, slug: str) -> Project:
    """The project whose audit log ``user`` asks for: any, for an administrator; else one they lead
    (another member is refused, 403, and anyone else finds nothing, 404)."""
    if audit_reader(user):
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise Http404("not found")
        return project
    project, role = project_for_member(user, slug)
    require(role, "read_audit")
    return project


def task_for_member(user: AbstractBaseUser, task_id: Any) -> tuple[Task, str]:
    task = Task.objects.select_related("project").filter(pk=task_id).first()
    return _member_or_404(user, task, lambda t: t.project_id)


def run_for_member(user: AbstractBaseUser, run_id: Any, *, defer: tuple[str, ...] = ()) -> tuple[WorkGraphRun, str]:
    """The run and the user's role in its project (404 unless a member), its ``defer`` fields left unread."""
    run = WorkGraphRun.objects.select_related("task__project").defer(*defer).filter(pk=run_id).first()
    return _member_or_404(user, run, lambda r: r.task.project_id)


def execution_for_member(user: AbstractBaseUser, node_exec_id: Any) -> tuple[WorkNodeExecution, str]:
    execution = WorkNodeExecution.objects.select_related("run__task__project").filter(pk=node_exec_id).first()
    return _member_or_404(user, execution, lambda e: e.run.task.project_id)


def _member_or_404(user, obj, project_of):
    if obj is None:
        raise Http404("not found")
    role = project_role(user, project_of(obj))
    if role is None:
        raise Http404("not found")
    return obj, role
