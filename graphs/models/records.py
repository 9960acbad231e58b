"""What a run leaves behind beside its attempts: logs and their lines, its workspace and each attempt's
change, an imported DAG spec, server layouts, append reviews, artifacts and report receipts."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from graphs.models.projects import Project
from graphs.models.runs import Task, WorkGraphRun, WorkNodeExecution


class ExecutionLogFile(models.Model):
    """The header of one attempt's log; its lines are ``ExecutionLogLine`` rows.

    The counts (``last_seq``, ``line_count``, ``size_bytes``, ``lines_dropped``) are written when the log
    closes; while it is open, its lines are the truth.
    """

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    log_file_id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    node_exec = models.OneToOneField(WorkNodeExecution, on_delete=models.CASCADE, related_name="log_file")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="log_files")
    format = models.CharField(max_length=16, default="jsonl")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN, db_index=True)
    last_seq = models.PositiveIntegerField(default=0)
    line_count = models.PositiveIntegerField(default=0)
    size_bytes = models.PositiveBigIntegerField(default=0, help_text="The log's size as JSONL.")
    lines_dropped = models.PositiveIntegerField(
        default=0, help_text="Agent output lines past WORKGRAPH_LOG_MAX_LINES, counted and not kept."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    pruned_at = models.DateTimeField(null=True, blank=True, help_text="When logs_prune deleted its lines.")

    def __str__(self) -> str:
        return f"log of {self.node_exec_id}"


class ExecutionLogLine(models.Model):
    """One line of an attempt's log, stored as the exact JSONL text download and export produce.

    The text is kept as written rather than as a JSON column: PostgreSQL's jsonb reorders keys, and
    a downloaded log must read the same as the lines the browser was sent. ``seq``, ``ts`` and
    ``event`` are copied out of it for queries.
    """

    id = models.BigAutoField(primary_key=True)
    log_file = models.ForeignKey(ExecutionLogFile, on_delete=models.CASCADE, related_name="lines", db_index=False)
    seq = models.PositiveIntegerField()
    ts = models.DateTimeField()
    event = models.CharField(max_length=64)
    text = models.TextField(help_text="The line as JSON, without its newline.")
    cut = models.BooleanField(default=False, help_text="A field was cut to keep the line under the payload cap.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["log_file", "seq"], name="log_line_unique_seq"),
        ]

    def __str__(self) -> str:
        return f"{self.log_file_id}#{self.seq} {self.event}"


class RunWorkspace(models.Model):
    """Where a run's work is kept when its project's folder is a git repository: the run's branch,
    the commit it started from, and the whole change of the branch against it (see graphs.workspaces.worktrees)."""

    run = models.OneToOneField(WorkGraphRun, on_delete=models.CASCADE, primary_key=True, related_name="workspace")
    repository = models.CharField(max_length=1000, help_text="The repository: the project's folder.")
    branch = models.CharField(max_length=200)
    base_commit = models.CharField(max_length=40)
    head_commit = models.CharField(max_length=40, help_text="The branch's head as the engine last moved it.")
    files = models.JSONField(default=list, blank=True, help_text="Each changed path with its added/removed lines.")
    diff = models.TextField(blank=True, help_text="The branch's unified diff against its base, up to the cap.")
    diff_bytes = models.PositiveBigIntegerField(default=0, help_text="The whole diff's size; more than kept when cut.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.branch} of {self.run_id}"


class DagSpec(models.Model):
    """The loop-agent DAG spec a run was imported from, as it was imported (see graphs.planning.dag_specs), so a
    reviewer can read and download what the run's manifest was translated from."""

    run = models.OneToOneField(WorkGraphRun, on_delete=models.CASCADE, primary_key=True, related_name="dag_spec")
    source_name = models.CharField(max_length=255, blank=True, help_text="The uploaded file's name, if any.")
    spec = models.JSONField(help_text="The spec document: its tasks, prompts, gates and retry policies.")
    prompt_files = models.JSONField(
        default=dict, blank=True, help_text="The markdown prompt files its tasks name, by the path they name."
    )
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    imported_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"DAG spec {self.source_name or self.run_id}"


