"""What the API accepts is what its OpenAPI document declares, and what the console's forms accept."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from console.api import api
from graphs.models import WorkGraphRun
from tests.clients import signed_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema() -> dict:
    return api.get_openapi_schema()


def query_parameter(schema: dict, path: str, name: str) -> dict:
    [parameter] = [p for p in schema["paths"][path]["get"]["parameters"] if p["name"] == name]
    return parameter["schema"]


def body_schema(schema: dict, name: str) -> dict:
    return schema["components"]["schemas"][name]


def test_the_schema_declares_the_page_size_and_log_limit_bounds(schema):
    page_size = query_parameter(schema, "/api/tasks", "page_size")
    assert (page_size["minimum"], page_size["maximum"]) == (1, 100)
    limit = query_parameter(schema, "/api/executions/{node_exec_id}/log", "limit")
    assert (limit["minimum"], limit["maximum"]) == (1, 1000)
    assert query_parameter(schema, "/api/executions/{node_exec_id}/log", "after")["minimum"] == 0


def test_the_schema_declares_the_loop_task_id_format(schema):
    loop_task_id = body_schema(schema, "ReportIn")["properties"]["loop_task_id"]
    assert loop_task_id["pattern"] and "<task_id>::<node_id>" in loop_task_id["description"]


def test_the_schema_offers_only_the_task_types_the_console_runs(schema):
    assert body_schema(schema, "ExecutionConfig")["properties"]["task_type"]["enum"] == ["dynamic", "workflow"]


def test_a_whitespace_only_reject_comment_is_refused_as_the_form_refuses_it(alice, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="awaiting_approval")
    response = signed_in(alice).post(f"/api/runs/{run.run_id}/reject", data=json.dumps({"comment": "   \n "}),
                                     content_type="application/json")
    assert response.status_code == 400 and response.json()["fields"][0]["field"] == "comment"
    run.refresh_from_db()
    assert run.status == WorkGraphRun.Status.AWAITING_APPROVAL


def test_a_reject_comment_is_stored_without_its_surrounding_blanks(alice, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="awaiting_approval")
    signed_in(alice).post(f"/api/runs/{run.run_id}/reject", data=json.dumps({"comment": "  Too broad.\n"}),
                          content_type="application/json")
    run.refresh_from_db()
    assert run.review_comment == "Too broad."


def test_only_a_lead_sees_a_projects_target_folder(alice, bob, project):
    [for_alice] = signed_in(alice).get("/api/projects").json()
    [for_bob] = signed_in(bob).get("/api/projects").json()
    assert for_alice["target_folder"] == project.target_folder
    assert for_bob["target_folder"] is None
    assert project.target_folder in signed_in(alice).get(f"/projects/{project.slug}/").content.decode()
    assert project.target_folder not in signed_in(bob).get(f"/projects/{project.slug}/").content.decode()
    assert project.target_folder not in signed_in(alice).get("/").content.decode(), "the dashboard is for reading"
    assert Client().get("/api/projects").status_code == 401
