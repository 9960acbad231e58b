"""POST /api/projects/{slug}/dag-specs imports a spec as a task and a planned run; GET
/api/runs/{run_id}/dag-spec downloads the spec a run came from."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from graphs.models import Task, WorkGraphRun
from tests.clients import signed_in
from tests.dag_specs import backend_test_prompt_files, backend_test_spec, pi, spec_of

pytestmark = pytest.mark.django_db


def _post(client: Client, slug: str, body) -> object:
    return client.post(f"/api/projects/{slug}/dag-specs", data=json.dumps(body), content_type="application/json")


def _body(**fields) -> dict:
    return {"spec": backend_test_spec(), "prompt_files": backend_test_prompt_files(),
            "source_name": "backend-test-dag.json", **fields}


def test_a_lead_imports_a_spec_and_gets_the_runs_id_and_status(project, alice):
    response = _post(signed_in(alice), project.slug, _body())
    assert response.status_code == 201
    data = response.json()
    run = WorkGraphRun.objects.get(pk=data["run_id"])
    assert (data["status"], data["task_id"]) == ("ready", str(run.task_id))
    assert len(run.graph_manifest["nodes"]) == 7


def test_the_answer_warns_when_the_projects_commands_are_off_and_not_when_they_are_on(project, alice):
    [warning] = _post(signed_in(alice), project.slug, _body()).json()["warnings"]
    assert warning.startswith("the project does not allow commands, so the shell tasks execute-backend-pytest-shell")
    project.allow_commands = True
    project.save(update_fields=["allow_commands"])
    assert _post(signed_in(alice), project.slug, _body()).json()["warnings"] == []


def test_the_run_awaits_approval_when_the_project_requires_it(project, alice):
    project.require_plan_approval = True
    project.save(update_fields=["require_plan_approval"])
    assert _post(signed_in(alice), project.slug, _body()).json()["status"] == "awaiting_approval"


def test_an_invalid_spec_is_422_naming_every_problem_and_creates_nothing(project, alice):
    spec = spec_of(pi("a", "ghost"), pi("b", prompt="{{nope}}"), {"id": "c", "executor": "cursor"})
    response = _post(signed_in(alice), project.slug, {"spec": spec})
    assert response.status_code == 422
    data = response.json()
    assert data["code"] == "invalid_dag_spec"
    assert [field["field"] for field in data["fields"]] == ["spec"] * 3
    assert "depends on 'ghost'" in data["fields"][0]["message"]
    assert (Task.objects.count(), WorkGraphRun.objects.count()) == (0, 0)


def test_a_body_without_a_spec_object_is_a_400_validation_error(project, alice):
    response = _post(signed_in(alice), project.slug, {"spec": "tasks"})
    assert (response.status_code, response.json()["code"]) == (400, "validation_error")


def test_a_reviewer_may_not_import_and_a_stranger_sees_no_project(project, bob, charlie):
    assert _post(signed_in(bob), project.slug, _body()).status_code == 403
    assert _post(signed_in(charlie), project.slug, _body()).status_code == 404
    assert _post(signed_in(bob), "no-such-project", _body()).status_code == 404
    assert Task.objects.count() == 0


def test_the_spec_downloads_as_a_json_attachment(project, alice, bob):
    run_id = _post(signed_in(alice), project.slug, _body()).json()["run_id"]
    response = signed_in(bob).get(f"/api/runs/{run_id}/dag-spec")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == 'attachment; filename="backend-test-dag.json"'
    assert json.loads(response.content) == backend_test_spec()


def test_a_run_that_was_planned_has_no_spec_to_download(task, alice):
    run = WorkGraphRun.objects.create(task=task, status="ready", graph_manifest={"nodes": [], "edges": []})
    response = signed_in(alice).get(f"/api/runs/{run.run_id}/dag-spec")
    assert (response.status_code, response.json()["code"]) == (404, "not_found")
