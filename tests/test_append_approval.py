"""In a project that requires plan approval every append that adds nodes waits for a reviewer, as the
first plan does: its nodes get no attempt until approved, a rejection ends the run rejected with the
reviewer's words, and the pages and the API say which stage waits."""

from __future__ import annotations

import html
import json
import re

import pytest

from graphs.engine import pipeline_start, run_cancel, run_start
from graphs.engine.review import run_plan_approve, run_plan_reject
from graphs.errors import InvalidTransitionError
from graphs.models import AppendReview, Task, WorkGraphRun
from graphs.planning.planner import plan_work_graph
from tests import factories
from tests.clients import signed_in
from tests.run_builders import latest, node, planned_run

pytestmark = pytest.mark.django_db

PLANNER = {"nodes": [{"node_id": "prd", "artifact_type": "prd"}]}
CODER = {"nodes": [{"node_id": "impl", "task_prompt": "Build the export.", "depends_on": ["prd"]}]}
VALIDATOR = {"nodes": [
    {"node_id": "verdict", "task_prompt": "Decide.", "depends_on": ["impl"], "node_type": "final_verdict",
     "judgment": {"kind": "mechanical", "check_ref": "verdict_says_pass"}},
]}


def fenced(payload: dict) -> str:
    return "The plan:\n```json\n" + json.dumps(payload) + "\n```\n"


@pytest.fixture
def stages(scripted_runner):
    scripted_runner.replies.update({
        ("plan", "planner"): fenced(PLANNER), ("plan", "coder"): fenced(CODER),
        ("plan", "validator"): fenced(VALIDATOR), ("node", "verdict"): "VERDICT: pass",
    })
    return scripted_runner


def run_of(task: Task) -> WorkGraphRun:
    return WorkGraphRun.objects.get(task=task)


def at_the_coders_append(task: Task, bob, inline_executor) -> WorkGraphRun:
    """Start the pipeline, approve its plan, and let the planner's nodes run until the coder has appended."""
    pipeline_start(task=task)
    inline_executor.drain()
    run_plan_approve(run=run_of(task), reviewer=bob, comment="the plan is fine")
    inline_executor.drain()
    return run_of(task)


def test_the_coders_append_waits_for_a_reviewer_and_none_of_its_nodes_runs(reviewed, task, stages, bob,
                                                                          inline_executor):
    run = at_the_coders_append(task, bob, inline_executor)
    task.refresh_from_db()

    assert (run.status, run.stage, task.status) == ("awaiting_approval", "coder", "awaiting_approval")
    assert "impl" in [spec["node_id"] for spec in run.graph_manifest["nodes"]]
    assert not run.executions.filter(node_id="impl").exists()
    assert ("impl", 1) not in stages.node_calls()
    review = AppendReview.objects.get(run=run)
    assert (review.status, review.new_node_ids, review.planning_execution.node_id) == (
        "pending", ["impl"], "__planning__:coder")


def test_approving_each_append_runs_its_nodes_and_the_pipeline_goes_on(reviewed, task, stages, bob, inline_executor):
    run = at_the_coders_append(task, bob, inline_executor)

    run_plan_approve(run=run, reviewer=bob, comment="the coder may go")
    inline_executor.drain()
    run = run_of(task)
    assert latest(run)["impl"].status == "succeeded"
    assert (run.status, run.stage) == ("awaiting_approval", "validator")
    assert not run.executions.filter(node_id="verdict").exists()

    run_plan_approve(run=run, reviewer=bob)
    inline_executor.drain()
    run = run_of(task)
    assert run.status == "succeeded"
    assert latest(run)["verdict"].status == "succeeded"
    decisions = AppendReview.objects.filter(run=run).values_list(
        "planning_execution__subagent_type", "status", "reviewed_by__username", "review_comment")
    assert list(decisions) == [("coder", "approved", "bob", "the coder may go"), ("validator", "approved", "bob", "")]
    # The plan's own decision is kept as it was taken.
    assert (run.review_decision, run.review_comment) == ("approved", "the plan is fine")


def test_a_rejected_coders_append_ends_the_run_rejected_with_the_reviewers_words(reviewed, task, stages, bob,
                                                                        inline_executor):
    run = at_the_coders_append(task, bob, inline_executor)

    run_plan_reject(run=run, reviewer=bob, comment="impl must not touch the billing code")
    inline_executor.drain()
    run = run_of(task)
    task.refresh_from_db()

    assert (run.status, run.error_code) == ("rejected", "append_rejected")
    assert run.error == "the coder's append rejected by bob: impl must not touch the billing code"
    assert (task.status, task.outcome["error"]) == ("rejected", run.error)
    assert not run.executions.filter(node_id="impl").exists()
    assert AppendReview.objects.get(run=run).status == "rejected"
    # A fork would start every node of the manifest, the rejected ones too.
    assert not run.is_forkable()


