"""The persisted work-graph model: projects, tasks, skills, runs, one row per node attempt, logs, artifacts.

Statuses are nested ``TextChoices``; invariants that must hold whatever code path writes the row live
in database constraints as well, so a bug elsewhere fails loudly instead of corrupting a run.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone

PLANNING_NODE_ID = "__planning__"


def planning_node_id(org_node: str | None = None) -> str:
    """Return the synthetic node_id of a planning call: ``__planning__`` or ``__planning__:<org_node>``."""
    return f"{PLANNING_NODE_ID}:{org_node}" if org_node else PLANNING_NODE_ID


class Project(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    target_folder = models.CharField(
        max_length=1000, help_text="The repository or folder agents work in (their working directory)."
    )
    require_plan_approval = models.BooleanField(default=False)
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


class Skill(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        ACTIVE = "active", "Active"
        DEPRECATED = "deprecated", "Deprecated"

    class Source(models.TextChoices):
        CONSOLE = "console", "Written in the console"
        IMPORT = "import", "Imported from a folder"

    skill_id = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    owner_org_node = models.CharField(max_length=100, blank=True, db_index=True)
    file_path = models.CharField(max_length=1000, blank=True)
    current_git_commit_sha = models.CharField(max_length=40, blank=True)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.CONSOLE)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT, db_index=True)
    status_reason = models.TextField(blank=True)
    body = models.TextField(blank=True)
    team_template = models.JSONField(null=True, blank=True)
    template_warnings = models.JSONField(default=list, blank=True)
    defect_reported_at = models.DateTimeField(
        null=True, blank=True, help_text="Set when a validator named this skill as the root cause of a failure."
    )
    defect_note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["skill_id"]
        permissions = [("manage_skills", "Can manage skills")]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["draft", "active", "deprecated"]), name="skill_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.skill_id


class SkillRevision(models.Model):
    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    body = models.TextField()
    git_commit_sha = models.CharField(max_length=40, blank=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["skill", "number"]
        constraints = [
            models.UniqueConstraint(fields=["skill", "number"], name="skill_revision_unique_number"),
        ]

    def __str__(self) -> str:
        return f"{self.skill_id} r{self.number}"


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
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        INCOMPLETE = "incomplete", "Incomplete"
        FAILED = "failed", "Failed"
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
        help_text="How its pipeline plans: one graph, or gap-driven rounds of tasks (see graphs.gap_planning).",
    )
    skill = models.ForeignKey(
        Skill, null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks",
        help_text="A skill whose team template guides planning, when chosen explicitly.",
    )
    status = models.CharField(
        max_length=24, choices=Status.choices, default=Status.DRAFT, db_index=True,
        help_text="Derived from the task's latest run (graphs.run_status); never set on its own.",
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


class WorkGraphRun(models.Model):
    class Status(models.TextChoices):
        PLANNING = "planning", "Planning"
        PLANNING_FAILED = "planning_failed", "Planning failed"
        AWAITING_APPROVAL = "awaiting_approval", "Awaiting approval"
        READY = "ready", "Ready"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    FINISHED_STATUSES = frozenset({"planning_failed", "succeeded", "failed", "cancelled"})
    # The error_code of a run stopped by a reviewer who rejected an append (graphs.review).
    APPEND_REJECTED = "append_rejected"

    run_id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="runs")
    graph_manifest = models.JSONField(default=dict, blank=True)
    manifest_version = models.PositiveIntegerField(
        default=0, help_text="Bumped by every planning call that changes the manifest."
    )
    status = models.CharField(max_length=24, choices=Status.choices, default=Status.PLANNING, db_index=True)
    forked_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="forks"
    )
    fork_node_id = models.CharField(max_length=200, blank=True)
    pipeline = models.BooleanField(
        default=False, help_text="Run as the planner → coder → validator pipeline: stages append in turn."
    )
    stage = models.CharField(max_length=100, blank=True, help_text="The org node whose nodes were planned last.")
    max_cost_usd = models.DecimalField(
        max_digits=12, decimal_places=4, null=True, blank=True,
        help_text="The run's budget in USD (the project's, unless the run was started with its own).",
    )
    error = models.TextField(blank=True)
    error_code = models.CharField(
        max_length=32, blank=True,
        help_text="Why a run was stopped before its nodes ended (budget_exceeded, append_rejected); empty otherwise.",
    )
    review_decision = models.CharField(
        max_length=16, blank=True, choices=[("approved", "Approved"), ("rejected", "Rejected")]
    )
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    review_comment = models.TextField(blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(forked_from__isnull=True) | ~Q(fork_node_id=""), name="run_fork_names_a_node"
            ),
            models.CheckConstraint(
                condition=Q(max_cost_usd__isnull=True) | Q(max_cost_usd__gt=0), name="run_budget_positive"
            ),
        ]
        # The runs list filtered by status: each visible task's runs of that status, from the index.
        indexes = [models.Index(fields=["task", "status"], name="run_task_status")]

    def __str__(self) -> str:
        return f"run {self.run_id} ({self.status})"

    def is_finished(self) -> bool:
        """Return True once the run can no longer change: planning failed, succeeded, failed or cancelled."""
        return self.status in self.FINISHED_STATUSES

    def is_forkable(self) -> bool:
        """Return True for a run that executed and ended: succeeded, failed or cancelled — not one whose
        planning failed or whose plan a reviewer rejected, which has nothing to reuse, nor one whose
        append a reviewer rejected: a fork starts every node of the manifest, the rejected ones too."""
        executed = {self.Status.SUCCEEDED, self.Status.FAILED, self.Status.CANCELLED}
        return (self.status in executed and self.review_decision != "rejected"
                and self.error_code != self.APPEND_REJECTED)

    def state_label(self) -> str:
        """The run's status as a transition refusal names it (a rejected plan or append says so)."""
        if self.review_decision == "rejected":
            return f"{self.status} (plan rejected)"
        if self.error_code == self.APPEND_REJECTED:
            return f"{self.status} (append rejected)"
        return self.status


