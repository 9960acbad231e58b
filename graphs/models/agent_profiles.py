"""Agent profiles: who each org node is when an agent runner calls it, console-wide or for one project.

A profile row with no project is the console's profile of its org node; a row with a project overrides
it for that project. Every change of a profile is kept as an ``AgentProfileRevision`` (a full copy of
its content), and each attempt records the revision its agent ran with.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q

from graphs.domain.agent_profiles import EFFORTS, PERMISSION_MODES, SHIPPED_PERMISSION_MODE
from graphs.models.projects import Project
from graphs.models.skills import RevisionLabel, label_constraints


class ProfileContent(models.Model):
    """What a profile says, and what each of its revisions keeps."""

    class PermissionMode(models.TextChoices):
        DONT_ASK = "dontAsk", "dontAsk — only the allowed tools, nothing else"
        ACCEPT_EDITS = "acceptEdits", "acceptEdits — file edits, no other command"
        AUTO = "auto", "auto — a safety check decides (needs Anthropic's API, no gateway)"
        BYPASS = "bypassPermissions", "bypassPermissions — everything (refused when run as root)"
        PLAN = "plan", "plan — read and plan only"

    class Effort(models.TextChoices):
        DEFAULT = "", "The model's default"
        LOW = "low", "low"
        MEDIUM = "medium", "medium"
        HIGH = "high", "high"
        XHIGH = "xhigh", "xhigh"
        MAX = "max", "max"

    description = models.TextField(blank=True, help_text="One or two sentences: what this agent does.")
    instructions = models.TextField(blank=True, help_text="Markdown: the agent's system prompt.")
    model = models.CharField(max_length=200, blank=True, help_text="Empty: the runner's default model.")
    effort = models.CharField(max_length=8, choices=Effort.choices, blank=True, default="")
    allowed_tools = models.JSONField(default=list, blank=True, help_text="Claude Code tools, pre-approved.")
    disallowed_tools = models.JSONField(default=list, blank=True, help_text="Claude Code tools, removed.")
    max_turns = models.PositiveIntegerField(null=True, blank=True, validators=[MinValueValidator(1)])
    permission_mode = models.CharField(max_length=24, choices=PermissionMode.choices, default=SHIPPED_PERMISSION_MODE)
    repository_definition_first = models.BooleanField(
        default=False,
        help_text="When the worktree has .claude/agents/<org node>.md, the repository's definition runs instead.",
    )

    class Meta:
        abstract = True
        constraints = [
            models.CheckConstraint(condition=Q(permission_mode__in=PERMISSION_MODES),
                                   name="%(class)s_permission_mode_valid"),
            models.CheckConstraint(condition=Q(effort__in=("", *EFFORTS)), name="%(class)s_effort_valid"),
            models.CheckConstraint(condition=Q(max_turns__isnull=True) | Q(max_turns__gte=1),
                                   name="%(class)s_max_turns_positive"),
        ]


class AgentProfile(ProfileContent):
    org_node = models.CharField(max_length=100, db_index=True)
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="agent_profiles",
        help_text="Set: this project's override of the console's profile of the org node.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta(ProfileContent.Meta):
        ordering = ["org_node"]
        constraints = [
            *ProfileContent.Meta.constraints,
            models.UniqueConstraint(fields=["org_node"], condition=Q(project__isnull=True),
                                    name="agent_profile_unique_console"),
            models.UniqueConstraint(fields=["project", "org_node"], name="agent_profile_unique_project"),
        ]

    def __str__(self) -> str:
        return f"{self.org_node} ({self.project.slug})" if self.project_id else self.org_node


class AgentProfileRevision(ProfileContent):
    profile = models.ForeignKey(AgentProfile, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta(ProfileContent.Meta):
        ordering = ["profile", "number"]
        constraints = [
            *ProfileContent.Meta.constraints,
            models.UniqueConstraint(fields=["profile", "number"], name="agent_profile_revision_unique_number"),
        ]

    def __str__(self) -> str:
        return f"{self.profile} r{self.number}"


class AgentProfileLabel(RevisionLabel):
    profile = models.ForeignKey(AgentProfile, on_delete=models.CASCADE, related_name="labels")
    revision = models.ForeignKey(AgentProfileRevision, on_delete=models.CASCADE, related_name="labels")

    class Meta:
        ordering = ["profile", "label"]
        constraints = label_constraints("profile", "agent_profile_label")

    def __str__(self) -> str:
        return f"{self.profile} {self.label}"
