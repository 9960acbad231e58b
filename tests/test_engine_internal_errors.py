"""No manifest and no bug wedges a run: what cannot be stored is a validation error naming the limit,
and an unexpected error inside a job ends the run failed with the reason."""

from __future__ import annotations

import json

import pytest

from graphs.domain import manifest as manifest_lib
from graphs.domain.manifest import ManifestError
from graphs.domain.manifest_nodes import FIELD_MAX_LENGTHS, PROMOTED_ARTIFACT_TYPE_MAX_LENGTH
from graphs.engine import executions_reap, pipeline, pipeline_start
from graphs.models import Artifact, Task, WorkGraphRun, WorkNodeExecution

pytestmark = pytest.mark.django_db


def one_node(**fields) -> dict:
    return {"nodes": [{"node_id": "a", "task_prompt": "do it", "depends_on": [], **fields}], "edges": []}


def test_the_limits_are_the_columns_the_console_stores_them_in():
    execution = WorkNodeExecution._meta
    assert FIELD_MAX_LENGTHS["node_id"] == execution.get_field("node_id").max_length
    assert FIELD_MAX_LENGTHS["node_id"] == execution.get_field("cause_node_id").max_length
    assert FIELD_MAX_LENGTHS["subagent_type"] == execution.get_field("subagent_type").max_length
    assert PROMOTED_ARTIFACT_TYPE_MAX_LENGTH == Artifact._meta.get_field("artifact_type").max_length


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ({"nodes": [{"node_id": "n" * 201, "task_prompt": "x"}], "edges": []},
         "nodes[0]: node_id is 201 characters, over the limit of 200"),
        (one_node(subagent_type="c" * 101), "node 'a': subagent_type is 101 characters, over the limit of 100"),
        (one_node(skill_ref="s" * 101), "node 'a': skill_ref is 101 characters, over the limit of 100"),
        (one_node(promotes_to_artifact={"artifact_type": "t" * 101}),
         "node 'a': promotes_to_artifact.artifact_type is 101 characters, over the limit of 100"),
    ],
)
def test_a_string_longer_than_its_column_is_a_validation_error_naming_the_limit(manifest, message):
    with pytest.raises(ManifestError) as raised:
        manifest_lib.validate_graph_manifest(manifest, (), max_nodes=50, max_depth=10)
    assert message in raised.value.errors


def test_a_planner_naming_a_node_too_long_fails_the_plan_with_the_reason(task, scripted_runner, inline_executor):
    too_long = {"nodes": [{"node_id": "n" * 250, "artifact_type": "brd", "depends_on": []}], "edges": []}
    scripted_runner.replies[("plan", "planner")] = json.dumps(too_long)

    pipeline_start(task=task)
    inline_executor.drain()

    run = WorkGraphRun.objects.get(task=task)
    assert run.status == "planning_failed"
    assert "node_id is 250 characters, over the limit of 200" in run.error
    assert Task.objects.get(pk=task.pk).status == "failed"


def test_a_bug_inside_a_job_ends_the_run_failed_with_the_reason(task, scripted_runner, inline_executor, monkeypatch):
    scripted_runner.replies[("plan", "planner")] = json.dumps(
        {"nodes": [{"node_id": "a", "artifact_type": "brd", "depends_on": []}], "edges": []}
    )

    def broken(**_):
        raise ValueError("a bug in the engine")

    monkeypatch.setattr(pipeline, "run_start", broken)
    pipeline_start(task=task)
    inline_executor.drain()

    run = WorkGraphRun.objects.get(task=task)
    assert run.status == "failed"
    assert run.error == "internal error in pipeline_plan: ValueError('a bug in the engine')"
    assert Task.objects.get(pk=task.pk).status == "failed"
    assert executions_reap() == []
    assert WorkGraphRun.objects.get(pk=run.pk).status == "failed"


@pytest.mark.services
def test_a_value_postgresql_refuses_ends_the_run_failed_instead_of_wedging_it(
    task, scripted_runner, inline_executor, monkeypatch
):
    # As if validation let a node_id through that the column cannot hold: the database refuses the row.
    monkeypatch.setitem(FIELD_MAX_LENGTHS, "node_id", 10_000)
    scripted_runner.replies[("plan", "planner")] = json.dumps(
        {"nodes": [{"node_id": "n" * 250, "artifact_type": "brd", "depends_on": []}], "edges": []}
    )

    pipeline_start(task=task)
    inline_executor.drain()

    run = WorkGraphRun.objects.get(task=task)
    assert run.status == "failed"
    assert run.error.startswith("internal error in pipeline_plan: DataError(")
    assert Task.objects.get(pk=task.pk).status == "failed"
    assert inline_executor.pending() == 0
