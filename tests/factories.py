"""Factories for the test suite; named personas live in conftest.py."""

from __future__ import annotations

import tempfile

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from graphs import models


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.test")
    password = factory.django.Password("correct horse battery staple")


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Project

    slug = factory.Sequence(lambda n: f"project-{n}")
    name = factory.LazyAttribute(lambda project: project.slug.replace("-", " ").title())
    target_folder = factory.LazyFunction(lambda: tempfile.mkdtemp(prefix="workgraph-project-"))


class TaskFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Task

    project = factory.SubFactory(ProjectFactory)
    title = factory.Sequence(lambda n: f"Task {n}")
    goal_text = "Add CSV export to the reports page."
    deliverables = factory.LazyFunction(lambda: ["An export button", "A CSV endpoint"])
    acceptance_criteria = factory.LazyFunction(lambda: ["The CSV opens in a spreadsheet"])
    constraints = factory.LazyFunction(lambda: ["No new dependencies"])


class RunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.WorkGraphRun

    task = factory.SubFactory(TaskFactory)
    graph_manifest = factory.LazyFunction(lambda: {"nodes": [], "edges": []})


class ExecutionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.WorkNodeExecution

    run = factory.SubFactory(RunFactory)
    node_id = factory.Sequence(lambda n: f"node_{n}")
    subagent_type = "planner"


class SkillFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Skill

    skill_id = factory.Sequence(lambda n: f"skill-{n}")
    name = factory.LazyAttribute(lambda skill: skill.skill_id.title())
    body = "# A skill\n\nDo the work carefully."


def member(project: models.Project, username: str, *, role: str):
    user = UserFactory(username=username)
    models.ProjectMembership.objects.create(user=user, project=project, role=role)
    return user


def skill_admin(username: str):
    user = UserFactory(username=username)
    user.user_permissions.add(Permission.objects.get(codename="manage_skills"))
    return user



def project_creator(username: str):
    """A user with Django's permission to add projects, who belongs to none."""
    user = UserFactory(username=username)
    user.user_permissions.add(Permission.objects.get(codename="add_project", content_type__app_label="graphs"))
    return user
