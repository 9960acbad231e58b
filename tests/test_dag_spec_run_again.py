"""A task imported from a DAG spec runs as its spec: "Run again" (the task page's, or the API's pipeline)
makes a new run of the stored spec — the same import, a new run beside the earlier ones — and never
starts the generic planner pipeline."""

from __future__ import annotations

import pytest
from django.test import Client

from graphs.models import PLANNING_NODE_ID, DagSpec, WorkGraphRun
from graphs.planning.dag_spec_check import DagSpecError
from graphs.planning.dag_specs import dag_spec_import, dag_spec_run_again, run_dag_spec
from graphs.runs.status import run_status_set
from tests.clients import signed_in
from tests.dag_specs import pi, spec_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def imported(project, alice) -> WorkGraphRun:
    """An imported spec's first run, ended."""
    run = dag_spec_import(project=project, spec=spec_of(pi("draft"), pi("polish", "draft")),
                          source_name="small.json", imported_by=alice)
    run_status_set(run=run, status="cancelled")
    return run


def test_run_again_on_the_task_page_makes_a_new_run_of_the_stored_spec(imported, alice, inline_executor):
    client = Client()
    client.force_login(alice)
    page = client.get(f"/tasks/{imported.task_id}/").content.decode()
    assert ">Run again</button>" in page and ">Run pipeline</button>" not in page
    assert 'data-action="plan"' not in page, "an imported task has no planner to ask"

    response = client.post(f"/tasks/{imported.task_id}/pipeline/", follow=True)
    assert [str(m) for m in response.context["messages"]] == ["A new run of the imported spec was made."]
    again = WorkGraphRun.objects.filter(task_id=imported.task_id).exclude(pk=imported.pk).get()
    assert not again.pipeline, "not the generic pipeline"
    assert again.graph_manifest == imported.graph_manifest
    assert [node_id for node_id in again.executions.values_list("node_id", flat=True)
            if node_id.startswith(PLANNING_NODE_ID)] == [PLANNING_NODE_ID], "no planner was asked"
    stored = DagSpec.objects.get(run=again)
    assert (stored.spec, stored.source_name) == (imported.dag_spec.spec, "small.json")
    assert run_dag_spec(again) == stored
    # It started at once: the project does not ask for plans to be approved.
    inline_executor.drain()
    again.refresh_from_db()
    assert again.status == "succeeded"


def test_the_apis_pipeline_runs_an_imported_task_as_its_spec(imported, alice):
    response = signed_in(alice).post(f"/api/tasks/{imported.task_id}/pipeline", content_type="application/json")
    assert response.status_code == 202
    assert response.json()["detail"] == "a new run of the imported spec was made"
    again = WorkGraphRun.objects.filter(task_id=imported.task_id).exclude(pk=imported.pk).get()
    assert not again.pipeline and DagSpec.objects.filter(run=again).exists()


def test_a_project_that_approves_plans_gets_the_new_run_awaiting_approval(imported, project):
    project.require_plan_approval = True
    project.save(update_fields=["require_plan_approval"])
    again = dag_spec_run_again(task=imported.task)
    assert again.status == "awaiting_approval"


def test_a_planned_task_cannot_be_run_again_as_a_spec(task):
    with pytest.raises(DagSpecError, match="not imported from a DAG spec"):
        dag_spec_run_again(task=task)


def test_run_again_waits_for_the_run_under_way(project, alice):
    run = dag_spec_import(project=project, spec=spec_of(pi("draft")), imported_by=alice)
    client = Client()
    client.force_login(alice)
    page = client.get(f"/tasks/{run.task_id}/").content.decode()
    assert 'id="run-pipeline" disabled' in page
    response = client.post(f"/tasks/{run.task_id}/pipeline/", follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        "Refused: a run is under way: cancel it or wait for it to end."]
    assert WorkGraphRun.objects.filter(task_id=run.task_id).count() == 1
