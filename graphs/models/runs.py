"""Runs (each a task's work graph) and one row per node attempt."""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q

from graphs.models.skills import Skill
from graphs.models.tasks import Task

PLANNING_NODE_ID = "__planning__"
# The worker name of an external node's attempt waiting for its report (graphs.engine.external): no worker
# of the engine holds it.
EXTERNAL_WORKER = "external"


def planning_node_id(org_node: str | None = None) -> str:
    """Return the synthetic node_id of a planning call: ``__planning__`` or ``__planning__:<org_node>``."""
    return f"{PLANNING_NODE_ID}:{org_node}" if org_node else PLANNING_NODE_ID


class WorkGraphRun(models.Model):
    class Status(models.TextChoices):
        PLANNING = "planning", "Planning"
        PLANNING_FAILED = "planning_failed", "Planning failed"
        AWAITING_APPROVAL = "awaiting_approval", "Awaiting approval"
        READY = "ready", "Ready"
        # Started while the console ran its limit of runs (WORKGRAPH_MAX_ACTIVE_RUNS): it waits, first come
        # first served, for a running run to end (graphs.runs.admission).
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        # A reviewer turned its plan or its appends down: it ends there, and says it was not a failure.
        REJECTED = "rejected", "Rejected"
        CANCELLED = "cancelled", "Cancelled"

    FINISHED_STATUSES = frozenset({"planning_failed", "succeeded", "failed", "rejected", "cancelled"})
    class StopCode(models.TextChoices):
        """Why a run was stopped before its nodes ended: its ``error_code`` (empty when it was not)."""

        # Its agent calls spent its budget (graphs.runs.budgets); a lead may raise it and resume the run.
        BUDGET_EXCEEDED = "budget_exceeded", "Budget exceeded"
        # A reviewer rejected an append (graphs.engine.review).
        APPEND_REJECTED = "append_rejected", "Append rejected"

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
    fork_edit = models.JSONField(
        default=dict, blank=True,
        help_text="A fork's edit of its node (graphs.domain.fork_edits): node_id, field, before, after, by, at; "
                  "empty for a run that is no edited fork.",
    )
    pipeline = models.BooleanField(
        default=False, help_text="Run as the planner → coder → validator pipeline: stages append in turn."
    )
    stage = models.CharField(max_length=100, blank=True, help_text="The org node whose nodes were planned last.")
    start_commit = models.CharField(
        max_length=64, blank=True,
        help_text="The commit its branch starts from when it must not be the project's base (an experiment's case).",
    )
    revision_pins = models.JSONField(
        default=dict, blank=True,
        help_text="Skill and agent profile revisions it runs with instead of production: {skills: {id: number},"
                  " profiles: {org_node: number}} (an experiment's variant).",
    )
    max_cost_usd = models.DecimalField(
        max_digits=12, decimal_places=4, null=True, blank=True,
        help_text="The run's budget in USD (the project's, unless the run was started with its own).",
    )
    # Kept by the one writer of its attempts' costs (graphs.runs.accounting), for the runs list's min-cost filter.
    cost_usd = models.DecimalField(
        max_digits=14, decimal_places=6, null=True, blank=True,
        help_text="Its attempts' cost_usd summed; empty while none of its calls reported a cost.",
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
    queued_at = models.DateTimeField(
        null=True, blank=True,
        help_text="When it was started and queued behind the runs under way; kept once it is admitted"
                  " (started_at), so the wait can be read.",
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    trace_id = models.CharField(
        max_length=32, blank=True,
        help_text="The OpenTelemetry trace of the run (32 hex digits), set when its first span is made"
                  " (graphs.telemetry); every worker's spans join it.",
    )

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
        indexes = [
            # The runs list filtered by status: each visible task's runs of that status, from the index.
            models.Index(fields=["task", "status"], name="run_task_status"),
            # The runs list filtered by a minimum cost, newest first among the runs that cost that much.
            models.Index(fields=["cost_usd", "created_at"], name="run_cost_created",
                         condition=Q(cost_usd__isnull=False)),
            # Newest first, as the runs list orders them (graphs.runs.facts.LATEST_RUN_FIRST).
            models.Index(fields=["-created_at", "-run_id"], name="run_latest_first"),
            # What waits on people and what is live, each read from the few runs in that state, never the
            # history: the inbox's plans awaiting approval and budget stops, the list pages' fingerprint.
            models.Index(fields=["task"], name="run_awaiting_approval", condition=Q(status="awaiting_approval")),
            models.Index(fields=["task", "created_at"], name="run_budget_stopped",
                          condition=Q(status="failed", error_code="budget_exceeded")),
            models.Index(fields=["task"], name="run_under_way",
                          condition=Q(status__in=["planning", "awaiting_approval", "ready", "queued", "running"])),
            # The runs waiting for admission, first come first served (graphs.runs.admission).
            models.Index(fields=["queued_at", "run_id"], name="run_queued", condition=Q(status="queued")),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} ({self.status})"

    def runner_name(self) -> str:
        """The agent runner its calls use: the one its experiment's variant pins, else its project's (empty:
        the console's ``WORKGRAPH_AGENT``)."""
        return (self.revision_pins or {}).get("agent") or self.task.project.agent

    def is_finished(self) -> bool:
        """Return True once the run can no longer change: planning failed, succeeded, failed, rejected or cancelled."""
        return self.status in self.FINISHED_STATUSES

    def ended_unsuccessfully(self) -> bool:
        """Return True once the run has finished any way but succeeded (rejected and cancelled too)."""
        return self.is_finished() and self.status != self.Status.SUCCEEDED

    def is_unstarted(self) -> bool:
        """Return True for a run that is only planned: ``ready``, and never started."""
        return self.status == self.Status.READY and self.started_at is None

    def is_forkable(self) -> bool:
        """Return True for a run that executed and ended: succeeded, failed or cancelled — not one whose
        planning failed or that a reviewer rejected (``rejected``): a rejected plan has nothing to reuse,
        and a fork of a rejected append would start every node of the manifest, the rejected ones too."""
        return self.status in {self.Status.SUCCEEDED, self.Status.FAILED, self.Status.CANCELLED}

    def state_label(self) -> str:
        """The run's status as a transition refusal names it: a rejected run says what was rejected."""
        if self.status == self.Status.REJECTED:
            return "rejected (append)" if self.error_code == self.StopCode.APPEND_REJECTED else "rejected (plan)"
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
        # Its change passed its judgment and waits for a reviewer (graphs.engine.change_review): no worker
        # holds it, and it is neither finished nor lost.
        AWAITING_REVIEW = "awaiting_review", "Awaiting review"
        # A reviewer sent its change back: the node's next attempt (cause review) amends it.
        CHANGES_REQUESTED = "changes_requested", "Changes requested"

    FINISHED_STATUSES = frozenset({"succeeded", "partial", "failed", "blocked", "cancelled", "changes_requested"})
    ACTIVE_STATUSES = frozenset({"pending", "queued", "running"})
    # Neither finished nor any worker's: waiting on a person (a reviewer of its change).
    WAITING_STATUSES = frozenset({"awaiting_review"})

    class Cause(models.TextChoices):
        INITIAL = "initial", "Initial"
        RETRY_SELF = "retry_self", "Retry of itself"
        LOOP_BACK = "loop_back", "Loop-back"
        TRANSIENT_RETRY = "transient_retry", "Transient error retry"
        DYNAMIC_LOOP_BACK = "dynamic_loop_back", "Dynamic loop-back"
        FORK = "fork", "Fork"
        PLANNING = "planning", "Planning call"
        REVIEW = "review", "Changes requested in review"

    node_exec_id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Not indexed alone: every index below that leads with the run serves its lookups, and each index
    # is written again by every change of an attempt's status (two per node).
    run = models.ForeignKey(WorkGraphRun, on_delete=models.CASCADE, related_name="executions", db_index=False)
    node_id = models.CharField(max_length=200)
    subagent_type = models.CharField(max_length=100, help_text="The org node that ran (or planned) this.")
    skill_ref = models.ForeignKey(
        Skill, null=True, blank=True, on_delete=models.SET_NULL, related_name="executions"
    )
    profile_revision = models.ForeignKey(
        "graphs.AgentProfileRevision", null=True, blank=True, on_delete=models.SET_NULL, related_name="executions",
        help_text="The agent profile revision the attempt's agent ran with (graphs.profiles).",
    )
    input_schema_ref = models.CharField(max_length=300, blank=True)
    output_schema_ref = models.CharField(max_length=300, blank=True)
    input_payload = models.JSONField(default=dict, blank=True)
    output_payload = models.JSONField(default=dict, blank=True)
    # Lookups by status alone read (status, heartbeat_at), below.
    status = models.CharField(max_length=24, choices=Status.choices, default=Status.PENDING)
    attempt = models.PositiveIntegerField(default=1)
    cause = models.CharField(max_length=24, choices=Cause.choices, default=Cause.INITIAL)
    cause_node_id = models.CharField(
        max_length=200, blank=True, help_text="For a loop-back: the failing node that sent the run back here."
    )
    judgment_result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    failure = models.JSONField(
        null=True, blank=True,
        help_text="A failed attempt's classification (graphs.domain.failures): category, confidence, evidence, rule.",
    )
    worker = models.CharField(max_length=200, blank=True)
    ready_at = models.DateTimeField(null=True, blank=True, help_text="When the node's dependencies were met.")
    not_before = models.DateTimeField(null=True, blank=True, help_text="Backoff: do not start before this.")
    resubmitted_at = models.DateTimeField(
        null=True, blank=True, help_text="When the reaper last handed this queued attempt's job out again."
    )
    resubmits = models.PositiveSmallIntegerField(default=0, help_text="How often the reaper handed the job out again.")
    # What the attempt's agent calls (node, judge, planning, repair) cost, summed; see graphs.runs.accounting.
    agent_calls = models.PositiveSmallIntegerField(default=0)
    cost_usd = models.DecimalField(
        max_digits=14, decimal_places=6, null=True, blank=True,
        help_text="Empty when no call reported a cost (a model missing from WORKGRAPH_MODEL_PRICES).",
    )
    # The tokens its calls reported; unknown (shown empty, never 0) when none of its calls reported usage.
    input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)
    cache_creation_input_tokens = models.PositiveBigIntegerField(default=0)
    cache_read_input_tokens = models.PositiveBigIntegerField(default=0)
    calls_without_usage = models.PositiveSmallIntegerField(
        default=0, help_text="Calls that reported no usage: the token counts are then a lower bound, or unknown.")
    calls_without_cost = models.PositiveSmallIntegerField(
        default=0, help_text="Calls that reported no cost: the cost is then a lower bound, or unknown.")
    num_turns = models.PositiveIntegerField(default=0)
    tool_calls = models.PositiveIntegerField(default=0)
    tool_failures = models.PositiveIntegerField(
        default=0, help_text="Tool calls whose result was an error: a tool refused, a command that failed.")
    tool_failure_first = models.CharField(max_length=400, blank=True, help_text="The first failed tool call's error.")
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
            # Its search by a part of a node id is answered on PostgreSQL from a trigram index of the ids,
            # built by migration 0026 alone (SQLite has none, and remakes a table with the indexes named here).
            models.Index(fields=["subagent_type", "run"], name="execution_org_node_run"),
            models.Index(fields=["run", "cost_usd"], name="execution_run_cost"),
            # The inbox's external attempts waiting for their report: a handful, never every running attempt.
            models.Index(fields=["run"], name="execution_waiting_report",
                         condition=Q(status="running", worker=EXTERNAL_WORKER, deadline_at__isnull=False)),
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

    def ended_unsuccessfully(self) -> bool:
        """Return True once this attempt has ended any way but succeeded (partial and blocked too)."""
        return self.is_finished() and self.status != self.Status.SUCCEEDED

    def is_waiting_for_report(self) -> bool:
        """Return True while this is an external node's attempt running without a worker, waiting for a
        collaboration report (or its deadline)."""
        return self.status == self.Status.RUNNING and self.deadline_at is not None

    def duration(self) -> timedelta | None:
        """Return how long the attempt ran, or None if it has not both started and finished."""
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at
