"""Gap-driven planning: the planner answers {tasks, has_gap, gap_detail} in rounds until the gap is
closed; every round is a planning node; a bad answer ends the run planning_failed, never a hang."""

from __future__ import annotations

import json

import pytest

from graphs.engine import pipeline_start
from graphs.models import PLANNING_NODE_ID, Task, WorkGraphRun
from tests import factories
from tests.clients import signed_in
from tests.run_builders import latest

pytestmark = pytest.mark.django_db


@pytest.fixture
def gap_task(project, alice) -> Task:
    return factories.TaskFactory(project=project, created_by=alice, planning_mode="gap_driven",
                                 acceptance_criteria=["The CSV opens in a spreadsheet", "Totals match"],
                                 acceptance_ids=["ac_csv", ""])


def spec(task_id: str, instruction: str = "Do it.", **metadata) -> dict:
    return {"metadata": {"task_id": task_id, "title": task_id, "instruction": instruction, **metadata},
            "context": {"background": "", "extend_props": {}},
            "goal": {"objective": instruction, "acceptances": [{"id": "ac1", "description": "done well"}]}}


def answer(tasks: list, has_gap: bool, gap_detail: str = "") -> str:
    return "My plan:\n```json\n" + json.dumps({"tasks": tasks, "has_gap": has_gap, "gap_detail": gap_detail}) + "\n```"


def planning_rows(run: WorkGraphRun):
    return list(run.executions.filter(node_id__startswith=PLANNING_NODE_ID).order_by("created_at"))


def finished(task: Task, inline_executor) -> WorkGraphRun:
    pipeline_start(task=task)
    inline_executor.drain()
    return WorkGraphRun.objects.get(task=task)


def test_the_offline_agent_closes_the_gap_in_two_rounds(gap_task, inline_executor, settings):
    settings.WORKGRAPH_AGENT = "offline"

    run = finished(gap_task, inline_executor)

    assert run.status == "succeeded", run.error
    first, second = planning_rows(run)
    assert (first.node_id, second.node_id) == ("__planning__", "__planning__:planner")
    assert first.output_payload["gap"] == {"round": 1, "has_gap": True, "gap_detail": "nothing has been done yet",
                                           "task_ids": ["gap_work", "gap_review"]}
    assert second.output_payload["gap"]["has_gap"] is False and second.output_payload["gap"]["task_ids"] == []
    assert {node_id: row.status for node_id, row in latest(run).items()} == {
        "gap_work": "succeeded", "gap_review": "succeeded"}
    # Each round is a planning node a reviewer can read: prompt, raw answer, what was extracted.
    assert second.input_payload["prompt"].startswith("[planning]")
    assert '"node_id": "gap_work"' in second.input_payload["prompt"] and '"status": "succeeded"' in (
        second.input_payload["prompt"])
    assert '"id": "ac_csv"' in first.input_payload["prompt"] and '"id": "ac2"' in first.input_payload["prompt"]
    assert "```json" in second.output_payload["raw_response"]
    assert second.output_payload["extracted_manifest"]["has_gap"] is False
    review = run.graph_manifest["nodes"][1]
    assert review["depends_on"] == ["gap_work"] and "[ac1]" in review["task_prompt"]


def test_a_first_answer_with_no_tasks_and_no_gap_succeeds_at_once(gap_task, inline_executor, scripted_runner):
    scripted_runner.replies[("plan", "planner")] = answer([], False, "already done")

    run = finished(gap_task, inline_executor)

    assert run.status == "succeeded", run.error
    assert run.graph_manifest["nodes"] == []
    assert [row.status for row in planning_rows(run)] == ["succeeded"]


