"""An experiment stops as a run does: a cancel starts nothing more and stops its runs under way, each scored as
it ends; a spent budget stops it like a run's, the items it never started marked not run."""

from __future__ import annotations

from decimal import Decimal

import pytest
from ninja.testing import TestClient

from console.api import api
from graphs.experiments.launch import experiment_create
from graphs.experiments.scoring import item_score_job
from graphs.models import Dataset, DatasetCase, WorkNodeExecution
from graphs.models.experiments import Experiment

pytestmark = pytest.mark.django_db
client = TestClient(api)


@pytest.fixture
def dataset(project, settings):
    settings.WORKGRAPH_AGENT = "offline"
    dataset = Dataset.objects.create(project=project, name="cases")
    for title in ("first", "second"):
        DatasetCase.objects.create(dataset=dataset, title=title, goal_text="Do it.", base_commit="a" * 40)
    return dataset


def test_a_cancel_stops_its_runs_and_starts_nothing_more(dataset, alice, inline_executor):
    experiment = experiment_create(dataset=dataset, fields={"name": "cancelled"}, by=alice)
    running = experiment.items.get(status="running")

    answer = client.post(f"/experiments/{experiment.pk}/cancel", user=alice)
    inline_executor.drain()
    item_score_job(str(running.pk))

    assert answer.status_code == 200 and answer.json()["status"] == "cancelled"
    running.refresh_from_db()
    assert running.run.status == "cancelled" and (running.status, running.passed) == ("scored", False)
    assert list(experiment.items.values_list("status", flat=True)) == ["scored", "not_run"]
    again = client.post(f"/experiments/{experiment.pk}/cancel", user=alice)
    assert again.status_code == 409 and again.json()["code"] == "experiment_finished"


def test_a_spent_budget_stops_the_experiment_like_a_runs(dataset, alice, inline_executor):
    experiment = experiment_create(dataset=dataset, fields={"name": "budgeted", "max_cost_usd": "0.50"}, by=alice)
    first = experiment.items.get(status="running")
    assert first.run.max_cost_usd == Decimal("0.50"), "a run may spend what the experiment has left"
    inline_executor.drain()
    WorkNodeExecution.objects.filter(run=first.run).update(cost_usd=Decimal("0.30"))

    item_score_job(str(first.pk))

    experiment.refresh_from_db()
    assert experiment.status == Experiment.Status.BUDGET_EXCEEDED and "0.50" in experiment.error
    assert list(experiment.items.values_list("status", flat=True)) == ["scored", "not_run"]