def test_the_validators_append_waits_and_a_rejection_ends_the_run_rejected(
    reviewed, task, stages, bob, inline_executor
):
    run = at_the_coders_append(task, bob, inline_executor)
    run_plan_approve(run=run, reviewer=bob)
    inline_executor.drain()
    run = run_of(task)
    assert (run.status, run.stage) == ("awaiting_approval", "validator")
    assert ("verdict", 1) not in stages.node_calls()

    run_plan_reject(run=run, reviewer=bob, comment="the verdict needs a real test")
    inline_executor.drain()
    run = run_of(task)

    assert (run.status, run.error_code) == ("rejected", "append_rejected")
    assert run.error == "the validator's append rejected by bob: the verdict needs a real test"
    assert not run.executions.filter(node_id="verdict").exists()


def test_a_project_without_approval_appends_and_runs_as_before(task, stages, inline_executor):
    pipeline_start(task=task)
    inline_executor.drain()
    run = run_of(task)

    assert run.status == "succeeded"
    assert {node_id: row.status for node_id, row in latest(run).items()} == {
        "prd": "succeeded", "impl": "succeeded", "verdict": "succeeded"}
    assert not AppendReview.objects.exists()


def test_a_gap_driven_round_waits_for_a_reviewer(reviewed, alice, bob, scripted_runner, inline_executor):
    task = factories.TaskFactory(project=reviewed, created_by=alice, planning_mode="gap_driven")
    rounds = {0: (["collect"], True), 1: (["report"], True), 2: ([], False)}

    def answer(call) -> str:
        ids, has_gap = rounds[len(call.existing_node_ids)]
        tasks = [{"metadata": {"task_id": task_id, "title": task_id, "instruction": "Do it."}} for task_id in ids]
        return fenced({"tasks": tasks, "has_gap": has_gap, "gap_detail": "not done" if has_gap else ""})

    scripted_runner.replies[("plan", "planner")] = answer
    pipeline_start(task=task)
    inline_executor.drain()
    run_plan_approve(run=run_of(task), reviewer=bob)
    inline_executor.drain()
    run = run_of(task)
    assert (run.status, run.stage) == ("awaiting_approval", "gap:2")
    assert not run.executions.filter(node_id="report").exists()
    assert signed_in(bob).get(f"/api/runs/{run.pk}").json()["awaiting_approval_of"]["label"] == (
        "the planner's gap round 2")

    run_plan_approve(run=run, reviewer=bob)
    inline_executor.drain()
    run = run_of(task)
    assert run.status == "succeeded"
    assert latest(run)["report"].status == "succeeded"


@pytest.fixture
def coder_append(reviewed, commands_allowed, task, scripted_runner) -> WorkGraphRun:
    """A running run of one node, to which the coder appended an agent node, a node judged by a command
    and a command node, in that manifest order."""
    run = planned_run(task, {"nodes": [node("spec")], "edges": []}, status="running")
    factories.ExecutionFactory(run=run, node_id="spec", subagent_type="planner", status="succeeded")
    scripted_runner.replies[("plan", "coder")] = fenced({"nodes": [
        node("impl", "spec"),
        node("docs", "spec", judgment={"kind": "command", "command": ["python3", "check_docs.py"]}),
        {"node_id": "lint", "depends_on": ["impl"], "command": ["ruff", "check", "<b>src</b>"], "timeout_seconds": 60},
    ]})
    plan_work_graph("coder", task, task.goal_text, append_to_run_id=run.run_id)
    return run_of(task)


def test_the_planning_page_shows_what_the_append_adds_command_nodes_first_with_the_review_controls(
    coder_append, bob
):
    page = signed_in(bob).get(f"/runs/{coder_append.pk}/planning/").content.decode()
    text = html.unescape(page)

    assert "Waiting for approval: the coder's append." in text
    added = page.split('class="card append-review"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'<tr data-node-id="([^"]+)">', added) == ["lint", "docs", "impl"]
    assert "<code>ruff check &#x27;&lt;b&gt;src&lt;/b&gt;&#x27;</code> · 60 s" in added
    assert "judged by <code>python3 check_docs.py</code>" in added
    assert "Review the coder's append" in text
    assert page.index('class="card append-review"') < page.index('data-action="approve"') < page.index(
        'data-action="reject"')
    assert "Waits for a reviewer: its nodes do not run until approved." in page


