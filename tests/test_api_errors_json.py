"""Every API error is JSON ``{"code", "message", "fields"}``, whatever goes wrong and wherever."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from tests.clients import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(alice) -> Client:
    client = signed_in(alice)
    client.raise_request_exception = False
    return client


def task_body(project, **fields) -> dict:
    return {"project": project.slug, "title": "Export", "goal_text": "Add CSV export.",
            "deliverables": ["A button"], "acceptance_criteria": ["It downloads"], **fields}


def assert_json_error(response, status: int) -> dict:
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"code", "message", "fields"}
    return body


def test_a_nul_byte_in_a_text_field_is_a_validation_error_naming_the_field(api, project):
    response = api.post("/api/tasks", data=json.dumps(task_body(project, title="Ex\x00port")),
                        content_type="application/json")
    body = assert_json_error(response, 400)
    assert body["code"] == "validation_error"
    assert [item["field"] for item in body["fields"]] == ["title"]


def test_a_nul_byte_in_a_list_item_or_a_nested_field_is_refused(api, project):
    response = api.post("/api/tasks", data=json.dumps(task_body(project, constraints=["ok", "no\x00"])),
                        content_type="application/json")
    assert assert_json_error(response, 400)["fields"][0]["field"] == "constraints"
    request = {
        "task_spec": {"metadata": {"title": "t", "instruction": "i"}, "context": {"extend_props": {"k\x00": 1}},
                      "goal": {"objective": "o", "acceptances": [{"id": "1", "acceptance": "a"}]}},
        "source_type": "api", "execution_config": {"task_type": "dynamic", "project": project.slug},
    }
    response = api.post("/api/v1/collaboration/tasks/execute", data=json.dumps(request),
                        content_type="application/json")
    assert assert_json_error(response, 400)["fields"][0]["field"] == "task_spec.context.extend_props"


def test_a_nul_byte_in_a_filter_is_a_validation_error(api):
    body = assert_json_error(api.get("/api/tasks?q=a%00b"), 400)
    assert body["code"] == "validation_error" and body["fields"][0]["field"] == "query.q"


def test_an_unknown_api_path_is_a_json_404(api):
    assert assert_json_error(api.get("/api/no-such-thing"), 404)["code"] == "not_found"


def test_a_method_the_route_does_not_have_is_a_json_405(api):
    assert assert_json_error(api.put("/api/tasks"), 405)["code"] == "method_not_allowed"


def test_an_unexpected_failure_is_a_json_500_without_details(api, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("the database caught fire at /srv/secret")

    monkeypatch.setattr("console.api.tasks.tasks_for_user", broken)
    body = assert_json_error(api.get("/api/tasks"), 500)
    assert body["code"] == "server_error" and "secret" not in body["message"]
