"""The planner → coder → validator pipeline in one run, and the verdict that decides the task."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from graphs.engine import pipeline_start
from graphs.executors import job_run
from graphs.models import Skill, Task, WorkGraphRun
from tests import factories
from tests.run_builders import latest

pytestmark = pytest.mark.django_db


def test_the_offline_pipeline_plans_three_stages_into_one_run_and_passes(task, inline_executor):
    pipeline_start(task=task)
    inline_executor.drain()
    task.refresh_from_db()
    run = WorkGraphRun.objects.get(task=task)

    assert task.status == Task.Status.SUCCEEDED
    assert (task.outcome["verdict"], task.outcome["verdict_line"]) == ("PASS", "pass")
    assert "root_cause" not in task.outcome
    assert run.status == "succeeded" and run.stage == "validator"
    planning = {row.node_id: row.subagent_type for row in run.executions.filter(node_id__startswith="__planning__")}
    assert planning == {"__planning__": "planner", "__planning__:coder": "coder", "__planning__:validator": "validator"}
    rows = latest(run)
    assert set(rows) == {node["node_id"] for node in run.graph_manifest["nodes"]}
    assert {row.status for row in rows.values()} == {"succeeded"}
    assert {row.subagent_type for row in rows.values()} == {"planner", "coder", "validator"}
    loop_backs = run.executions.filter(cause="loop_back")
    assert loop_backs.exists(), "the offline judge fails one loop-back node once"
    assert run.artifacts.exists()


def test_where_commands_run_the_offline_verdict_follows_an_executed_test_script(
    task, commands_allowed, inline_executor
):
    pipeline_start(task=task)
    inline_executor.drain()
    task.refresh_from_db()
    run = WorkGraphRun.objects.get(task=task)
    rows = latest(run)

    assert task.status == Task.Status.SUCCEEDED
    ran = rows["validator_run_test_script"]
    assert ran.status == "succeeded"
    assert (ran.output_payload["exit_code"], ran.judgment_result["kind"]) == (0, "command")
    assert "placeholder check for node validator_test_script: nothing was tested" in ran.output_payload["text"]
    assert "validator_run_test_script" in rows["validator_final_verdict"].input_payload["upstream"]


def test_a_failing_planner_fails_the_task_with_the_reason(task, inline_executor, scripted_runner):
    scripted_runner.replies[("plan", "planner")] = "no plan today"
    pipeline_start(task=task)
    inline_executor.drain()
    task.refresh_from_db()
    assert task.status == Task.Status.FAILED
    assert "no graph_manifest" in task.outcome["error"]
    assert WorkGraphRun.objects.get(task=task).status == "planning_failed"


def _fenced(manifest: dict) -> str:
    return "```json\n" + json.dumps(manifest) + "\n```"


@pytest.fixture
def three_stage_script(scripted_runner):
    skill = factories.SkillFactory(skill_id="csv-export")
    scripted_runner.replies.update(
        {
            ("plan", "planner"): _fenced({"nodes": [{"node_id": "prd", "artifact_type": "prd"}]}),
            ("plan", "coder"): _fenced({"nodes": [
                {"node_id": "impl", "task_prompt": "Build.", "depends_on": ["prd"], "skill_ref": skill.skill_id},
            ]}),
            ("plan", "validator"): _fenced({"nodes": [
                {"node_id": "check", "task_prompt": "Check.", "depends_on": ["prd"]},
                {"node_id": "verdict", "task_prompt": "Decide.", "depends_on": ["impl", "check"],
                 "node_type": "final_verdict", "judgment": {"kind": "mechanical", "check_ref": "verdict_says_pass"},
                 "on_fail": {"action": "dynamic_loop_back", "max_attempts": 2}},
            ]}),
        }
    )
    return scripted_runner


def test_a_coder_root_cause_loops_back_to_the_coder_stage(task, inline_executor, three_stage_script):
    verdict = "VERDICT: fail\nROOT_CAUSE: coder\nThe export drops the header."
    three_stage_script.replies[("node", "verdict", 1)] = verdict
    three_stage_script.replies[("node", "verdict", 2)] = "VERDICT: pass"
    pipeline_start(task=task)
    inline_executor.drain()
    task.refresh_from_db()
    run = WorkGraphRun.objects.get(task=task)
    assert task.status == "succeeded"
    impl = list(run.executions.filter(node_id="impl").values_list("attempt", "cause"))
    assert impl == [(1, "initial"), (2, "dynamic_loop_back")]
    assert task.outcome["verdict"] == "PASS" and "root_cause" not in task.outcome
    assert run.executions.filter(node_id="prd").count() == 1
    assert run.executions.filter(node_id="check").count() == 1
    assert "The export drops the header." in run.executions.get(node_id="impl", attempt=2).input_payload["prompt"]


@pytest.mark.parametrize(
    "verdict",
    [
        "VERDICT: FAIL\nROOT_CAUSE: planning — the PRD never asks for a header row",
        'VERDICT: FAIL\n```json\n{"root_cause_category": "planning", "root_cause_detail": "no header row"}\n```',
    ],
)
def test_a_planning_root_cause_loops_back_to_the_planner_stage(task, inline_executor, three_stage_script, verdict):
    three_stage_script.replies[("node", "verdict", 1)] = verdict
    three_stage_script.replies[("node", "verdict", 2)] = "VERDICT: pass"
    pipeline_start(task=task)
    inline_executor.drain()
    task.refresh_from_db()
    run = WorkGraphRun.objects.get(task=task)
    assert task.status == "succeeded"
    reruns = dict(run.executions.filter(attempt=2).values_list("node_id", "cause"))
    assert reruns == {"prd": "dynamic_loop_back", "impl": "dynamic_loop_back", "check": "dynamic_loop_back",
                      "verdict": "dynamic_loop_back"}
    assert "header row" in run.executions.get(node_id="prd", attempt=2).input_payload["prompt"]


def test_a_skill_defect_flags_the_skill_and_a_final_fail_fails_the_task(task, inline_executor, three_stage_script):
    three_stage_script.replies[("node", "verdict")] = "VERDICT: fail\nROOT_CAUSE: skill_defect — CSV is forbidden"
    pipeline_start(task=task)
    inline_executor.drain()
    task.refresh_from_db()
    assert task.status == "failed"
    assert task.outcome["verdict"] == "FAIL"
    assert task.outcome["root_cause"] == {"category": "skill_defect", "detail": "CSV is forbidden"}
    assert WorkGraphRun.objects.get(task=task).executions.filter(node_id="verdict").count() == 2
    skill = Skill.objects.get(skill_id="csv-export")
    assert skill.defect_reported_at is not None


def test_the_run_pipeline_command_reports_the_verdict(task, inline_executor, capsys, monkeypatch):
    # The command waits by polling; with the inline executor the work happens while it waits.
    monkeypatch.setattr("graphs.engine.finish.time.sleep", lambda _seconds: inline_executor.drain())
    call_command("run_pipeline", str(task.pk), "--timeout", "60")
    out = capsys.readouterr().out
    assert f"task {task.pk}: succeeded" in out
    assert "verdict: PASS" in out


def test_the_run_pipeline_command_rejects_an_unknown_task(db):
    with pytest.raises(CommandError, match="no task nope"):
        call_command("run_pipeline", "nope")


def test_a_duplicate_stage_step_does_nothing(task, inline_executor, three_stage_script):
    three_stage_script.replies[("node", "verdict")] = "VERDICT: pass"
    pipeline_start(task=task)
    inline_executor.drain(max_jobs=2)  # the planner's planning call and its one node
    run = WorkGraphRun.objects.get(task=task)
    assert run.stage == "planner" and inline_executor.pending() == 1  # the step to the coder stage
    job_run("pipeline_step", f"{run.run_id}:planner")
    job_run("pipeline_step", f"{run.run_id}:planner")
    run.refresh_from_db()
    assert run.stage == "coder"
    assert run.executions.filter(node_id__startswith="__planning__:").count() == 1
    inline_executor.drain()
    task.refresh_from_db()
    assert task.status == "succeeded"
    assert run.executions.filter(node_id="__planning__:validator").count() == 1
