"""An experiment runs each case and repetition as an ordinary run of a task of its own, in its own worktree at the
case's commit, and scores it by running the case's checks — the demo project's real unit tests — on the run's
final tree; no real task's status moves, and the runs list filtered by the experiment shows its runs."""

from __future__ import annotations

import time

import pytest
from ninja.testing import TestClient

from console.api import api
from graphs.executors import ThreadExecutor, executor_set
from graphs.models import RunWorkspace, Task
from graphs.models.experiments import Experiment
from graphs.reads.task_lists import tasks_for_user
from tests import factories
from tests.experiment_cases import demo_dataset, demo_repository

client = TestClient(api)


def finished(experiment_id: int, *, timeout: float) -> Experiment:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        experiment = Experiment.objects.get(pk=experiment_id)
        if experiment.is_finished():
            return experiment
        time.sleep(0.2)
    pytest.fail(f"experiment {experiment_id} did not finish in {timeout} s: {list(experiment.items.values())}")


@pytest.fixture
def demo_project(project, tmp_path, settings):
    settings.WORKGRAPH_AGENT = "offline"
    working, broken = demo_repository(tmp_path / "demo")
    project.target_folder, project.allow_commands = str(tmp_path / "demo"), True
    project.save(update_fields=["target_folder", "allow_commands"])
    return project, working, broken


@pytest.mark.django_db(transaction=True)
def test_each_case_runs_at_its_commit_and_passes_only_when_its_unit_tests_pass_on_the_final_tree(
        demo_project, alice, bob):
    project, working, broken = demo_project
    real_task = factories.TaskFactory(project=project, created_by=alice)
    dataset = demo_dataset(project, working=working, broken=broken)
    previous = executor_set(ThreadExecutor(workers=4))
    try:
        answer = client.post("/experiments", json={"dataset": dataset.pk, "name": "baseline", "repetitions": 2,
                                                   "concurrency": 2}, user=alice)
        assert answer.status_code == 201, answer.json()
        experiment = finished(answer.json()["id"], timeout=180)
    finally:
        executor_set(previous)

    read = client.get(f"/experiments/{experiment.pk}", user=bob).json()
    assert read["status"] == "finished"
    items = read["items"]
    assert [(item["case_title"], item["repetition"]) for item in items] == [
        ("Export at a working commit", 1), ("Export at a working commit", 2),
        ("Export at a broken commit", 1), ("Export at a broken commit", 2)]
    assert all(item["status"] == "scored" for item in items), items
    assert [(item["run_status"], item["passed"]) for item in items] == [
        ("succeeded", True), ("succeeded", True), ("failed", False), ("failed", False)]
    assert [check["exit_code"] for check in items[0]["checks"]] == [0]
    assert "OK" in items[0]["checks"][0]["output"]
    assert items[2]["checks"] == [], "a failed run's tree is not checked: it fails as it is"
    assert all(item["cost_usd"] is not None and item["duration_ms"] > 0 for item in items)
    aggregate = read["aggregate"]
    assert (aggregate["scored"], aggregate["passed"], aggregate["pass_rate"]) == (4, 2, 0.5)
    assert 0 < aggregate["pass_rate_low"] < 0.5 < aggregate["pass_rate_high"] < 1

    starts = {str(workspace.run_id): workspace.base_commit for workspace in RunWorkspace.objects.all()}
    assert [starts[item["run"]] for item in items] == [working, working, broken, broken]
    listed = client.get(f"/runs?experiment={experiment.pk}", user=bob).json()
    assert {row["run_id"] for row in listed["items"]} == {item["run"] for item in items}
    real_task.refresh_from_db()
    assert real_task.status == Task.Status.DRAFT
    assert list(tasks_for_user(alice)) == [real_task], "an experiment's own tasks are on no task list"
