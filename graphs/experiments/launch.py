"""An experiment made and run: one item per case and repetition, each item's run an ordinary pipeline run of a
task of its own (``Task.hidden``) in its own worktree at its case's commit, with the variant's revisions pinned.

``experiment_advance`` is the one step that moves an experiment: it starts pending items up to its
concurrency, stops it when its budget is spent, and finishes it once every item is scored. It runs under a
lock on the experiment's row, so the jobs of two runs ending at once never start more than the concurrency.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from graphs.engine.pipeline import pipeline_start
from graphs.experiments.variants import experiment_fields_check
from graphs.models import Dataset, WorkGraphRun, WorkNodeExecution
from graphs.models.experiments import Experiment, ExperimentItem
from graphs.planning.intake import task_create
from graphs.runs.accounting import spend_of
from graphs.runs.budgets import budget_exceeded_message
from graphs.runs.status import run_stop

Item = ExperimentItem.Status


def experiment_create(*, dataset: Dataset, fields: dict[str, Any], by: AbstractBaseUser | None) -> Experiment:
    """Make an experiment of ``dataset``'s cases from ``fields`` as asked, and start its first runs.
    Raises ``ExperimentInvalid`` naming every problem, having saved nothing."""
    values = experiment_fields_check(dataset=dataset, fields=fields)
    with transaction.atomic():
        experiment = Experiment.objects.create(
            project=dataset.project, dataset=dataset, created_by=by if by is not None and by.is_authenticated else None,
            **values)
        ExperimentItem.objects.bulk_create(
            ExperimentItem(experiment=experiment, case=case, repetition=repetition)
            for case in dataset.cases.order_by("id") for repetition in range(1, experiment.repetitions + 1))
        experiment_advance(experiment.pk)
    return experiment


def experiment_advance(experiment_id: Any) -> Experiment:
    """Move the experiment on: stop it when its budget is spent, start pending items while fewer than its
    concurrency run, and finish it when nothing is pending or running. Returns it as it is now."""
    with transaction.atomic():
        experiment = Experiment.objects.select_for_update(no_key=True).get(pk=experiment_id)
        if experiment.is_finished():
            return experiment
        spent = experiment_spent(experiment)
        if experiment.max_cost_usd is not None and spent >= experiment.max_cost_usd:
            _stop(experiment, status=Experiment.Status.BUDGET_EXCEEDED,
                  error=budget_exceeded_message(experiment.max_cost_usd, spent))
            return experiment
        items = experiment.items.select_related("case")
        room = experiment.concurrency - items.filter(status=Item.RUNNING).count()
        for item in items.filter(status=Item.PENDING).order_by("repetition", "case_id")[:max(room, 0)]:
            remaining = experiment.max_cost_usd - spent if experiment.max_cost_usd is not None else None
            _item_start(item, experiment=experiment, budget=remaining)
        if not items.filter(status__in=[Item.PENDING, Item.RUNNING]).exists():
            Experiment.objects.filter(pk=experiment.pk).update(status=Experiment.Status.FINISHED,
                                                               finished_at=timezone.now())
            experiment.refresh_from_db()
    return experiment


def experiment_cancel(*, experiment: Experiment) -> bool:
    """Cancel the experiment: no item starts any more, and the runs under way are stopped (each is scored
    as it ends). Returns whether this call cancelled it (False: it had ended already)."""
    with transaction.atomic():
        locked = Experiment.objects.select_for_update(no_key=True).get(pk=experiment.pk)
        if locked.is_finished():
            return False
        _stop(locked, status=Experiment.Status.CANCELLED, error="")
    experiment.refresh_from_db()
    return True


def experiment_spent(experiment: Experiment) -> Decimal:
    """What the experiment's runs spent so far: scored items' cost, and what runs under way spent yet."""
    scored = experiment.items.filter(status=Item.SCORED).aggregate(cost=Sum("cost_usd"))["cost"] or Decimal(0)
    running = spend_of(WorkNodeExecution.objects.filter(
        run__experiment_item__experiment=experiment, run__experiment_item__status=Item.RUNNING)).cost_usd
    return scored + (running or Decimal(0))


def _item_start(item: ExperimentItem, *, experiment: Experiment, budget: Decimal | None) -> None:
    case = item.case
    task = task_create(
        project=experiment.project, hidden=True, created_by=experiment.created_by, title=case.title,
        goal_text=case.goal_text, deliverables=case.deliverables,
        acceptance_criteria=case.acceptance_criteria, constraints=case.constraints, resources=case.resources,
        planning_mode=case.planning_mode, skill=case.skill,
    )
    # Each run may spend what the experiment has left: concurrent runs together may pass it by what they
    # spend at once, as a run's parallel nodes may pass a run's budget; nothing starts after.
    run = pipeline_start(task=task, max_cost_usd=budget, start_commit=case.base_commit,
                         revision_pins=experiment.pins)
    ExperimentItem.objects.filter(pk=item.pk).update(task=task, run=run, status=Item.RUNNING)


def _stop(experiment: Experiment, *, status: str, error: str) -> None:
    Experiment.objects.filter(pk=experiment.pk).update(status=status, error=error, finished_at=timezone.now())
    experiment.status, experiment.error = status, error
    experiment.items.filter(status=Item.PENDING).update(status=Item.NOT_RUN)
    code = WorkGraphRun.StopCode.BUDGET_EXCEEDED if status == Experiment.Status.BUDGET_EXCEEDED else ""
    for run_id in experiment.items.filter(status=Item.RUNNING, run__isnull=False).values_list("run_id", flat=True):
        run_stop(run_id=run_id, error_code=code, error=error)
