"""Delivery: where a project's runs are delivered (a remote, a forge), and how each run's delivery went.

A project's ``ProjectDelivery`` names its remote and forge, and the environment variables of the console
that hold its token and webhook secret: names only, never the values. A run's ``RunDelivery`` is the one
record of carrying its branch to the remote and its pull request to the forge (graphs.delivery), what
the API's ``delivery`` object and the task page read.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from graphs.models.projects import Project
from graphs.models.runs import WorkGraphRun

# Only branches under this prefix are ever pushed: the console's own run branches.
DELIVERY_BRANCH_PREFIX = "workgraph/"


class ProjectDelivery(models.Model):
    """Where a project delivers its runs, and whether it does (graphs.delivery.project_settings checks it)."""

    class Deliver(models.TextChoices):
        OFF = "off", "Off"
        PUSH = "push", "Push the branch"
        PULL_REQUEST = "pull_request", "Push the branch and open a pull request"

    class Forge(models.TextChoices):
        NONE = "", "None (push only)"
        GITHUB = "github", "GitHub"
        GITLAB = "gitlab", "GitLab"
        # Forgejo serves Gitea's API.
        GITEA = "gitea", "Gitea or Forgejo"

    project = models.OneToOneField(Project, on_delete=models.CASCADE, primary_key=True, related_name="delivery")
    deliver = models.CharField(max_length=16, choices=Deliver.choices, default=Deliver.OFF)
    remote_url = models.CharField(
        max_length=1000, blank=True,
        help_text="The repository runs are pushed to: an https://, ssh:// or file:// URL, or an absolute path.",
    )
    forge = models.CharField(max_length=16, choices=Forge.choices, blank=True)
    forge_api_url = models.CharField(
        max_length=1000, blank=True,
        help_text="The forge's API: https://api.github.com (or an Enterprise server's /api/v3), a GitLab's"
                  " /api/v4, a Gitea's or Forgejo's /api/v1.",
    )
    forge_repo = models.CharField(
        max_length=300, blank=True, help_text="The repository on the forge: owner/name, or GitLab's project path.",
    )
    forge_token_env = models.CharField(
        max_length=100, blank=True,
        help_text="The name of the console's environment variable holding the token; the value is never stored.",
    )
    forge_webhook_secret_env = models.CharField(
        max_length=100, blank=True,
        help_text="The name of the console's environment variable holding the forge's webhook secret.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "project deliveries"
        constraints = [
            models.CheckConstraint(condition=Q(deliver__in=["off", "push", "pull_request"]),
                                   name="project_delivery_deliver_valid"),
            models.CheckConstraint(condition=Q(forge__in=["", "github", "gitlab", "gitea"]),
                                   name="project_delivery_forge_valid"),
            # A pull request needs a forge to open it on, and anything delivered a remote to go to.
            models.CheckConstraint(condition=~Q(deliver="pull_request") | ~Q(forge=""),
                                   name="project_delivery_pull_request_needs_forge"),
            models.CheckConstraint(condition=Q(deliver="off") | ~Q(remote_url=""),
                                   name="project_delivery_needs_remote"),
        ]

    def __str__(self) -> str:
        return f"delivery of {self.project_id} ({self.deliver})"

    def is_on(self) -> bool:
        """Return True when runs of the project are delivered when they succeed (``push`` or ``pull_request``)."""
        return self.deliver != self.Deliver.OFF


class RunDelivery(models.Model):
    """How one run's delivery went: its branch pushed, its pull request opened, and what the forge says of it."""

    class State(models.TextChoices):
        # Waiting for its job, being tried, or waiting for its next try after a transient failure.
        PENDING = "pending", "Delivering"
        PUSHED = "pushed", "Pushed"
        OPENED = "opened", "Pull request open"
        FAILED = "failed", "Delivery failed"
        MERGED = "merged", "Merged"
        CLOSED = "closed", "Closed"

    class Trigger(models.TextChoices):
        SUCCEEDED = "succeeded", "The run succeeded"
        REQUESTED = "requested", "Asked for by a lead"

    run = models.OneToOneField(WorkGraphRun, on_delete=models.CASCADE, primary_key=True, related_name="delivery")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING, db_index=True)
    mode = models.CharField(
        max_length=16, choices=[("push", "Push"), ("pull_request", "Pull request")],
        help_text="What was asked: the project's deliver setting when the delivery was made.",
    )
    trigger = models.CharField(max_length=16, choices=Trigger.choices, default=Trigger.SUCCEEDED)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    remote_branch = models.CharField(
        max_length=200, help_text="The branch on the remote: the run's own, or the one a follow-up run updates.",
    )
    head_commit = models.CharField(max_length=40, blank=True, help_text="The commit last pushed there.")
    pull_request_number = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Its number on the forge (GitLab's iid, the !number).",
    )
    pull_request_url = models.CharField(max_length=1000, blank=True)
    checks = models.JSONField(
        default=list, blank=True, help_text="The forge's checks of the pushed head: name, status, conclusion, url.",
    )
    error = models.TextField(blank=True, help_text="Why the last try failed, in words; token values never.")
    attempts = models.PositiveIntegerField(default=0, help_text="Tries made since it was last asked for.")
    next_try_at = models.DateTimeField(null=True, blank=True, help_text="When a transient failure's next try is due.")
    tried_at = models.DateTimeField(
        null=True, blank=True, help_text="When the try under way started; empty between tries. Claims a try.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    pushed_at = models.DateTimeField(null=True, blank=True)
    opened_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "run deliveries"
        constraints = [
            models.CheckConstraint(
                condition=Q(state__in=["pending", "pushed", "opened", "failed", "merged", "closed"]),
                name="run_delivery_state_valid"),
            models.CheckConstraint(condition=Q(mode__in=["push", "pull_request"]), name="run_delivery_mode_valid"),
            # The console never pushes anything but its own branches.
            models.CheckConstraint(condition=Q(remote_branch__startswith=DELIVERY_BRANCH_PREFIX),
                                   name="run_delivery_branch_is_the_consoles"),
            models.CheckConstraint(condition=~Q(state="opened") | Q(pull_request_number__isnull=False),
                                   name="run_delivery_opened_has_a_pull_request"),
        ]

    def __str__(self) -> str:
        return f"delivery of {self.run_id} ({self.state})"

    def is_settled(self) -> bool:
        """Return True once no try is under way or due: every state but ``pending``."""
        return self.state != self.State.PENDING


class ForgeFeedback(models.Model):
    """One thing a forge said of a delivered pull request that asks for work — a check that failed on the
    delivered head, a review that requested changes — and what the console did about it: a follow-up run
    started, or why none was. Its key (a check's name and commit, a review's id) is unique per branch, so
    the same failure heard twice, by webhook and by polling, is acted on once (graphs.delivery.feedback)."""

    class Kind(models.TextChoices):
        CHECK = "check", "A check failed"
        REVIEW = "review", "Changes were requested"

    class Outcome(models.TextChoices):
        STARTED = "started", "Follow-up run started"
        PERSON_NEEDED = "person_needed", "A person is needed"
        NOT_STARTED = "not_started", "No follow-up run"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="forge_feedback")
    remote_branch = models.CharField(max_length=200)
    pull_request_number = models.PositiveBigIntegerField(null=True, blank=True)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    key = models.CharField(max_length=300, help_text="What tells it from another: a check's name and commit, a"
                                                     " review's id.")
    name = models.CharField(max_length=300, help_text="The check's name, or the reviewer's.")
    head_commit = models.CharField(max_length=40, blank=True)
    url = models.CharField(max_length=1000, blank=True)
    source_run = models.ForeignKey(WorkGraphRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    follow_up_run = models.OneToOneField(WorkGraphRun, null=True, blank=True, on_delete=models.SET_NULL,
                                         related_name="forge_feedback")
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    note = models.TextField(blank=True, help_text="What the console did, in words.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "forge feedback"
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "remote_branch", "kind", "key"],
                                    name="forge_feedback_heard_once"),
            models.CheckConstraint(condition=Q(kind__in=["check", "review"]), name="forge_feedback_kind_valid"),
            models.CheckConstraint(condition=Q(outcome__in=["started", "person_needed", "not_started"]),
                                   name="forge_feedback_outcome_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.name} on {self.remote_branch} ({self.outcome})"
