"""Cases taken from what happened: ``from_run`` copies a run's task and the commit the run really started from;
``from_task`` copies a task and the commit of its latest run; each refuses what contradicts it, by name."""

from __future__ import annotations

import json

import pytest

from graphs.engine import run_start
from graphs.models import Dataset, DatasetCase, RunWorkspace, WorkGraphRun
from tests import factories
from tests.clients import signed_in
from tests.repos import git, writes_then_gives_up
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset(repo_task, alice):
    return Dataset.objects.create(project=repo_task.project, name="Exports that failed")


def ran(task, runner, executor) -> WorkGraphRun:
    """A run of ``task`` whose one node writes into the repository and gives up: it ends failed."""
    runner.replies[("node", "export")] = writes_then_gives_up("src/export.py", "print('csv')\n")
    nodes = [node("export")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    executor.drain()
    run.refresh_from_db()
    return run


def commit_on_main(repo, name: str) -> str:
    (repo / name).write_text(f"{name}\n")
    git(repo, "add", name)
    git(repo, "-c", "user.name=Lead", "-c", "user.email=lead@example.com", "commit", "--quiet", "-m", name)
    return git(repo, "rev-parse", "HEAD").strip()


def add(user, dataset, body: dict):
    return signed_in(user).post(f"/api/datasets/{dataset.pk}/cases", data=json.dumps(body),
                                content_type="application/json")


def test_a_case_from_a_run_is_its_task_at_the_commit_the_run_started_from(
        repo_task, repo, dataset, alice, scripted_runner, inline_executor):
    run = ran(repo_task, scripted_runner, inline_executor)
    started = RunWorkspace.objects.get(run=run).base_commit
    commit_on_main(repo, "LATER")  # the branch moves on; the case keeps the run's own commit

    answer = add(alice, dataset, {"from_run": str(run.pk), "checks": [["python3", "-c", "import export"]]})

    assert run.status == WorkGraphRun.Status.FAILED
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert (body["base_commit"], body["from_run"], body["from_task"]) == (started, str(run.pk), str(repo_task.pk))
    assert (body["title"], body["goal_text"], body["deliverables"]) == (
        repo_task.title, repo_task.goal_text, repo_task.deliverables)
    assert body["checks"] == [["python3", "-c", "import export"]] and body["base_ref"] == ""


def test_a_case_from_a_task_starts_where_its_latest_run_started(
        repo_task, repo, dataset, alice, scripted_runner, inline_executor):
    ran(repo_task, scripted_runner, inline_executor)
    moved = commit_on_main(repo, "SECOND")
    latest = ran(repo_task, scripted_runner, inline_executor)

    body = add(alice, dataset, {"from_task": str(repo_task.pk)}).json()

    assert RunWorkspace.objects.get(run=latest).base_commit == moved
    assert (body["base_commit"], body["from_task"], body["from_run"]) == (moved, str(repo_task.pk), str(latest.pk))


def test_a_task_that_never_ran_needs_a_commit_named(repo_task, repo, dataset, alice):
    refused = add(alice, dataset, {"from_task": str(repo_task.pk)})
    given = add(alice, dataset, {"from_task": str(repo_task.pk), "base_commit": "main"})

    assert refused.status_code == 400 and [item["field"] for item in refused.json()["fields"]] == ["from_task"]
    assert given.status_code == 201 and given.json()["base_commit"] == git(repo, "rev-parse", "main").strip()


def test_a_source_refuses_the_fields_it_gives_and_the_other_source(
        repo_task, dataset, alice, scripted_runner, inline_executor):
    run = ran(repo_task, scripted_runner, inline_executor)

    mixed = add(alice, dataset, {"from_run": str(run.pk), "title": "Mine", "base_commit": "main"})
    both = add(alice, dataset, {"from_run": str(run.pk), "from_task": str(repo_task.pk)})

    assert {item["field"] for item in mixed.json()["fields"]} == {"title", "base_commit"}
    assert [item["field"] for item in both.json()["fields"]] == ["from_run"]
    assert not DatasetCase.objects.exists()


def test_a_task_or_run_of_another_project_is_not_found_there(dataset, alice, scripted_runner, inline_executor):
    other = factories.TaskFactory()

    answer = add(alice, dataset, {"from_task": str(other.pk)})
    garbled = add(alice, dataset, {"from_run": "not-a-run"})

    assert answer.json()["fields"] == [{"field": "from_task", "message": (
        f"No task of this dataset's project has the id {other.pk}.")}]
    assert garbled.json()["fields"][0]["field"] == "from_run"
