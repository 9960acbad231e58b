"""The reaper takes up runs whose next step was lost: a plan never made, a plan never started, an
advance that never happened."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from graphs.engine import executions_reap, pipeline_start
from graphs.models import WorkGraphRun
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db

PLAN = json.dumps({"nodes": [{"node_id": "brief", "artifact_type": "brd", "depends_on": []}], "edges": []})


def reap_now() -> None:
    executions_reap(stale_after=timedelta(0))


def test_a_pipeline_whose_plan_job_was_lost_is_planned_and_run(task, scripted_runner, inline_executor):
    scripted_runner.replies[("plan", "planner")] = PLAN
    run = pipeline_start(task=task)
    inline_executor.discard()  # the broker lost the plan job

    reap_now()
    inline_executor.drain()

    assert run.executions.get(node_id="__planning__").status == "succeeded"
    assert run.executions.filter(node_id="brief", status="succeeded").exists()
    assert run.executions.filter(node_id="__planning__:coder").exists(), "the pipeline went on to its next stage"


def test_a_duplicate_plan_job_plans_nothing_twice(task, scripted_runner, inline_executor):
    scripted_runner.replies[("plan", "planner")] = PLAN
    run = pipeline_start(task=task)
    reap_now()  # hands the plan job out again while the first is still queued
    inline_executor.drain(max_jobs=2)

    assert run.executions.filter(node_id="__planning__").count() == 1
    assert [call for call in scripted_runner.calls if call[0] == "plan"] == [("plan", "planner", 1)]


def test_a_planned_pipeline_that_never_started_is_started(task, scripted_runner, inline_executor):
    nodes = [node("a")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="ready")
    WorkGraphRun.objects.filter(pk=run.pk).update(pipeline=True, stage="planner")
    run.executions.update(finished_at=run.created_at)

    reap_now()

    assert WorkGraphRun.objects.get(pk=run.pk).status == "running"
    assert run.executions.filter(node_id="a").exists()


def test_a_running_run_that_was_never_advanced_is_advanced(task, scripted_runner, inline_executor):
    nodes = [node("a"), node("b", "a")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="running")
    run.executions.create(node_id="a", attempt=1, status="succeeded", finished_at=run.created_at)
    run.executions.create(node_id="b", attempt=1, status="succeeded", finished_at=run.created_at)

    reap_now()

    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
