"""Repair requests, append mode and its guarantees."""

from __future__ import annotations

import json
import threading

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from graphs.models import WorkGraphRun
from graphs.planning.planner import plan_work_graph
from graphs.planning.planning_node import PlanningFailedError

STAGE_ONE = {
    "nodes": [
        {"node_id": "spec", "artifact_type": "prd"},
        {"node_id": "design", "artifact_type": "sdd", "depends_on": ["spec"]},
    ],
    "edges": [{"from": "spec", "to": "design", "edge_type": "needs_judgment"}],
}
BAD_LOOP_BACK = {
    "nodes": [
        {"node_id": "a", "task_prompt": "A"},
        {"node_id": "b", "task_prompt": "B", "on_fail": {"action": "loop_back"}},
    ],
    "edges": [{"from": "b", "to": "a", "edge_type": "on_failure"}],
}


def fenced(manifest: dict) -> str:
    return "Here is the plan.\n```json\n" + json.dumps(manifest) + "\n```\n"


@pytest.mark.django_db
def test_an_invalid_manifest_gets_one_repair_request_carrying_the_errors(task, scripted_runner):
    fixed = {"nodes": [{"node_id": "a", "task_prompt": "A"}, {"node_id": "b", "task_prompt": "B", "depends_on": ["a"]}],
             "edges": []}
    answers = iter([fenced(BAD_LOOP_BACK), fenced(fixed)])
    scripted_runner.replies[("plan", "planner")] = lambda call: next(answers)
    result = plan_work_graph("planner", task, task.goal_text)
    payload = result.planning_execution.output_payload
    assert result.new_node_ids == ["a", "b"]
    assert "'b'" in payload["repair_prompt"] and "upstream" in payload["repair_prompt"]
    assert payload["repair_response"] == fenced(fixed)
    assert payload["validation_errors"] == []


@pytest.mark.django_db
def test_planning_gives_up_after_the_repair_also_fails(task, scripted_runner):
    scripted_runner.replies[("plan", "planner")] = fenced(BAD_LOOP_BACK)
    with pytest.raises(PlanningFailedError, match="not usable") as failure:
        plan_work_graph("planner", task, task.goal_text)
    assert len([c for c in scripted_runner.calls if c[0] == "plan"]) == 2
    execution = failure.value.planning_execution
    assert execution.output_payload["validation_errors"]
    assert execution.output_payload["raw_response"] == fenced(BAD_LOOP_BACK)
    assert WorkGraphRun.objects.get(task=task).status == "planning_failed"


@pytest.mark.django_db
def test_text_with_no_manifest_is_a_clear_failure(task, scripted_runner):
    scripted_runner.replies[("plan", "planner")] = "I could not decide on a plan, sorry."
    with pytest.raises(PlanningFailedError, match="no graph_manifest JSON object"):
        plan_work_graph("planner", task, task.goal_text)


@pytest.mark.django_db
def test_an_append_tells_the_agent_the_existing_ids_and_merges_its_nodes(task, scripted_runner):
    scripted_runner.replies[("plan", "planner")] = fenced(STAGE_ONE)
    run = plan_work_graph("planner", task, task.goal_text).run
    coder = {
        "nodes": [
            {"node_id": "impl", "task_prompt": "Build it.", "depends_on": ["design"]},
            {"node_id": "tests", "task_prompt": "Test it.", "depends_on": ["impl"],
             "on_fail": {"action": "loop_back"}},
        ],
        "edges": [{"from": "tests", "to": "spec", "edge_type": "on_failure"}],
    }
    scripted_runner.replies[("plan", "coder")] = fenced(coder)
    result = plan_work_graph("coder", task, task.goal_text, append_to_run_id=run.run_id)
    assert result.run.run_id == run.run_id
    assert result.new_node_ids == ["impl", "tests"]
    assert [n["node_id"] for n in result.graph_manifest["nodes"]] == ["spec", "design", "impl", "tests"]
    assert result.run.manifest_version == 2
    assert "spec" in result.planning_execution.input_payload["prompt"]
    assert result.planning_execution.node_id == "__planning__:coder"
    assert run.executions.filter(node_id__startswith="__planning__").count() == 2


