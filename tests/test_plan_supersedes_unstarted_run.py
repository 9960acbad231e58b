"""A plan nobody started is not work under way: a new plan of the task supersedes it.

The seed's planner makes "one `work_graph_run` row (status='planning') -- moving it to 'running'/
executing it is out of scope", and planning again after a template change makes another: re-planning a
task whose latest run is only planned (``ready``, never started) ends that run ``cancelled``, its reason
saying it was superseded. A run that has started still blocks a new one.
"""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from graphs.engine import run_start
from graphs.models import WorkGraphRun
from graphs.runs.status import SUPERSEDED
from tests.clients import signed_in
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db

NODES = [node("a"), node("b", "a")]


def _only_planned(task) -> WorkGraphRun:
    return planned_run(task, {"nodes": NODES, "edges": edges_for(NODES)}, status="ready")


def _plan(client, task):
    return client.post(f"/api/tasks/{task.pk}/plan", content_type="application/json", data=json.dumps({}))


def test_a_new_plan_supersedes_a_run_that_is_only_planned(alice, task, inline_executor):
    old = _only_planned(task)

    response = _plan(signed_in(alice), task)

    assert response.status_code == 202
    old.refresh_from_db()
    assert old.status == WorkGraphRun.Status.CANCELLED
    assert old.error == SUPERSEDED
    new = WorkGraphRun.objects.exclude(pk=old.pk).get(task=task)
    assert new.status == WorkGraphRun.Status.PLANNING
    task.refresh_from_db()
    assert task.status == "planning"


def test_the_plan_command_re_plans_over_a_run_nobody_started(task, scripted_runner):
    old = _only_planned(task)
    scripted_runner.replies[("plan", "planner")] = json.dumps({"nodes": [{"node_id": "c", "task_prompt": "Do c."}]})

    call_command("plan", str(task.pk))

    old.refresh_from_db()
    assert old.status == WorkGraphRun.Status.CANCELLED
    assert WorkGraphRun.objects.exclude(pk=old.pk).get(task=task).status == WorkGraphRun.Status.READY


def test_a_pipeline_supersedes_a_run_that_is_only_planned(alice, task, inline_executor):
    old = _only_planned(task)

    response = signed_in(alice).post(f"/api/tasks/{task.pk}/pipeline", content_type="application/json", data="{}")

    assert response.status_code == 202
    old.refresh_from_db()
    assert (old.status, old.error) == (WorkGraphRun.Status.CANCELLED, SUPERSEDED)


def test_a_run_that_has_started_still_blocks_a_new_plan(alice, task, inline_executor):
    started = _only_planned(task)
    run_start(run=started)

    response = _plan(signed_in(alice), task)

    assert response.status_code == 409
    assert str(started.pk) in response.json()["message"]
    started.refresh_from_db()
    assert started.status == WorkGraphRun.Status.RUNNING
    assert WorkGraphRun.objects.filter(task=task).count() == 1


def test_a_run_awaiting_approval_still_blocks_a_new_plan(alice, task, inline_executor):
    waiting = planned_run(task, {"nodes": NODES, "edges": edges_for(NODES)}, status="awaiting_approval")

    response = _plan(signed_in(alice), task)

    assert response.status_code == 409
    assert str(waiting.pk) in response.json()["message"]


def test_the_task_page_offers_plan_over_a_run_only_planned_and_not_over_a_started_one(alice, task, inline_executor):
    run = _only_planned(task)
    client = signed_in(alice)
    url = reverse("task_detail", args=[task.pk])

    planned_page = client.get(url).content.decode()
    run_start(run=run)
    started_page = client.get(url).content.decode()

    assert 'id="run-refusal"' not in planned_page
    assert 'data-action="plan">Plan</button>' in planned_page
    assert 'id="run-refusal"' in started_page
    assert 'data-action="plan" disabled' in started_page
