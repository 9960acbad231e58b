"""Planning calls against the claude CLI contract (a fake CLI) and the offline agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphs.agents import AgentError, get_runner
from graphs.logs.store import log_read
from graphs.models import ExecutionLogFile, WorkGraphRun, WorkNodeExecution
from graphs.planning.planner import plan_work_graph
from graphs.planning.planning_node import PlanningFailedError

pytestmark = pytest.mark.django_db

TESTS = Path(__file__).parent
FIXTURES = TESTS / "fixtures" / "claude"


@pytest.fixture
def claude_cli(settings, monkeypatch):
    """Point the claude runner at the fake CLI; returns a function choosing its fixture."""
    settings.WORKGRAPH_AGENT = "claude"
    settings.WORKGRAPH_CLAUDE_BIN = str(TESTS / "fake_claude.py")
    settings.WORKGRAPH_TRANSIENT_RETRIES = 0

    def use(name: str) -> None:
        monkeypatch.setenv("FAKE_CLAUDE_FIXTURE", str(FIXTURES / name))

    return use


def planning_rows(run: WorkGraphRun) -> list[WorkNodeExecution]:
    return list(run.executions.filter(node_id__startswith="__planning__"))


def log_events(execution: WorkNodeExecution) -> list[str]:
    return [line["event"] for line in log_read(log_file=execution.log_file)]


def test_a_fresh_plan_creates_the_run_and_one_planning_node_with_a_closed_log(task):
    result = plan_work_graph("planner", task, task.goal_text)
    run = result.run
    assert run.status == "ready"
    assert run.manifest_version == 1
    assert result.new_node_ids == [node["node_id"] for node in run.graph_manifest["nodes"]]
    [planning] = planning_rows(run)
    assert planning == result.planning_execution
    assert (planning.node_id, planning.subagent_type, planning.status) == ("__planning__", "planner", "succeeded")
    assert task.goal_text in planning.input_payload["prompt"]
    assert planning.output_payload["raw_response"]
    assert planning.output_payload["manifest"] == run.graph_manifest
    assert planning.log_file.status == ExecutionLogFile.Status.CLOSED
    events = log_events(planning)
    assert events[0] == "node_start" and events[-1] == "node_completed"
    assert "agent_output" in events


def test_a_project_that_requires_approval_leaves_the_plan_awaiting_it(task):
    task.project.require_plan_approval = True
    task.project.save()
    assert plan_work_graph("planner", task, task.goal_text).run.status == "awaiting_approval"


def test_prose_with_a_fenced_manifest_from_the_cli_is_planned(task, claude_cli):
    claude_cli("plan_prose_fenced.json")
    result = plan_work_graph("planner", task, task.goal_text)
    assert result.run.status == "ready"
    assert result.new_node_ids


# Committed as it goes, as a planning job's work is: the CLI's events reach the log writer while the
# planning node's log header is in the database for it to see, not inside this test's transaction.
@pytest.mark.django_db(transaction=True)
def test_a_planning_calls_events_are_lines_of_its_log_and_its_accounting_is_kept(task, claude_cli):
    claude_cli("streaming.json")
    result = plan_work_graph("planner", task, task.goal_text)
    lines = log_read(log_file=result.planning_execution.log_file)
    agent_lines = [line for line in lines if line.get("purpose") == "plan"]
    assert [line["event"] for line in agent_lines][:3] == ["agent_init", "agent_text", "tool_call"], [
        (line["seq"], line["event"]) for line in lines]
    assert agent_lines[-1]["event"] == "agent_result" and agent_lines[-1]["total_cost_usd"] == 0.2113
    [call] = result.planning_execution.output_payload["agent_calls"]
    assert (call["cost_usd"], call["num_turns"], call["tool_calls"]) == (0.2113, 4, 3)
    assert call["model"] == "claude-sonnet-4-5-20250929"
    assert result.planning_execution.output_payload["usage"] == [call["usage"]]


def planner_run(task) -> WorkGraphRun:
    """A run holding the offline planner's catalog nodes (brd, prd, sdd, …) for appends to build on."""
    return plan_work_graph("planner", task, task.goal_text, runner=get_runner("offline")).run


def test_id_keys_and_edge_only_dependencies_are_normalized_and_noted(task, claude_cli):
    run = planner_run(task)
    claude_cli("plan_id_edges_only.json")
    result = plan_work_graph("coder", task, task.goal_text, append_to_run_id=run.run_id)
    nodes = {node["node_id"]: node for node in result.run.graph_manifest["nodes"] if node["node_id"] in
             result.new_node_ids}
    assert all("id" not in node for node in nodes.values())
    assert "sdd" in nodes["impl_export"]["depends_on"]
    notes = result.planning_execution.output_payload["normalization_notes"]
    assert any("renamed to 'node_id'" in note for note in notes)
    assert any("back-filled" in note for note in notes)


def test_the_graph_manifest_wrapper_is_unwrapped(task, claude_cli):
    run = planner_run(task)
    claude_cli("plan_wrapped.json")
    result = plan_work_graph("validator", task, task.goal_text, append_to_run_id=run.run_id)
    assert "graph_manifest" not in result.run.graph_manifest
    assert result.new_node_ids
    assert result.planning_execution.node_id == "__planning__:validator"


@pytest.mark.parametrize(
    ("fixture", "reason"),
    [
        ("is_error.json", "(is_error)"),
        ("exit_code.json", "(exit_code)"),
        ("not_json.json", "(invalid_output)"),
        ("no_result.json", "(invalid_output)"),
        ("max_turns.json", "(max_turns)"),
    ],
)
def test_a_failing_cli_ends_in_planning_failed_with_the_output_kept(task, claude_cli, fixture, reason):
    claude_cli(fixture)
    with pytest.raises(PlanningFailedError) as failure:
        plan_work_graph("planner", task, task.goal_text)
    assert reason in failure.value.reason
    run = WorkGraphRun.objects.get(task=task)
    assert run.status == "planning_failed"
    assert run.graph_manifest == {}
    assert run.error == failure.value.reason
    [planning] = planning_rows(run)
    assert planning.status == "failed" and planning.error == failure.value.reason
    assert log_events(planning)[-1] == "planning_failed"
    assert planning.log_file.status == "closed"


def test_a_hang_past_the_timeout_is_a_planning_failure_not_a_hang(task, claude_cli):
    claude_cli("hang.json")
    with pytest.raises(PlanningFailedError, match=r"\(timeout\)"):
        plan_work_graph("planner", task, task.goal_text, timeout=1.0)
    assert WorkGraphRun.objects.get(task=task).status == "planning_failed"


def test_a_transient_failure_is_retried_inside_the_same_planning_call(task, scripted_runner, settings):
    settings.WORKGRAPH_TRANSIENT_RETRIES = 2
    settings.WORKGRAPH_BACKOFF_BASE = 0.01
    manifest = {"nodes": [{"node_id": "only", "task_prompt": "Do it."}], "edges": []}
    answers = iter([AgentError("busy", kind="rate_limit"), json.dumps(manifest)])

    def reply(call):
        answer = next(answers)
        if isinstance(answer, AgentError):
            raise answer
        return answer

    scripted_runner.replies[("plan", "planner")] = reply
    result = plan_work_graph("planner", task, task.goal_text)
    assert result.new_node_ids == ["only"]
    assert len(planning_rows(result.run)) == 1
    assert "agent_retry" in log_events(result.planning_execution)