class WorkNodeExecution(models.Model):
    """One attempt at one node of a run. Rows are never overwritten: a retry is a new row."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        PARTIAL = "partial", "Partial"
        FAILED = "failed", "Failed"
        BLOCKED = "blocked", "Blocked"
        CANCELLED = "cancelled", "Cancelled"

    FINISHED_STATUSES = frozenset({"succeeded", "partial", "failed", "blocked", "cancelled"})
    ACTIVE_STATUSES = frozenset({"pending", "queued", "running"})

    class Cause(models.TextChoices):
        INITIAL = "initial", "Initial"
        RETRY_SELF = "retry_self", "Retry of itself"
        LOOP_BACK = "loop_back", "Loop-back"
        TRANSIENT_RETRY = "transient_retry", "Transient error retry"
        DYNAMIC_LOOP_BACK = "dynamic_loop_back", "Dynamic loop-back"
        FORK = "fork", "Fork"
        PLANNING = "planning", "Planning call"

    node_exec_id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Not indexed alone: every index below that leads with the run serves its lookups, and each index
    # is written again by every change of an attempt's status (two per node).
    run = models.ForeignKey(WorkGraphRun, on_delete=models.CASCADE, related_name="executions", db_index=False)
    node_id = models.CharField(max_length=200)
    subagent_type = models.CharField(max_length=100, help_text="The org node that ran (or planned) this.")
    skill_ref = models.ForeignKey(
        Skill, null=True, blank=True, on_delete=models.SET_NULL, related_name="executions"
    )
    input_schema_ref = models.CharField(max_length=300, blank=True)
    output_schema_ref = models.CharField(max_length=300, blank=True)
    input_payload = models.JSONField(default=dict, blank=True)
    output_payload = models.JSONField(default=dict, blank=True)
    # Lookups by status alone read (status, heartbeat_at), below.
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempt = models.PositiveIntegerField(default=1)
    cause = models.CharField(max_length=24, choices=Cause.choices, default=Cause.INITIAL)
    cause_node_id = models.CharField(
        max_length=200, blank=True, help_text="For a loop-back: the failing node that sent the run back here."
    )
    judgment_result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    failure = models.JSONField(
        null=True, blank=True,
        help_text="A failed attempt's classification (graphs.failures): category, confidence, evidence, rule.",
    )
    worker = models.CharField(max_length=200, blank=True)
    ready_at = models.DateTimeField(null=True, blank=True, help_text="When the node's dependencies were met.")
    not_before = models.DateTimeField(null=True, blank=True, help_text="Backoff: do not start before this.")
    resubmitted_at = models.DateTimeField(
        null=True, blank=True, help_text="When the reaper last handed this queued attempt's job out again."
    )
    resubmits = models.PositiveSmallIntegerField(default=0, help_text="How often the reaper handed the job out again.")
    # What the attempt's agent calls (node, judge, planning, repair) cost, summed; see graphs.accounting.
    agent_calls = models.PositiveSmallIntegerField(default=0)
    cost_usd = models.DecimalField(
        max_digits=14, decimal_places=6, null=True, blank=True,
        help_text="Empty when no call reported a cost (a model missing from WORKGRAPH_MODEL_PRICES).",
    )
    input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)
    cache_creation_input_tokens = models.PositiveBigIntegerField(default=0)
    cache_read_input_tokens = models.PositiveBigIntegerField(default=0)
    num_turns = models.PositiveIntegerField(default=0)
    tool_calls = models.PositiveIntegerField(default=0)
    duration_api_ms = models.PositiveBigIntegerField(default=0)
    model = models.CharField(max_length=200, blank=True, help_text="The model of the last call that named one.")
    session_id = models.CharField(max_length=200, blank=True, help_text="The agent's session, to resume it.")
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    deadline_at = models.DateTimeField(
        null=True, blank=True,
        help_text="An external node's attempt waiting for its report: when it fails external_timeout.",
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "node_id", "attempt"]
        constraints = [
            models.UniqueConstraint(fields=["run", "node_id", "attempt"], name="execution_unique_attempt"),
            models.CheckConstraint(condition=Q(attempt__gte=1), name="execution_attempt_positive"),
        ]
        indexes = [
            # Its leading columns serve every lookup of a run's attempts by status; the rest, the claim of
            # the longest-waiting queued attempt, in order, without sorting the run's queued rows.
            models.Index(fields=["run", "status", "ready_at", "created_at"], name="execution_run_status_ready"),
            models.Index(fields=["run", "node_id", "-attempt"], name="execution_run_node_attempt"),
            models.Index(fields=["status", "heartbeat_at"], name="execution_status_heartbeat"),
            # The runs list: the runs with an attempt of a node id (its search), the runs an org node
            # worked in, and each run's summed cost, all read from the index alone.
            models.Index(fields=["node_id", "run"], name="execution_node_run"),
            models.Index(fields=["subagent_type", "run"], name="execution_org_node_run"),
            models.Index(fields=["run", "cost_usd"], name="execution_run_cost"),
        ]

    def __str__(self) -> str:
        return f"{self.node_id} #{self.attempt} ({self.status})"

    @property
    def is_planning(self) -> bool:
        """True for the synthetic node recording a planning call (``__planning__``, ``__planning__:<org>``)."""
        return self.node_id == PLANNING_NODE_ID or self.node_id.startswith(PLANNING_NODE_ID + ":")

    def is_finished(self) -> bool:
        """Return True once this attempt has ended, whatever the outcome."""
        return self.status in self.FINISHED_STATUSES

    def is_waiting_for_report(self) -> bool:
        """Return True while this is an external node's attempt running without a worker, waiting for a
        collaboration report (or its deadline)."""
        return self.status == self.Status.RUNNING and self.deadline_at is not None

    def duration(self) -> timedelta | None:
        """Return how long the attempt ran, or None if it has not both started and finished."""
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at


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
    the commit it started from, and the whole change of the branch against it (see graphs.workspaces)."""

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
    """The loop-agent DAG spec a run was imported from, as it was imported (see graphs.dag_specs), so a
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
    """ELK's placement of a run's DAG, computed once on the server (graphs.layouts) for one drawing
    input: the nodes, their org nodes and the edges graph.json gives the page. ``digest`` names that
    input, so a new manifest version, a planning call or a new owner of a node gets a layout of its own
    while the newest earlier ones stay (graphs.run_layouts.KEPT_LAYOUTS_PER_RUN), each the ``previous``
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
    approval. Until it is approved those nodes get no attempt, so nothing of them runs (graphs.review)."""

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
