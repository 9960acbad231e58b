"""The task-loop collaboration contract: execute → dashboard → report → duplicate report → bad report."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from graphs.models import Task, WorkGraphRun

pytestmark = pytest.mark.django_db

URL = "/api/v1/collaboration/tasks"


@pytest.fixture
def api(alice, project) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def post(client: Client, url: str, body) -> object:
    return client.post(url, data=json.dumps(body), content_type="application/json")


def task_request(**config) -> dict:
    return {
        "task_spec": {
            "metadata": {"title": "CSV export", "instruction": "Add a CSV export to the reports page."},
            "context": {"background": "Users ask for spreadsheets.", "extend_props": {"teamclaw_context": {}}},
            "goal": {"objective": "Export reports", "acceptances": [{"id": "ac1", "acceptance": "Opens in Excel"}]},
        },
        "source_type": "api",
        "owner_user_id": "u1",
        "owner_bot_id": "b1",
        "execution_config": {"task_type": "dynamic", **config},
    }


def test_the_whole_collaboration_loop(api, inline_executor, scripted_runner):
    scripted_runner.replies[("plan", "planner")] = json.dumps(
        {"nodes": [{"node_id": "write", "task_prompt": "Write it.", "executor": "external"},
                   {"node_id": "ship", "task_prompt": "Ship.", "executor": "external", "depends_on": ["write"]}]})
    created = post(api, f"{URL}/execute", task_request())
    assert created.status_code == 200
    body = created.json()
    assert body["success"] is True and body["data"]["status"] == "planning"
    task = Task.objects.get(pk=body["data"]["task_id"])
    assert task.acceptance_criteria == ["Opens in Excel"]

    # The planner runs; "write", an external node, is then queued, and an external bot reports it.
    inline_executor.drain(max_jobs=1)  # the planning job only
    inline_executor.discard()  # the node jobs are dropped: an external bot does the work
    dashboard = api.get(f"{URL}/dashboard?task_id={task.pk}").json()["data"]
    assert dashboard["task"]["status"] == "running"
    assert [n["loop_task_id"] for n in dashboard["nodes"]] == [f"{task.pk}::write", f"{task.pk}::ship"]

    report = {"loop_task_id": f"{task.pk}::write",
              "result": {"success": True, "data": {"result": "def export(): ..."}, "gaps": []}}
    first = post(api, f"{URL}/callback/report", report).json()
    assert first["data"]["changed"] is True and first["data"]["status"] == "succeeded"
    again = post(api, f"{URL}/callback/report", report).json()
    assert again["data"]["changed"] is False
    run = WorkGraphRun.objects.get(task=task)
    assert run.executions.filter(node_id="write").count() == 1

    bad = post(api, f"{URL}/callback/report", {"loop_task_id": f"{task.pk}::ship", "result": {"success": False,
                                                                                           "gaps": []}})
    assert bad.status_code == 400 and bad.json()["code"] == "gaps_required"
    different = post(api, f"{URL}/callback/report", {**report, "result": {"success": True, "data": {"result": "x"}}})
    assert different.status_code == 409 and different.json()["code"] == "already_finished"
    dashboard = api.get(f"{URL}/dashboard?task_id={task.pk}").json()["data"]
    assert dashboard["nodes"][0]["output"] == "def export(): ..."


def test_a_workflow_without_its_id_is_a_400_and_dynamic_needs_neither(api, inline_executor):
    response = post(api, f"{URL}/execute", task_request(task_type="workflow"))
    assert response.status_code == 400
    assert "workflow_id" in json.dumps(response.json())
    assert post(api, f"{URL}/execute", task_request()).status_code == 200
    assert post(api, f"{URL}/execute", task_request(task_type="workflow", workflow_id="wf-7")).status_code == 200


@pytest.mark.parametrize(
    ("loop_task_id", "code"),
    [("nonsense", "bad_loop_task_id"), ("00000000-0000-0000-0000-000000000000::", "bad_loop_task_id")],
)
def test_malformed_reports_are_rejected_with_the_reason(api, loop_task_id, code):
    response = post(api, f"{URL}/callback/report", {"loop_task_id": loop_task_id, "result": {"success": True}})
    assert response.status_code == 400 and response.json()["code"] == code