class RunLayout(models.Model):
    """ELK's placement of a run's DAG, computed once on the server (graphs.layout.compute) for one drawing
    input: the nodes, their org nodes and the edges graph.json gives the page. ``digest`` names that
    input, so a new manifest version, a planning call or a new owner of a node gets a layout of its own
    while the newest earlier ones stay (graphs.layout.run_layouts.KEPT_LAYOUTS_PER_RUN), each the ``previous``
    the next one keeps its positions from."""

    class Status(models.TextChoices):
        COMPUTING = "computing", "Computing"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    run = models.ForeignKey(WorkGraphRun, on_delete=models.CASCADE, related_name="layouts")
    digest = models.CharField(max_length=64, help_text="SHA-256 of the drawing input (layouts.layout_input).")
    manifest_version = models.PositiveIntegerField(help_text="The run's manifest version the input was read at.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.COMPUTING, db_index=True)
    layout = models.JSONField(null=True, blank=True, help_text="layout.js's layoutToJSON once ready.")
    node_count = models.PositiveIntegerField(default=0)
    compute_ms = models.PositiveIntegerField(null=True, blank=True, help_text="Node.js's whole call, once ended.")
    error = models.TextField(blank=True, help_text="Why the layout failed: the page lays the graph out itself.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "digest"], name="run_layout_once_per_input")]
        indexes = [models.Index(fields=["run", "status", "-created_at"], name="run_layout_newest")]

    def __str__(self) -> str:
        return f"layout {self.digest[:8]} of run {self.run_id} ({self.status})"


class AttemptChange(models.Model):
    """What one attempt changed in its own worktree: the commit it started from, the commit of its
    change, the merge that landed it on the run's branch (a failed attempt's change is kept on its
    own ref and never merged), and its files and unified diff."""

    node_exec = models.OneToOneField(
        WorkNodeExecution, on_delete=models.CASCADE, primary_key=True, related_name="change"
    )
    run = models.ForeignKey(WorkGraphRun, on_delete=models.CASCADE, related_name="attempt_changes")
    base_commit = models.CharField(max_length=40)
    result_commit = models.CharField(max_length=40, blank=True, help_text="Empty: the attempt changed nothing.")
    merge_commit = models.CharField(max_length=40, blank=True, help_text="Where the change landed on the run branch.")
    ref = models.CharField(max_length=200, blank=True, help_text="The ref that keeps the change of an attempt.")
    files = models.JSONField(default=list, blank=True, help_text="Each changed path with its added/removed lines.")
    diff = models.TextField(blank=True, help_text="The change's unified diff, up to the cap.")
    diff_bytes = models.PositiveBigIntegerField(default=0, help_text="The whole diff's size; more than kept when cut.")

    def __str__(self) -> str:
        return f"change of {self.node_exec_id}"


class AppendReview(models.Model):
    """A reviewer's decision on the nodes one append planned into a run whose project requires plan
    approval. Until it is approved those nodes get no attempt, so nothing of them runs (graphs.engine.review)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for a reviewer"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    run = models.ForeignKey(WorkGraphRun, on_delete=models.CASCADE, related_name="append_reviews")
    planning_execution = models.OneToOneField(
        WorkNodeExecution, on_delete=models.CASCADE, related_name="append_review",
        help_text="The append's planning call.",
    )
    new_node_ids = models.JSONField(default=list, help_text="The nodes the append added: what an approval lets run.")
    resume_status = models.CharField(
        max_length=24, choices=[(WorkGraphRun.Status.READY, "Ready"), (WorkGraphRun.Status.RUNNING, "Running")],
        help_text="The run's status once approved: running (the nodes start) or ready (a lead starts the run).",
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    review_comment = models.TextField(blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(resume_status__in=["ready", "running"]),
                                   name="append_review_resumes_ready_or_running"),
            models.CheckConstraint(condition=Q(status="pending") | Q(reviewed_at__isnull=False),
                                   name="append_review_decided_when"),
        ]

    def __str__(self) -> str:
        return f"append review of {self.planning_execution_id} ({self.status})"


class Artifact(models.Model):
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="artifacts")
    run = models.ForeignKey(WorkGraphRun, on_delete=models.CASCADE, related_name="artifacts")
    node_exec = models.ForeignKey(WorkNodeExecution, on_delete=models.CASCADE, related_name="artifacts")
    artifact_type = models.CharField(max_length=100, db_index=True)
    content = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["node_exec", "artifact_type"], name="artifact_once_per_execution"),
        ]

    def __str__(self) -> str:
        return f"{self.artifact_type} of {self.task_id}"


class ReportReceipt(models.Model):
    """A collaboration report accepted for a node of a run, keyed by its digest: the same report sent
    again — a retry, a replay, ten at once — is answered from here and changes nothing."""

    run = models.ForeignKey(WorkGraphRun, on_delete=models.CASCADE, related_name="report_receipts")
    node_id = models.CharField(max_length=200)
    digest = models.CharField(max_length=64, help_text="SHA-256 of the report's success, data and gaps.")
    node_exec = models.ForeignKey(
        WorkNodeExecution, null=True, on_delete=models.CASCADE, related_name="report_receipts",
        help_text="The attempt the report completed.",
    )
    status = models.CharField(max_length=16, blank=True, help_text="What the report left that attempt.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "node_id", "digest"], name="report_receipt_once_per_report"),
        ]

    def __str__(self) -> str:
        return f"report {self.digest[:8]} for {self.node_id}"
