"""Each project's agent calls go to the runner it names; a project naming none uses the console's default."""

from __future__ import annotations

import json

import pytest

from graphs.agents import runner_register
from graphs.engine import pipeline_start, plan_fresh, run_start
from graphs.models import Task, WorkGraphRun
from tests import factories
from tests.scripted_agents import ScriptedRunner

pytestmark = pytest.mark.django_db


@pytest.fixture
def registered():
    """A test runner registered under its own name, as an extension would register one."""
    runner = ScriptedRunner(name="registered-double")
    runner_register("registered-double", lambda: runner)
    return runner


def test_a_project_naming_a_registered_runner_has_every_call_of_its_run_made_by_it(
    settings, task, registered, inline_executor
):
    settings.WORKGRAPH_AGENT = "offline"
    task.project.agent = "registered-double"
    task.project.save(update_fields=["agent"])
    registered.replies[("plan", "planner")] = json.dumps({"nodes": [{"node_id": "write", "task_prompt": "Write."}]})

    run = plan_fresh(task=task)
    inline_executor.drain()
    run.refresh_from_db()
    run_start(run=run)
    inline_executor.drain()

    assert [(purpose, node_id) for purpose, node_id, _attempt in registered.calls] == [
        ("plan", "planner"), ("node", "write")]
    assert WorkGraphRun.objects.get(task=task).status == "succeeded"


def test_a_project_naming_no_runner_uses_the_consoles_default(settings, task, registered, inline_executor):
    settings.WORKGRAPH_AGENT = "offline"
    settings.WORKGRAPH_OFFLINE_LINE_DELAY = 0

    pipeline_start(task=task)
    inline_executor.drain()
    task.refresh_from_db()

    assert registered.calls == []
    assert task.status == Task.Status.SUCCEEDED


def test_two_projects_with_different_runners_each_keep_their_own(settings, registered, inline_executor):
    settings.WORKGRAPH_AGENT = "registered-double"
    settings.WORKGRAPH_OFFLINE_LINE_DELAY = 0
    offline_project = factories.ProjectFactory(agent="offline")
    lead = factories.member(offline_project, "alice", role="lead")
    offline_task = factories.TaskFactory(project=offline_project, created_by=lead)

    pipeline_start(task=offline_task)
    inline_executor.drain()
    offline_task.refresh_from_db()

    assert registered.calls == []
    assert offline_task.status == Task.Status.SUCCEEDED
