"""What the API answers: shapes, pagination, logs, limits and errors."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from graphs.engine import pipeline_start, run_start
from graphs.models import ApiToken, WorkGraphRun
from tests import factories
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def post(client: Client, url: str, body) -> object:
    return client.post(url, data=json.dumps(body), content_type="application/json")


def test_a_run_lists_every_execution_with_planning_calls_marked(api, task, inline_executor):
    pipeline_start(task=task)
    inline_executor.drain()
    run = WorkGraphRun.objects.get(task=task)
    data = api.get(f"/api/runs/{run.run_id}").json()
    assert data["graph_manifest"] == run.graph_manifest
    planning = [e["node_id"] for e in data["executions"] if e["is_planning"]]
    assert sorted(planning) == ["__planning__", "__planning__:coder", "__planning__:validator"]
    assert len(data["executions"]) == run.executions.count()
    calls = api.get(f"/api/runs/{run.run_id}/planning").json()
    assert [c["org_node"] for c in calls] == ["planner", "coder", "validator"]
    assert all(c["prompt"] and c["raw_response"] for c in calls)


def test_the_log_endpoint_pages_with_a_cursor(api, task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "a")] = "\n".join(f"line {i}" for i in range(30))
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    execution = run.executions.get(node_id="a")
    first = api.get(f"/api/executions/{execution.pk}/log?limit=10").json()
    assert [line["seq"] for line in first["lines"]] == list(range(1, 11)) and not first["complete"]
    rest = api.get(f"/api/executions/{execution.pk}/log?after={first['next_after']}&limit=1000").json()
    assert rest["lines"][0]["seq"] == 11 and rest["complete"]
    assert api.get(f"/api/executions/{execution.pk}/log?limit=5000").json()["code"] == "bad_limit"


def test_task_creation_validates_every_field_and_lists_them(api, project):
    response = post(api, "/api/tasks", {"project": project.slug, "title": "", "deliverables": [],
                                        "task_type": "workflow"})
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "validation_error"
    fields = {item["field"] for item in body["fields"]}
    assert {"title", "goal_text", "acceptance_criteria"} <= fields


def test_task_list_filters_and_bounds_its_page_size(api, project):
    for index in range(3):
        factories.TaskFactory(project=project, title=f"Export {index}", status="failed" if index else "draft")
    page = api.get("/api/tasks?status=failed&page_size=1").json()
    assert page["count"] == 2 and page["pages"] == 2 and len(page["items"]) == 1
    assert api.get("/api/tasks?page_size=1000").json()["code"] == "bad_page_size"
    assert api.get("/api/tasks?status=weird").status_code == 400


def test_an_oversized_body_is_refused_cleanly(api, project, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    response = post(api, "/api/tasks", {"project": project.slug, "title": "x", "goal_text": "g" * 20_000,
                                        "deliverables": ["d"], "acceptance_criteria": ["a"]})
    assert response.status_code == 413
    assert response.json()["code"] == "too_large"


def test_tokens_are_shown_once_stored_hashed_and_revocable(api, alice):
    created = post(api, "/api/tokens", {"name": "laptop"}).json()
    raw = created["token"]
    stored = ApiToken.objects.get(pk=created["id"])
    assert raw.startswith("wgc_") and raw not in stored.key_hash and stored.prefix == raw[:10]
    listed = api.get("/api/tokens").json()
    assert "token" not in listed[0]
    bearer = Client()
    assert bearer.get("/api/tasks", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 200
    stored.refresh_from_db()
    assert stored.last_used_at is not None
    assert api.delete(f"/api/tokens/{stored.pk}").status_code == 204
    assert bearer.get("/api/tasks", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 401
    assert api.delete(f"/api/tokens/{stored.pk}").status_code == 404


def test_a_session_post_without_the_csrf_token_is_refused(alice, project):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = post(client, "/api/tasks", {"project": project.slug, "title": "t", "goal_text": "g",
                                           "deliverables": ["d"], "acceptance_criteria": ["a"]})
    assert response.status_code in (401, 403)


def test_actions_in_the_wrong_state_are_conflicts(api, task, scripted_runner, inline_executor):
    nodes = [node("a"), node("b", "a")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.drain()
    response = post(api, f"/api/runs/{run.run_id}/cancel", {})
    assert response.status_code == 409 and response.json()["code"] == "invalid_state"
    assert post(api, f"/api/runs/{run.run_id}/approve", {}).status_code == 409
    fork = post(api, f"/api/runs/{run.run_id}/fork", {"node_id": "nope"})
    assert fork.status_code == 409 and "not in run" in fork.json()["message"]
