"""An ended run of an experiment is scored on its final tree: a succeeded run passes only when every check of
its case passes there, each check's exit code and output kept; the pass rate carries its 95 % Wilson interval."""

from __future__ import annotations

import pytest

from graphs.experiments.aggregates import experiment_aggregate, experiment_items, wilson_interval
from graphs.experiments.launch import experiment_create
from graphs.experiments.scoring import item_score_job
from graphs.models import DatasetCase, WorkNodeExecution
from graphs.models.experiments import Experiment, ExperimentItem
from tests.experiment_cases import UNIT_TESTS, demo_dataset, demo_repository

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(project, tmp_path, settings):
    settings.WORKGRAPH_AGENT = "offline"
    working, broken = demo_repository(tmp_path / "demo")
    project.target_folder, project.allow_commands = str(tmp_path / "demo"), True
    project.save(update_fields=["target_folder", "allow_commands"])
    return demo_dataset(project, working=working, broken=broken), working


def test_a_succeeded_run_fails_when_one_check_fails_on_its_final_tree(demo, alice, inline_executor):
    dataset, working = demo
    dataset.cases.all().delete()
    case = DatasetCase.objects.create(dataset=dataset, title="Export with its notes", goal_text="Export it.",
                                      base_commit=working, checks=[UNIT_TESTS, ["test", "-f", "docs/export.md"]])
    experiment = experiment_create(dataset=dataset, fields={"name": "notes"}, by=alice)
    inline_executor.drain()
    item = ExperimentItem.objects.get(experiment=experiment, case=case)

    item_score_job(str(item.pk))

    item.refresh_from_db()
    assert item.run.status == "succeeded" and item.status == "scored" and item.passed is False
    assert [(check["argv"], check["exit_code"], check["passed"]) for check in item.checks] == [
        (UNIT_TESTS, 0, True), (["test", "-f", "docs/export.md"], 1, False)]
    causes = list(WorkNodeExecution.objects.filter(run=item.run).values_list("cause", flat=True))
    assert item.duration_ms > 0
    assert (item.loop_backs, item.retries) == (causes.count("loop_back") + causes.count("dynamic_loop_back"),
                                               causes.count("retry_self") + causes.count("transient_retry"))
    assert Experiment.objects.get(pk=experiment.pk).status == "finished"


def test_a_second_scoring_of_an_item_changes_nothing(demo, alice, inline_executor):
    dataset, _ = demo
    experiment = experiment_create(dataset=dataset, fields={"name": "twice", "concurrency": 2}, by=alice)
    inline_executor.drain()
    for item in experiment.items.all():
        item_score_job(str(item.pk))
    scored = list(experiment.items.values("pk", "scored_at", "passed"))

    for item in experiment.items.all():
        item_score_job(str(item.pk))

    assert list(experiment.items.values("pk", "scored_at", "passed")) == scored
    assert [row["passed"] for row in scored] == [True, False]


def test_the_pass_rate_carries_its_wilson_interval():
    low, high = wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(5, 5)[1] == 1.0
    assert wilson_interval(0, 0) is None


def test_items_not_run_count_neither_way(demo, alice, inline_executor):
    dataset, _ = demo
    experiment = experiment_create(dataset=dataset, fields={"name": "one at a time"}, by=alice)
    inline_executor.drain()
    first = experiment.items.get(status="running")
    item_score_job(str(first.pk))
    experiment.items.filter(status="running").update(status="not_run")

    aggregate = experiment_aggregate(experiment_items(experiment))

    assert (aggregate.items, aggregate.scored, aggregate.passed, aggregate.pass_rate) == (2, 1, 1, 1.0)
