"""Tasks: what is asked of the agents, each run once or more as a work graph (graphs.models.runs)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from graphs.models.projects import Project
from graphs.models.skills import Skill


class Task(models.Model):
    class TaskType(models.TextChoices):
        DYNAMIC = "dynamic", "Dynamic (agents plan the graph)"
        WORKFLOW = "workflow", "Workflow (a fixed workflow)"

    class PlanningMode(models.TextChoices):
        GRAPH = "graph", "Graph (the planner plans the whole graph at once)"
        GAP_DRIVEN = "gap_driven", "Gap-driven (the planner plans in rounds until no gap is left)"

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        PLANNING = "planning", "Planning"
        AWAITING_APPROVAL = "awaiting_approval", "Awaiting approval"
        READY = "ready", "Ready"
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        INCOMPLETE = "incomplete", "Incomplete"
        FAILED = "failed", "Failed"
        REJECTED = "rejected", "Rejected"
        CANCELLED = "cancelled", "Cancelled"

    task_id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="tasks")
    title = models.CharField(max_length=300)
    goal_text = models.TextField()
    deliverables = models.JSONField(default=list, blank=True)
    acceptance_criteria = models.JSONField(default=list, blank=True)
    acceptance_ids = models.JSONField(
        default=list, blank=True,
        help_text="The ids a collaboration TaskRequest gave the acceptance criteria, in the same order; empty:"
                  " they are numbered ac1, ac2, …",
    )
    constraints = models.JSONField(default=list, blank=True)
    resources = models.JSONField(default=list, blank=True)
    task_type = models.CharField(max_length=16, choices=TaskType.choices, default=TaskType.DYNAMIC)
    workflow_id = models.CharField(max_length=200, blank=True)
    planning_mode = models.CharField(
        max_length=16, choices=PlanningMode.choices, default=PlanningMode.GRAPH,
        help_text="How its pipeline plans: one graph, or gap-driven rounds of tasks (see graphs.planning.gaps).",
    )
    skill = models.ForeignKey(
        Skill, null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks",
        help_text="A skill whose team template guides planning, when chosen explicitly.",
    )
    hidden = models.BooleanField(
        default=False, db_index=True,
        help_text="A task an experiment made to run one of its cases (graphs.experiments); task lists leave it out.",
    )
    status = models.CharField(
        max_length=24, choices=Status.choices, default=Status.DRAFT, db_index=True,
        help_text="Derived from the task's latest run (graphs.runs.status); never set on its own.",
    )
    outcome = models.JSONField(
        default=dict, blank=True, help_text="How the latest run ended: verdict, error, what is incomplete."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["project", "status"], name="task_project_status")]
        constraints = [
            models.CheckConstraint(
                condition=~Q(task_type="workflow") | ~Q(workflow_id=""),
                name="task_workflow_needs_workflow_id",
            ),
            models.CheckConstraint(
                condition=Q(planning_mode__in=["graph", "gap_driven"]), name="task_planning_mode_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.title
