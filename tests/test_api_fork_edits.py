"""POST /api/runs/{id}/fork with a prompt or argv edit: the new run with its edit, the rules' refusals as
400s that name the field and make nothing, and the same roles as a plain fork."""

from __future__ import annotations

import json

import pytest

from graphs.models import WorkGraphRun
from tests.clients import signed_in
from tests.run_builders import finished_build_check_tests

pytestmark = pytest.mark.django_db


def post(client, url: str, body) -> object:
    return client.post(url, data=json.dumps(body), content_type="application/json")


@pytest.fixture
def finished(task, scripted_runner, inline_executor) -> WorkGraphRun:
    return finished_build_check_tests(task, inline_executor)


def test_a_prompt_edit_returns_the_new_run_with_its_edit(alice, finished, inline_executor):
    answer = post(signed_in(alice), f"/api/runs/{finished.run_id}/fork",
                  {"node_id": "check", "prompt": "Check the CSV export only."})

    assert answer.status_code == 201, answer.content
    data = answer.json()
    assert (data["forked_from_id"], data["fork_node_id"]) == (str(finished.run_id), "check")
    assert {key: data["fork_edit"][key] for key in ("node_id", "field", "before", "after", "by")} == {
        "node_id": "check", "field": "task_prompt", "before": "Do check.", "after": "Check the CSV export only.",
        "by": "alice"}
    assert data["graph_manifest"]["nodes"][1]["task_prompt"] == "Check the CSV export only."
    inline_executor.drain()
    assert WorkGraphRun.objects.get(pk=data["run_id"]).status in ("succeeded", "failed")


def test_an_argv_edit_is_held_to_the_command_rules(alice, finished):
    client = signed_in(alice)
    url = f"/api/runs/{finished.run_id}/fork"

    refused = post(client, url, {"node_id": "tests", "argv": ["python3", ""]})
    assert refused.status_code == 400
    assert refused.json()["code"] == "invalid_edit"
    assert refused.json()["fields"] == [{"field": "argv", "message": "The argv[1] must be a non-empty string, not ''"}]
    assert post(client, url, {"node_id": "tests", "argv": "python3 -V"}).json()["code"] == "validation_error"
    assert WorkGraphRun.objects.count() == 1

    accepted = post(client, url, {"node_id": "tests", "argv": ["python3", "-V"]})
    assert accepted.status_code == 201
    assert accepted.json()["fork_edit"]["after"] == ["python3", "-V"]


def test_an_empty_prompt_or_a_prompt_for_a_command_node_is_refused(alice, finished):
    client = signed_in(alice)
    url = f"/api/runs/{finished.run_id}/fork"

    empty = post(client, url, {"node_id": "check", "prompt": "   "})
    assert (empty.status_code, empty.json()["fields"]) == (
        400, [{"field": "prompt", "message": "The prompt cannot be empty."}])
    wrong = post(client, url, {"node_id": "tests", "prompt": "Run the tests."})
    assert wrong.status_code == 400 and "tests is a command node" in wrong.json()["message"]
    assert WorkGraphRun.objects.count() == 1


def test_a_fork_without_an_edit_is_the_plain_fork(alice, finished):
    answer = post(signed_in(alice), f"/api/runs/{finished.run_id}/fork", {"node_id": "check"})
    assert answer.status_code == 201
    assert answer.json()["fork_edit"] == {}


def test_a_reviewer_may_not_fork_with_an_edit(bob, finished):
    answer = post(signed_in(bob), f"/api/runs/{finished.run_id}/fork", {"node_id": "check", "prompt": "Anything."})
    assert answer.status_code == 403
    assert WorkGraphRun.objects.count() == 1


def test_where_plans_need_approval_the_edited_fork_answers_awaiting_approval(alice, project, finished):
    project.require_plan_approval = True
    project.save(update_fields=["require_plan_approval"])

    data = post(signed_in(alice), f"/api/runs/{finished.run_id}/fork",
                {"node_id": "check", "prompt": "Check twice."}).json()

    assert data["status"] == "awaiting_approval"
    assert data["awaiting_approval_of"]["stage"] == "plan"
