"""Every run transition checks the run's current state at its source and refuses with 409 naming both."""

from __future__ import annotations

import json

import pytest

from graphs.models import WorkGraphRun
from tests.clients import signed_in
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db


def chain() -> dict:
    nodes = [node("a"), node("b", "a")]
    return {"nodes": nodes, "edges": edges_for(nodes)}


@pytest.fixture
def api(alice):
    return signed_in(alice)


def post(client, url: str, body: dict | None = None):
    return client.post(url, data=json.dumps(body or {}), content_type="application/json")


def rejected_run(task, bob):
    run = planned_run(task, chain(), status="awaiting_approval")
    response = post(signed_in(bob), f"/api/runs/{run.pk}/reject", {"comment": "the plan skips the tests"})
    assert response.status_code == 200, response.content
    return run


def test_a_rejected_plan_cannot_be_started(api, task, bob, inline_executor):
    run = rejected_run(task, bob)

    response = post(api, f"/api/runs/{run.pk}/start")

    assert response.status_code == 409
    assert response.json()["message"] == "run cannot go from 'rejected (plan)' to 'running'"
    assert not run.executions.exclude(node_id__startswith="__planning__").exists()
    assert WorkGraphRun.objects.get(pk=run.pk).status == "rejected"


@pytest.mark.parametrize("status", ["planning", "awaiting_approval", "running", "succeeded", "failed", "cancelled"])
def test_only_a_ready_run_can_be_started(api, task, inline_executor, status):
    run = planned_run(task, chain(), status=status)

    response = post(api, f"/api/runs/{run.pk}/start")

    assert response.status_code == 409
    assert response.json()["message"] == f"run cannot go from '{status}' to 'running'"
    assert WorkGraphRun.objects.get(pk=run.pk).status == status


@pytest.mark.parametrize("status", ["planning", "awaiting_approval", "ready", "running", "planning_failed"])
def test_a_run_that_did_not_run_to_its_end_cannot_be_forked(api, task, inline_executor, status):
    run = planned_run(task, chain(), status=status)

    response = post(api, f"/api/runs/{run.pk}/fork", {"node_id": "a"})

    assert response.status_code == 409
    assert response.json()["message"] == f"run cannot go from '{status}' to 'forked'"
    assert WorkGraphRun.objects.filter(task=task).count() == 1


def test_a_rejected_plan_cannot_be_forked(api, task, bob, inline_executor):
    run = rejected_run(task, bob)

    response = post(api, f"/api/runs/{run.pk}/fork", {"node_id": "a"})

    assert response.status_code == 409
    assert response.json()["message"] == "run cannot go from 'rejected (plan)' to 'forked'"


def test_a_plan_is_approved_or_rejected_once_only(task, bob, inline_executor):
    run = rejected_run(task, bob)

    response = post(signed_in(bob), f"/api/runs/{run.pk}/approve")

    assert response.status_code == 409
    assert response.json()["message"] == "run cannot go from 'rejected' to 'ready'"


def test_an_ended_run_cannot_be_cancelled(api, task, inline_executor):
    run = planned_run(task, chain(), status="succeeded")

    response = post(api, f"/api/runs/{run.pk}/cancel")

    assert response.status_code == 409
    assert response.json()["message"] == "run cannot go from 'succeeded' to 'cancelled'"


def test_the_task_page_offers_start_and_fork_only_where_the_api_accepts_them(client, alice, task, bob):
    client.force_login(alice)
    rejected = rejected_run(task, bob)
    page = client.get(f"/tasks/{task.pk}/").content.decode()
    assert f"/runs/{rejected.pk}/start/" not in page
    assert f"/runs/{rejected.pk}/fork/" not in page

    ready = planned_run(task, chain(), status="ready")
    page = client.get(f"/tasks/{task.pk}/").content.decode()
    assert f"/runs/{ready.pk}/start/" in page