def test_the_planner_sees_the_gaps_of_failed_attempts_in_the_next_round(gap_task, inline_executor,
                                                                        scripted_runner):
    judged = {"judgment": {"kind": "mechanical", "check_ref": "verdict_says_pass"},
              "on_fail": {"action": "retry_self", "max_attempts": 2}}
    scripted_runner.replies[("plan", "planner")] = lambda call: (
        answer([spec("draft", **judged)], True, "nothing yet") if not call.existing_node_ids
        else answer([], False, "done"))
    scripted_runner.replies[("node", "draft", 1)] = "VERDICT: FAIL too short"
    scripted_runner.replies[("node", "draft", 2)] = "VERDICT: PASS"

    run = finished(gap_task, inline_executor)

    assert run.status == "succeeded"
    assert [row.output_payload["gap"]["round"] for row in planning_rows(run)] == [1, 2]
    snapshot_prompt = planning_rows(run)[1].input_payload["prompt"]
    assert "the verdict is 'FAIL too short', not pass" in snapshot_prompt
    assert [row.status for row in run.executions.filter(node_id="draft").order_by("attempt")] == [
        "failed", "succeeded"]


def test_a_task_done_by_an_external_executor_waits_for_its_report(gap_task, inline_executor, scripted_runner):
    scripted_runner.replies[("plan", "planner")] = answer(
        [spec("interview", executor="external", deadline_seconds=600)], True, "no interviews yet")

    pipeline_start(task=gap_task)
    inline_executor.drain_due()

    run = WorkGraphRun.objects.get(task=gap_task)
    waiting = latest(run)["interview"]
    assert (run.status, waiting.status, waiting.worker) == ("running", "running", "external")
    assert scripted_runner.node_calls() == []


def test_rounds_are_bounded_and_a_gap_left_open_fails_the_run(gap_task, inline_executor, scripted_runner, settings):
    settings.WORKGRAPH_GAP_MAX_ROUNDS = 3
    scripted_runner.replies[("plan", "planner")] = lambda call: answer(
        [spec(f"step_{len(call.existing_node_ids)}")], True, "never enough")

    run = finished(gap_task, inline_executor)

    assert run.status == "failed"
    assert run.error == ("the gap is still open after 3 planning rounds (WORKGRAPH_GAP_MAX_ROUNDS): never enough")
    assert len(planning_rows(run)) == 3
    assert sorted(latest(run)) == ["step_0", "step_1", "step_2"]


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ("I think we are nearly there.", 'no {"tasks": [...], "has_gap": ..., "gap_detail": ...} JSON object'),
        (answer([spec("a")], "yes"), "has_gap must be true or false, not 'yes'"),
        (answer([], True, "stuck"), "has_gap is true but no task is planned to close it"),
        (answer([spec("a")], False), "has_gap is false but tasks are listed"),
        (json.dumps({"tasks": {"a": 1}, "has_gap": True}), "tasks must be a list of TaskSpec objects"),
        (answer([{"metadata": {"instruction": "x"}}], True), "tasks[0]: metadata.task_id must be a non-empty string"),
        (answer([spec("a", instruction="")], True), "tasks[0]: metadata.instruction must be a non-empty string"),
        (answer([spec("a"), spec("a")], True), "'a'"),
        (answer([spec("__sneaky")], True), "__sneaky"),
        (answer([spec("a", depends_on=["ghost"])], True), "unknown node 'ghost'"),
        (answer(["not a spec"], True), "tasks[0] must be a TaskSpec object"),
    ],
)
def test_a_malformed_first_answer_ends_the_run_planning_failed(gap_task, inline_executor, scripted_runner, reply,
                                                              error):
    scripted_runner.replies[("plan", "planner")] = reply

    run = finished(gap_task, inline_executor)

    assert run.status == "planning_failed"
    assert error in run.error
    (planning,) = planning_rows(run)
    assert planning.status == "failed"
    assert planning.output_payload["raw_response"] == reply
    assert planning.output_payload["repair_prompt"], "one repair request was made"
    assert any(error in line for line in planning.output_payload["validation_errors"])
    assert latest(run) == {}


