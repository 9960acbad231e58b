"""Importing a DAG spec creates a task and its planned run in one transaction, keeps the spec with the
run (and its forks), and writes nothing at all when the spec is invalid."""

from __future__ import annotations

import json

import pytest

from graphs.engine import run_fork, run_start
from graphs.engine.review import run_plan_approve
from graphs.models import DagSpec, Task, WorkGraphRun
from graphs.planning.dag_spec_check import DagSpecError
from graphs.planning.dag_specs import dag_spec_download, dag_spec_import, run_dag_spec
from tests.dag_specs import backend_test_prompt_files, backend_test_spec, pi, spec_of
from tests.run_builders import latest

pytestmark = pytest.mark.django_db


def _import(project, alice, spec=None, **extra) -> WorkGraphRun:
    return dag_spec_import(project=project, spec=spec or backend_test_spec(),
                           prompt_files=extra.pop("prompt_files", backend_test_prompt_files()),
                           source_name="backend-test-dag.json", imported_by=alice, **extra)


def test_the_run_is_ready_with_the_translated_manifest_and_the_task_carries_the_specs_goal(project, alice):
    run = _import(project, alice)
    assert run.status == "ready"
    assert [node["node_id"] for node in run.graph_manifest["nodes"]][:2] == [
        "analyze-inputs-pi", "generate-backend-functional-cases-pi"]
    task = Task.objects.get(pk=run.task_id)
    assert (task.title, task.task_type, task.created_by, task.status) == (
        "Backend test DAG template", "workflow", alice, "ready")
    assert task.acceptance_criteria[0].startswith("analyze-inputs-pi returns a read-only test analysis contract")


def test_the_import_is_the_runs_planning_node_holding_the_spec_and_the_manifest(project, alice):
    run = _import(project, alice)
    [planning] = run.executions.filter(node_id="__planning__")
    assert (planning.status, planning.subagent_type, planning.cause) == ("succeeded", "dag_spec", "planning")
    assert json.loads(planning.output_payload["raw_response"]) == backend_test_spec()
    assert planning.output_payload["manifest"] == run.graph_manifest
    assert planning.output_payload["new_node_ids"] == [node["node_id"] for node in run.graph_manifest["nodes"]]


def test_the_run_awaits_approval_when_the_project_requires_it(project, alice):
    project.require_plan_approval = True
    project.save(update_fields=["require_plan_approval"])
    run = _import(project, alice)
    assert run.status == "awaiting_approval"
    assert Task.objects.get(pk=run.task_id).status == "awaiting_approval"


def test_an_approved_import_can_then_be_started_like_any_planned_run(project, alice, bob, scripted_runner,
                                                                    inline_executor):
    project.require_plan_approval = True
    project.save(update_fields=["require_plan_approval"])
    run = _import(project, alice, spec=spec_of(pi("a"), pi("b", "a")), prompt_files={})
    run = run_plan_approve(run=run, reviewer=bob)
    assert run.status == "ready"
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()
    assert run.status == "succeeded"
    assert scripted_runner.node_calls() == [("a", 1), ("b", 1)]


def test_the_spec_is_kept_as_imported_with_its_prompt_files(project, alice):
    run = _import(project, alice)
    kept = DagSpec.objects.get(run=run)
    assert kept.spec == backend_test_spec()
    assert set(kept.prompt_files) == set(backend_test_prompt_files())
    assert (kept.source_name, kept.imported_by) == ("backend-test-dag.json", alice)
    content, filename = dag_spec_download(kept)
    assert (json.loads(content), filename) == (backend_test_spec(), "backend-test-dag.json")


def test_a_spec_without_a_title_or_objective_is_named_for_what_it_is(project, alice):
    run = _import(project, alice, spec={"tasks": [pi("only")]}, prompt_files={})
    task = Task.objects.get(pk=run.task_id)
    assert (task.title, task.goal_text, task.workflow_id) == ("Imported DAG spec", "Imported DAG spec",
                                                              "Imported DAG spec")


def test_an_invalid_spec_writes_nothing(project, alice):
    before = (Task.objects.count(), WorkGraphRun.objects.count(), DagSpec.objects.count())
    with pytest.raises(DagSpecError) as caught:
        _import(project, alice, spec=spec_of(pi("a", "ghost"), {"id": "b", "executor": "human"}), prompt_files={})
    assert len(caught.value.errors) == 2
    assert (Task.objects.count(), WorkGraphRun.objects.count(), DagSpec.objects.count()) == before


def test_a_failure_after_the_task_was_created_rolls_the_task_back(project, alice, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("the disk is full")

    monkeypatch.setattr("graphs.planning.dag_specs.run_status_set", broken)
    with pytest.raises(RuntimeError):
        _import(project, alice)
    assert (Task.objects.count(), WorkGraphRun.objects.count(), DagSpec.objects.count()) == (0, 0, 0)


def test_a_fork_of_an_imported_run_leads_back_to_its_spec(project, alice, scripted_runner, inline_executor):
    run = _import(project, alice, spec=spec_of(pi("a"), pi("b", "a")), prompt_files={})
    run_start(run=run)
    inline_executor.drain()
    assert latest(run)["b"].status == "succeeded"
    fork = run_fork(run=WorkGraphRun.objects.get(pk=run.pk), node_id="b")
    assert run_dag_spec(fork) == DagSpec.objects.get(run=run)


def test_a_planned_run_has_no_spec(task):
    run = WorkGraphRun.objects.create(task=task, status="ready", graph_manifest={"nodes": [], "edges": []})
    assert run_dag_spec(run) is None
