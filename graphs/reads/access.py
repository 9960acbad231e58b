"""Who may see what: the projects a user is a member of, and the visibility checks the live consumers make
(a user's role in one is graphs.projects.roles' to say)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from graphs.models import Project, WorkGraphRun, WorkNodeExecution


def projects_for_user(user: AbstractBaseUser) -> QuerySet[Project]:
    return Project.objects.filter(memberships__user=user).distinct()


def user_active(*, user_id: Any) -> bool:
    return get_user_model().objects.filter(pk=user_id, is_active=True).exists()


def execution_visible(*, node_exec_id: Any, user: AbstractBaseUser) -> bool:
    return WorkNodeExecution.objects.filter(pk=node_exec_id, run__task__project__memberships__user=user).exists()


def run_visible(*, run_id: Any, user: AbstractBaseUser) -> bool:
    return WorkGraphRun.objects.filter(pk=run_id, task__project__memberships__user=user).exists()