@pytest.mark.django_db
def test_an_appended_loop_back_must_reach_an_upstream_node_of_the_merged_graph(task, scripted_runner):
    docs = {"node_id": "docs", "artifact_type": "brd"}
    two_branches = {"nodes": [*STAGE_ONE["nodes"], docs], "edges": STAGE_ONE["edges"]}
    scripted_runner.replies[("plan", "planner")] = fenced(two_branches)
    run = plan_work_graph("planner", task, task.goal_text).run
    sideways = {
        "nodes": [{"node_id": "impl", "task_prompt": "Build it.", "depends_on": ["design"],
                   "on_fail": {"action": "loop_back"}}],
        "edges": [{"from": "impl", "to": "docs", "edge_type": "on_failure"}],
    }
    scripted_runner.replies[("plan", "coder")] = fenced(sideways)
    with pytest.raises(PlanningFailedError, match="loop_back target 'docs' is not an upstream dependency of 'impl'"):
        plan_work_graph("coder", task, task.goal_text, append_to_run_id=run.run_id)
    run.refresh_from_db()
    assert [n["node_id"] for n in run.graph_manifest["nodes"]] == ["spec", "design", "docs"]
    assert len([c for c in scripted_runner.calls if c[0] == "plan" and c[1] == "coder"]) == 2, "one repair request"


@pytest.mark.django_db
def test_a_colliding_append_leaves_the_run_unchanged(task, scripted_runner):
    scripted_runner.replies[("plan", "planner")] = fenced(STAGE_ONE)
    run = plan_work_graph("planner", task, task.goal_text).run
    scripted_runner.replies[("plan", "coder")] = fenced({"nodes": [{"node_id": "design", "task_prompt": "Again"}]})
    with pytest.raises(PlanningFailedError, match="design") as failure:
        plan_work_graph("coder", task, task.goal_text, append_to_run_id=run.run_id)
    run.refresh_from_db()
    assert [n["node_id"] for n in run.graph_manifest["nodes"]] == ["spec", "design"]
    assert run.manifest_version == 1 and run.status == "ready"
    assert failure.value.planning_execution.status == "failed"


@pytest.mark.django_db
def test_the_plan_command_prints_the_run_nodes_and_planning_execution(task, capsys):
    call_command("plan", str(task.pk), "--org-node", "planner")
    out = capsys.readouterr().out
    run = WorkGraphRun.objects.get(task=task)
    assert f"run: {run.run_id}" in out
    assert "new nodes: brd" in out
    assert str(run.executions.get(node_id="__planning__").pk) in out


@pytest.mark.django_db
def test_the_plan_command_fails_with_the_reason(task, scripted_runner):
    scripted_runner.replies[("plan", "planner")] = "nothing useful"
    with pytest.raises(CommandError, match=r"planning failed .*no graph_manifest"):
        call_command("plan", str(task.pk))


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_of_distinct_nodes_all_survive(task, scripted_runner):
    scripted_runner.replies[("plan", "planner")] = fenced(STAGE_ONE)
    run = plan_work_graph("planner", task, task.goal_text).run
    for index in range(8):
        scripted_runner.replies[("plan", f"worker{index}")] = fenced(
            {"nodes": [{"node_id": f"w{index}", "task_prompt": "Part.", "depends_on": ["design"]}]}
        )
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def append(index: int) -> None:
        try:
            barrier.wait(timeout=10)
            plan_work_graph(f"worker{index}", task, task.goal_text, append_to_run_id=run.run_id)
        except BaseException as error:  # collected and asserted below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=append, args=(index,)) for index in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    run.refresh_from_db()
    assert sorted(n["node_id"] for n in run.graph_manifest["nodes"]) == sorted(
        ["spec", "design", *[f"w{index}" for index in range(8)]]
    )
    assert run.manifest_version == 9
