"""Datasets: a project's real cases, each what a task is plus the commit it starts from and the checks its
final tree must pass, kept so that an experiment can run every case again as an ordinary run.

A case copies its task's fields rather than pointing at a task: the task may change or go, and a case
must mean tomorrow what it meant when it was added. Where it came from (``from_task``, ``from_run``) is
provenance, and goes null when that task or run is deleted.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from graphs.models.projects import Project
from graphs.models.runs import Task, WorkGraphRun
from graphs.models.skills import Skill

# A commit id as git names it: 40 hex digits, 64 in a repository using SHA-256.
COMMIT_MAX_CHARS = 64


class Dataset(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="datasets")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["project", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="dataset_unique_name_in_project"),
            models.CheckConstraint(condition=~Q(name=""), name="dataset_has_a_name"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.project.slug})" if self.project_id else self.name


class DatasetCase(models.Model):
    """One case: a task's fields, the commit its run starts from, and the checks its final tree must pass."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="cases")
    title = models.CharField(max_length=300)
    goal_text = models.TextField()
    deliverables = models.JSONField(default=list, blank=True)
    acceptance_criteria = models.JSONField(default=list, blank=True)
    constraints = models.JSONField(default=list, blank=True)
    resources = models.JSONField(default=list, blank=True)
    planning_mode = models.CharField(max_length=16, choices=Task.PlanningMode.choices,
                                     default=Task.PlanningMode.GRAPH)
    skill = models.ForeignKey(
        Skill, null=True, blank=True, on_delete=models.SET_NULL, related_name="dataset_cases",
        help_text="The skill whose team template guides its planning, as a task's does.",
    )
    base_ref = models.CharField(
        max_length=200, blank=True,
        help_text="What the case was asked to start from (a commit, branch or tag; empty: the project's base ref"
                  " then), kept beside the commit it named.",
    )
    base_commit = models.CharField(
        max_length=COMMIT_MAX_CHARS, help_text="The full commit id its runs start from, resolved when it was saved.",
    )
    checks = models.JSONField(
        default=list, blank=True,
        help_text="Commands its final tree must pass, each an argv list, run as command judgments run them.",
    )
    from_task = models.ForeignKey(
        Task, null=True, blank=True, on_delete=models.SET_NULL, related_name="dataset_cases",
        help_text="The task it was copied from, if any.",
    )
    from_run = models.ForeignKey(
        WorkGraphRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="dataset_cases",
        help_text="The run whose base commit it starts from, if it was taken from one.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dataset", "id"]
        constraints = [
            models.CheckConstraint(condition=~Q(base_commit=""), name="dataset_case_has_a_base_commit"),
            models.CheckConstraint(condition=Q(planning_mode__in=["graph", "gap_driven"]),
                                   name="dataset_case_planning_mode_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.title} @ {self.base_commit[:12]}"
