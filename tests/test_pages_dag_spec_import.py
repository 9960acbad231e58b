"""The project page lets a lead upload a DAG spec with its prompt files; problems are listed on the
page, escaped, and nothing is created until the spec is valid. The run page offers the spec back."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from graphs.models import Task, WorkGraphRun
from tests.clients import signed_in
from tests.dag_specs import BACKEND_TEST_SPEC, FIXTURES, pi, spec_of

pytestmark = pytest.mark.django_db


def _spec_upload(spec=None, name="backend-test-dag.json") -> SimpleUploadedFile:
    content = BACKEND_TEST_SPEC.read_bytes() if spec is None else json.dumps(spec).encode()
    return SimpleUploadedFile(name, content, content_type="application/json")


def _prompt_uploads() -> list[SimpleUploadedFile]:
    return [SimpleUploadedFile(path.name, path.read_bytes(), content_type="text/markdown")
            for path in sorted(FIXTURES.glob("*.prompt.md"))]


def _page(project) -> str:
    return f"/projects/{project.slug}/"


def test_a_lead_sees_the_import_form_and_a_reviewer_does_not(project, alice, bob):
    assert 'id="dag-spec-import"' in signed_in(alice).get(_page(project)).content.decode()
    page = signed_in(bob).get(_page(project))
    assert page.status_code == 200
    assert 'id="dag-spec-import"' not in page.content.decode()


def test_a_stranger_gets_no_project_page(project, charlie):
    assert signed_in(charlie).get(_page(project)).status_code == 404


def test_uploading_the_spec_with_its_prompt_files_creates_the_run_and_opens_its_page(project, alice):
    client = signed_in(alice)
    response = client.post(_page(project), {"spec_file": _spec_upload(), "prompt_files": _prompt_uploads()})
    run = WorkGraphRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.run_id}/"
    assert run.status == "ready"
    page = client.get(response["Location"]).content.decode()
    assert f'href="/runs/{run.run_id}/dag-spec.json"' in page
    assert "The project does not allow commands, so the shell tasks execute-backend-pytest-shell" in page


def test_every_problem_is_listed_escaped_and_nothing_is_created(project, alice):
    spec = spec_of(pi("<script>alert(1)</script>", executor="cursor"), pi("b", "ghost"))
    response = signed_in(alice).post(_page(project), {"spec_file": _spec_upload(spec)})
    assert response.status_code == 400
    page = response.content.decode()
    assert "2 problems" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert "depends on &#x27;ghost&#x27;, which is not a task of the spec" in page
    assert Task.objects.count() == 0


def test_missing_prompt_files_are_named_on_the_page(project, alice):
    response = signed_in(alice).post(_page(project), {"spec_file": _spec_upload()})
    assert response.status_code == 400
    assert "backend-test-dag.retrospect.prompt.md&#x27; was not supplied" in response.content.decode()


def test_a_reviewer_may_not_post_an_import(project, bob):
    response = signed_in(bob).post(_page(project), {"spec_file": _spec_upload(), "prompt_files": _prompt_uploads()})
    assert response.status_code == 403
    assert WorkGraphRun.objects.count() == 0


def test_the_import_needs_the_csrf_token(project, alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post(_page(project), {"spec_file": _spec_upload()}).status_code == 403


def test_the_run_page_download_gives_the_spec_back(project, alice):
    signed_in(alice).post(_page(project), {"spec_file": _spec_upload(), "prompt_files": _prompt_uploads()})
    run = WorkGraphRun.objects.get()
    response = signed_in(alice).get(f"/runs/{run.run_id}/dag-spec.json")
    assert response["Content-Disposition"] == 'attachment; filename="backend-test-dag.json"'
    assert json.loads(response.content) == json.loads(BACKEND_TEST_SPEC.read_text())


def test_the_run_page_names_its_spec_without_reading_the_documents(project, alice):
    client = signed_in(alice)
    client.post(_page(project), {"spec_file": _spec_upload(), "prompt_files": _prompt_uploads()})
    run = WorkGraphRun.objects.get()
    with CaptureQueriesContext(connection) as queries:
        page = client.get(f"/runs/{run.run_id}/").content.decode()
    assert 'title="Imported from backend-test-dag.json">Download DAG spec</a>' in page
    reads = [query["sql"] for query in queries.captured_queries if 'FROM "graphs_dagspec"' in query["sql"]]
    assert reads and not [sql for sql in reads if '"graphs_dagspec"."spec"' in sql or "prompt_files" in sql]


def test_a_project_without_commands_says_its_shell_tasks_will_not_run(project, alice, commands_allowed):
    assert 'id="commands-not-allowed"' not in signed_in(alice).get(_page(project)).content.decode()
    project.allow_commands = False
    project.save(update_fields=["allow_commands"])
    assert "This project does not allow commands" in signed_in(alice).get(_page(project)).content.decode()


def test_an_imported_runs_pages_show_its_nodes_escaped(project, alice):
    spec = spec_of(pi("first", prompt="Print <b>bold</b> {{task.id}}."), pi("second", "first"))
    signed_in(alice).post(_page(project), {"spec_file": _spec_upload(spec)})
    run = WorkGraphRun.objects.get()
    client = signed_in(alice)
    assert client.get(f"/runs/{run.run_id}/").status_code == 200
    graph = client.get(f"/runs/{run.run_id}/graph.json").json()
    assert graph  # the run's graph is served like a planned one's
    planning = client.get(f"/runs/{run.run_id}/planning/")
    assert planning.status_code == 200
    page = planning.content.decode()
    assert "Print &lt;b&gt;bold&lt;/b&gt; first." in page and "<b>bold</b>" not in page
    assert client.get(f"/tasks/{run.task_id}/").status_code == 200
