"""Experiments: a dataset's cases run again, each case a number of times, with a variant's skill and agent
profile revisions pinned, and each run scored — so a revision's effect is measured before it goes to
production (``graphs.experiments``).

An item's run is an ordinary run of a task of its own that no task list shows (``Task.hidden``): runs of
one task cannot overlap, and an experiment's must, up to its concurrency; and no real task's status may
move because a revision was measured.
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from graphs.models.datasets import Dataset, DatasetCase
from graphs.models.projects import Project
from graphs.models.runs import Task, WorkGraphRun

MAX_REPETITIONS = 5


class Experiment(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        FINISHED = "finished", "Finished"
        CANCELLED = "cancelled", "Cancelled"
        # The runs' own stop code: an experiment its budget stopped says so in the one budget vocabulary.
        BUDGET_EXCEEDED = WorkGraphRun.StopCode.BUDGET_EXCEEDED.value, "Stopped by its budget"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="experiments")
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="experiments")
    name = models.CharField(max_length=200)
    variant = models.JSONField(default=dict, blank=True, help_text="The variant as it was asked for.")
    pins = models.JSONField(
        default=dict, blank=True,
        help_text="The revisions its runs use, resolved when it was made: skills and profiles by revision number.",
    )
    repetitions = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(MAX_REPETITIONS)])
    concurrency = models.PositiveSmallIntegerField(default=1, validators=[MinValueValidator(1)])
    max_cost_usd = models.DecimalField(
        max_digits=12, decimal_places=4, null=True, blank=True, validators=[MinValueValidator(Decimal("0.0001"))],
        help_text="What all its runs may spend together, in USD. Empty: no budget.",
    )
    status = models.CharField(max_length=24, choices=Status.choices, default=Status.RUNNING, db_index=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(repetitions__gte=1, repetitions__lte=MAX_REPETITIONS),
                                   name="experiment_repetitions_in_range"),
            models.CheckConstraint(condition=Q(concurrency__gte=1), name="experiment_concurrency_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.name} (experiment {self.pk})"

    def is_finished(self) -> bool:
        """Whether it ended: every item scored, or it was cancelled or stopped by its budget."""
        return self.status != self.Status.RUNNING


class ExperimentItem(models.Model):
    """One case and repetition: its run, and its score once the run ended."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        SCORED = "scored", "Scored"
        NOT_RUN = "not_run", "Not run"

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="items")
    case = models.ForeignKey(DatasetCase, on_delete=models.PROTECT, related_name="experiment_items")
    repetition = models.PositiveSmallIntegerField()
    task = models.OneToOneField(Task, null=True, blank=True, on_delete=models.SET_NULL, related_name="experiment_item")
    run = models.OneToOneField(
        WorkGraphRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="experiment_item"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    passed = models.BooleanField(null=True, blank=True, help_text="The run succeeded and every check passed.")
    checks = models.JSONField(default=list, blank=True, help_text="Each check's argv, exit code and output's tail.")
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal(0))
    input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)
    duration_ms = models.PositiveBigIntegerField(null=True, blank=True, help_text="The run's wall time.")
    loop_backs = models.PositiveIntegerField(default=0)
    retries = models.PositiveIntegerField(default=0)
    scored_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["experiment", "case", "repetition"]
        constraints = [
            models.UniqueConstraint(fields=["experiment", "case", "repetition"], name="experiment_item_unique"),
        ]

    def __str__(self) -> str:
        return f"case {self.case_id} #{self.repetition} of experiment {self.experiment_id}"