def test_a_malformed_later_round_ends_the_run_planning_failed_and_keeps_the_done_work(gap_task, inline_executor,
                                                                                     scripted_runner):
    scripted_runner.replies[("plan", "planner")] = lambda call: (
        answer([spec("first")], True) if not call.existing_node_ids else answer([spec("first")], True, "again"))

    run = finished(gap_task, inline_executor)

    assert run.status == "planning_failed"
    assert run.error.startswith("gap round 2 planning failed: the planner's gap answer is not usable")
    assert "first" in run.error
    assert [row.status for row in planning_rows(run)] == ["succeeded", "failed"]
    assert latest(run)["first"].status == "succeeded"
    gap_task.refresh_from_db()
    assert gap_task.status == "failed"


def test_a_repair_request_can_mend_a_bad_answer(gap_task, inline_executor, scripted_runner):
    replies = iter([answer([], True, "stuck"), answer([], False, "done")])
    scripted_runner.replies[("plan", "planner")] = lambda call: next(replies)

    run = finished(gap_task, inline_executor)

    assert run.status == "succeeded"
    (planning,) = planning_rows(run)
    assert planning.output_payload["repair_response"] == answer([], False, "done")


def test_a_task_request_chooses_gap_driven_planning_and_a_bad_mode_is_a_400(alice, project, inline_executor,
                                                                           settings):
    settings.WORKGRAPH_AGENT = "offline"
    request = {
        "task_spec": {"metadata": {"title": "Report", "instruction": "Write the report."},
                      "goal": {"objective": "A report", "acceptances": [{"id": "ac_tone", "acceptance": "Plain"}]}},
        "source_type": "api", "execution_config": {"task_type": "dynamic", "planning_mode": "gap_driven"},
    }
    api = signed_in(alice)

    created = api.post("/api/v1/collaboration/tasks/execute", data=json.dumps(request),
                       content_type="application/json")
    inline_executor.drain()
    bad = api.post("/api/v1/collaboration/tasks/execute", content_type="application/json", data=json.dumps(
        {**request, "execution_config": {"task_type": "dynamic", "planning_mode": "improvise"}}))

    task = Task.objects.get(pk=created.json()["data"]["task_id"])
    assert (task.planning_mode, task.acceptance_ids, task.status) == ("gap_driven", ["ac_tone"], "succeeded")
    assert (bad.status_code, bad.json()["code"]) == (400, "validation_error")
    assert [field["field"] for field in bad.json()["fields"]] == ["execution_config.planning_mode"]
    assert Task.objects.count() == 1


def test_a_task_created_through_the_api_may_choose_gap_driven_planning(alice, project):
    body = {"project": project.slug, "title": "Report", "goal_text": "A report", "deliverables": ["report.md"],
            "acceptance_criteria": ["Plain words"], "planning_mode": "gap_driven"}

    created = signed_in(alice).post("/api/tasks", data=json.dumps(body), content_type="application/json")

    assert created.status_code == 201 and created.json()["planning_mode"] == "gap_driven"
    assert Task.objects.get(pk=created.json()["task_id"]).planning_mode == "gap_driven"


def test_the_planning_page_shows_each_rounds_answer_escaped(alice, gap_task, inline_executor, scripted_runner):
    scripted_runner.replies[("plan", "planner")] = lambda call: (
        answer([spec("first")], True, "<script>alert(1)</script> missing") if not call.existing_node_ids
        else answer([], False, "all <b>done</b>"))
    run = finished(gap_task, inline_executor)

    page = signed_in(alice).get(f"/runs/{run.run_id}/planning/").content.decode()

    assert "<script>alert(1)</script>" not in page and "<b>done</b>" not in page
    assert "Gap-driven round <strong>1</strong>" in page
    assert "a gap is left — &lt;script&gt;alert(1)&lt;/script&gt; missing" in page
    assert "the gap is closed — all &lt;b&gt;done&lt;/b&gt;" in page
