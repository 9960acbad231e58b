"""Projects, who belongs to them in which role, and the API tokens people act with."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone


class Project(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    target_folder = models.CharField(
        max_length=1000, help_text="The repository or folder agents work in (their working directory)."
    )
    require_plan_approval = models.BooleanField(default=False)
    require_change_review = models.BooleanField(
        default=False,
        help_text="Hold an attempt that changed files and passed its judgment until a reviewer approves its"
                  " change; off: it lands on the run's branch at once.",
    )
    base_ref = models.CharField(
        max_length=200, blank=True,
        help_text="The branch or commit runs start from, when the folder is a git repository; empty: its HEAD.",
    )
    allow_commands = models.BooleanField(
        default=False,
        help_text="Let command nodes and command judgments run programs in the target folder. Off: they fail"
                  " (commands_disabled) without running anything.",
    )
    allow_command_network = models.BooleanField(
        default=False,
        help_text="Let command nodes and command judgments reach the network. Off: their sandbox has loopback"
                  " only. Agents always reach their model's API.",
    )
    max_run_cost_usd = models.DecimalField(
        max_digits=12, decimal_places=4, null=True, blank=True,
        validators=[MinValueValidator(Decimal("0.0001"))],
        help_text="What one run's agent calls may spend, in USD; a run may set its own. Empty: no budget.",
    )
    llm_failure_classifier = models.BooleanField(
        default=False,
        help_text="Ask the judge agent to classify a failed attempt that the deterministic rules leave Unknown.",
    )
    agent = models.CharField(
        max_length=100, blank=True,
        help_text="The agent runner this project's calls use (offline, claude, openai, codex or one registered in"
                  " WORKGRAPH_AGENT_RUNNERS). Empty: the console's WORKGRAPH_AGENT.",
    )
    promotion_min_pass_rate = models.DecimalField(
        max_digits=4, decimal_places=3, null=True, blank=True,
        validators=[MinValueValidator(Decimal(0)), MaxValueValidator(Decimal(1))],
        help_text="The pass rate (0 to 1) an experiment must reach for a revision it measured to be labelled"
                  " production. Empty: none.",
    )
    promotion_no_regressions = models.BooleanField(
        default=False,
        help_text="Refuse to label a revision production when a case that passed under the production revision's"
                  " latest experiment on the same dataset fails under its experiment.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(max_run_cost_usd__isnull=True) | Q(max_run_cost_usd__gt=0), name="project_budget_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ProjectMembership(models.Model):
    class Role(models.TextChoices):
        LEAD = "lead", "Lead"
        REVIEWER = "reviewer", "Reviewer"
        VIEWER = "viewer", "Viewer"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "project"], name="membership_unique_user_project"),
            models.CheckConstraint(condition=Q(role__in=["lead", "reviewer", "viewer"]), name="membership_role_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user} · {self.project} ({self.role})"


class ApiToken(models.Model):
    """A personal API token. Only a hash is stored; the token itself is shown once, when created."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12, help_text="The first characters, to tell tokens apart.")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(help_text="Chosen at creation; the token is refused from then on.")
    read_only = models.BooleanField(default=False, help_text="The token may only read (GET, HEAD, OPTIONS).")
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def is_active(self) -> bool:
        """Return True until the token is revoked or expires."""
        return self.revoked_at is None and self.expires_at > timezone.now()
