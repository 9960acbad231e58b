"""A task has at most one run under way: a second plan, pipeline or fork is refused, naming the first."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections

from graphs.models import WorkGraphRun
from tests.clients import signed_in
from tests.run_builders import edges_for, node, planned_run

ROUTES = ["plan", "pipeline"]


def post(client, url: str, body: dict | None = None):
    return client.post(url, data=json.dumps(body or {}), content_type="application/json")


@pytest.mark.django_db
@pytest.mark.parametrize("first", ROUTES)
@pytest.mark.parametrize("second", ROUTES)
def test_a_second_plan_or_pipeline_is_refused_while_the_first_is_under_way(
    alice, task, inline_executor, first, second
):
    api = signed_in(alice)
    assert post(api, f"/api/tasks/{task.pk}/{first}").status_code == 202
    active = WorkGraphRun.objects.get(task=task)

    response = post(api, f"/api/tasks/{task.pk}/{second}")

    assert response.status_code == 409
    assert str(active.pk) in response.json()["message"]
    assert WorkGraphRun.objects.filter(task=task).count() == 1


@pytest.mark.django_db
def test_a_fork_is_refused_while_another_run_of_the_task_is_under_way(alice, task, inline_executor):
    nodes = [node("a"), node("b", "a")]
    ended = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="failed")
    under_way = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="ready")

    response = post(signed_in(alice), f"/api/runs/{ended.pk}/fork", {"node_id": "a"})

    assert response.status_code == 409
    assert str(under_way.pk) in response.json()["message"]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_five_simultaneous_pipelines_of_one_task_start_one(alice, task, inline_executor):
    def start(_: int) -> int:
        try:
            return post(signed_in(alice), f"/api/tasks/{task.pk}/pipeline").status_code
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=5) as pool:
        answers = sorted(pool.map(start, range(5)))

    assert answers == [202, 409, 409, 409, 409]
    assert WorkGraphRun.objects.filter(task=task).count() == 1