def test_the_task_page_the_run_page_and_the_api_say_which_stage_waits(coder_append, alice, bob, task):
    client = signed_in(alice)
    for url in (f"/tasks/{task.pk}/", f"/runs/{coder_append.pk}/"):
        page = html.unescape(client.get(url).content.decode())
        assert 'data-waiting-for="append">Waiting for approval: the coder\'s append.' in page, url
    planning = coder_append.executions.get(node_id="__planning__:coder")
    detail = client.get(f"/api/runs/{coder_append.pk}").json()
    assert detail["awaiting_approval_of"] == {"stage": "append", "label": "the coder's append",
                                              "planning_node_exec_ids": [str(planning.pk)]}
    assert [(review["org_node"], review["status"], review["new_node_ids"]) for review in detail["append_reviews"]] == [
        ("coder", "pending", ["impl", "docs", "lint"])]

    approved = signed_in(bob).post(f"/api/runs/{coder_append.pk}/approve", data="{}",
                                   content_type="application/json").json()

    assert (approved["status"], approved["awaiting_approval_of"]) == ("running", None)
    assert (approved["append_reviews"][0]["status"], approved["append_reviews"][0]["reviewed_by"]) == (
        "approved", "bob")


def test_the_appends_planning_call_keeps_the_reviewers_decision(coder_append, bob):
    run_plan_approve(run=coder_append, reviewer=bob, comment="lint is harmless")
    page = html.unescape(signed_in(bob).get(f"/runs/{coder_append.pk}/planning/").content.decode())

    assert "Append approved by bob: “lint is harmless”" in page
    assert 'class="card append-review"' not in page and "Waiting for approval" not in page


def test_a_plan_waiting_for_its_reviewer_is_named_the_plan(reviewed, alice, task):
    run = planned_run(task, {"nodes": [node("spec")], "edges": []}, status="awaiting_approval")

    assert signed_in(alice).get(f"/api/runs/{run.pk}").json()["awaiting_approval_of"] == {
        "stage": "plan", "label": "the plan", "planning_node_exec_ids": []}
    assert "Waiting for approval: the plan." in signed_in(alice).get(f"/tasks/{task.pk}/").content.decode()


def test_a_reviewer_rejecting_on_the_page_ends_the_run_rejected_with_their_words(coder_append, bob):
    response = signed_in(bob).post(f"/runs/{coder_append.pk}/reject/", {"comment": "no linting of src"}, follow=True)
    coder_append.refresh_from_db()

    assert "Rejected the coder&#x27;s append: the run ends rejected." in response.content.decode()
    assert (coder_append.status, coder_append.error) == (
        "rejected", "the coder's append rejected by bob: no linting of src")
    assert not coder_append.executions.filter(node_id__in=["impl", "docs", "lint"]).exists()


def test_an_append_to_a_run_not_started_yet_leaves_it_ready_once_approved(reviewed, task, scripted_runner, bob,
                                                                          inline_executor):
    run = planned_run(task, {"nodes": [node("spec")], "edges": []}, status="ready")
    scripted_runner.replies[("plan", "coder")] = fenced({"nodes": [node("impl", "spec")]})
    plan_work_graph("coder", task, task.goal_text, append_to_run_id=run.run_id)
    run.refresh_from_db()
    assert run.status == "awaiting_approval"
    with pytest.raises(InvalidTransitionError):
        run_start(run=run)

    run = run_plan_approve(run=run, reviewer=bob)
    assert (run.status, run.executions.exclude(node_id__startswith="__planning__").count()) == ("ready", 0)
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()
    assert run.status == "succeeded"
    assert sorted(latest(run)) == ["impl", "spec"]


def test_an_append_while_the_plan_itself_waits_is_covered_by_the_plans_approval(reviewed, task, scripted_runner,
                                                                                bob):
    run = planned_run(task, {"nodes": [node("spec")], "edges": []}, status="awaiting_approval")
    scripted_runner.replies[("plan", "coder")] = fenced({"nodes": [node("impl", "spec")]})
    plan_work_graph("coder", task, task.goal_text, append_to_run_id=run.run_id)

    assert not AppendReview.objects.exists()
    run = run_plan_approve(run=run, reviewer=bob)
    assert (run.status, run.review_decision) == ("ready", "approved")


def test_an_append_of_a_run_cancelled_while_it_waited_can_no_longer_be_approved(coder_append, bob):
    run_cancel(run=coder_append)
    coder_append.refresh_from_db()
    assert coder_append.status == "cancelled"

    with pytest.raises(InvalidTransitionError):
        run_plan_approve(run=coder_append, reviewer=bob)
    assert not coder_append.executions.filter(node_id="impl").exists()
