"""Every console page: who sees it, who is refused, and how."""

from __future__ import annotations

import pytest
from django.test import Client

from graphs.engine import pipeline_start, run_start
from graphs.models import WorkGraphRun
from tests import factories
from tests.clients import signed_in
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db



@pytest.fixture
def finished_pipeline(task, inline_executor):
    pipeline_start(task=task)
    inline_executor.drain()
    return WorkGraphRun.objects.get(task=task)


def page_urls(run: WorkGraphRun) -> list[str]:
    execution = run.executions.exclude(node_id__startswith="__").first()
    return [
        f"/tasks/{run.task_id}/",
        f"/runs/{run.run_id}/",
        f"/runs/{run.run_id}/graph.json",
        f"/runs/{run.run_id}/planning/",
        f"/executions/{execution.pk}/",
        f"/executions/{execution.pk}/detail.json",
        f"/executions/{execution.pk}/log.jsonl",
    ]


def test_members_see_every_page(finished_pipeline, alice, bob):
    for user in (alice, bob):
        client = signed_in(user)
        for url in ["/", "/tasks/", *page_urls(finished_pipeline)]:
            assert client.get(url).status_code == 200, url


def test_a_stranger_gets_404_not_403_for_another_projects_objects(finished_pipeline, charlie):
    client = signed_in(charlie)
    for url in page_urls(finished_pipeline):
        assert client.get(url).status_code == 404, url
    assert finished_pipeline.task.title not in client.get("/tasks/").content.decode()


def test_anonymous_users_are_sent_to_sign_in(finished_pipeline):
    for url in ["/", "/tasks/", *page_urls(finished_pipeline)]:
        response = Client().get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/"), url


def test_unknown_ids_are_404(alice):
    client = signed_in(alice)
    assert client.get("/tasks/00000000-0000-0000-0000-000000000000/").status_code == 404
    assert client.get("/runs/not-a-uuid/").status_code == 404


def test_sign_in_with_the_form(alice):
    client = Client()
    response = client.post("/login/", {"username": "alice", "password": "correct horse battery staple"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200


@pytest.mark.parametrize("action", ["plan", "pipeline"])
def test_only_a_lead_can_plan_or_run(task, bob, alice, inline_executor, action):
    assert signed_in(bob).post(f"/tasks/{task.pk}/{action}/").status_code == 403
    assert signed_in(alice).post(f"/tasks/{task.pk}/{action}/").status_code == 302


def test_a_viewer_cannot_cancel_or_fork(task, project, scripted_runner, inline_executor):
    viewer = factories.member(project, "victor", role="viewer")
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    run_start(run=run)
    client = signed_in(viewer)
    assert client.post(f"/runs/{run.run_id}/cancel/").status_code == 403
    assert client.post(f"/runs/{run.run_id}/fork/", {"node_id": "a"}).status_code == 403
    assert client.post(f"/runs/{run.run_id}/approve/").status_code == 403


def test_actions_need_post(task, alice):
    assert signed_in(alice).get(f"/tasks/{task.pk}/pipeline/").status_code == 405


def test_csrf_is_enforced_on_actions(task, alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post(f"/tasks/{task.pk}/pipeline/").status_code == 403


def test_the_lead_can_cancel_a_running_run(task, alice, scripted_runner, inline_executor):
    nodes = [node("a"), node("b", "a")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    response = signed_in(alice).post(f"/runs/{run.run_id}/cancel/")
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.status == "cancelled"
