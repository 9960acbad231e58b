"""Any org node plans a task from scratch, through the one planning service, on the page, in the API and in
``manage.py plan``.

The seed's contract: ``plan_work_graph(org_node, goal, append_to_run_id=None)`` "Creates one
`work_graph_run` row" for whichever org node plans, and "Every other org_node gets
`_generic_prompt_template(org_node)`" — its own catalog and prompt. A coding task needs no documents
first, so a coder (or a validator) plans it alone, under the project's budget, one run under way per task.
"""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from graphs.engine import plan_fresh
from graphs.engine.recovery import executions_reap
from graphs.executors import InlineExecutor, executor_set
from graphs.models import PLANNING_NODE_ID, WorkGraphRun
from tests.clients import signed_in

pytestmark = pytest.mark.django_db

CODER_PLAN = json.dumps({"nodes": [{"node_id": "impl", "node_type": "impl", "task_prompt": "Change the code."}]})


def _coder_answers(scripted_runner) -> list[str]:
    """Script the coder's planning answer; return the prompts it was asked with."""
    prompts: list[str] = []

    def answer(call) -> str:
        prompts.append(call.prompt)
        return CODER_PLAN

    scripted_runner.replies[("plan", "coder")] = answer
    return prompts


def test_a_coder_plans_a_task_from_scratch_with_its_own_prompt_and_catalog(task, scripted_runner, inline_executor):
    prompts = _coder_answers(scripted_runner)

    run = plan_fresh(task=task, org_node="coder")
    inline_executor.drain()

    run.refresh_from_db()
    assert run.status == WorkGraphRun.Status.READY
    assert [node["node_id"] for node in run.graph_manifest["nodes"]] == ["impl"]
    planning = run.executions.get(node_id=PLANNING_NODE_ID)
    assert planning.subagent_type == "coder"
    assert "You are the `coder` agent. Plan a work graph for the task below" in prompts[0]
    assert "integration_check" in prompts[0]  # the coder's catalog, not the planner's documents
    assert ("plan", "planner", 1) not in scripted_runner.calls


def test_the_command_plans_as_the_org_node_it_names(task, scripted_runner, capsys):
    _coder_answers(scripted_runner)

    call_command("plan", str(task.pk), "--org-node", "coder")

    run = WorkGraphRun.objects.get(task=task)
    planning = run.executions.get(node_id=PLANNING_NODE_ID)
    assert planning.subagent_type == "coder"
    out = capsys.readouterr().out
    assert f"run: {run.run_id} (ready)" in out
    assert "new nodes: impl" in out
    assert f"planning execution: {planning.pk}" in out


def test_the_command_refuses_a_coders_plan_while_another_run_is_under_way(task, scripted_runner, inline_executor):
    under_way = plan_fresh(task=task)

    with pytest.raises(CommandError, match=f"refused: task {task.pk} already has run {under_way.run_id} under way"):
        call_command("plan", str(task.pk), "--org-node", "coder")

    assert scripted_runner.calls == []


def test_the_api_plans_as_the_org_node_in_the_body_under_its_budget(alice, task, scripted_runner, inline_executor):
    _coder_answers(scripted_runner)

    response = signed_in(alice).post(f"/api/tasks/{task.pk}/plan", content_type="application/json",
                                     data=json.dumps({"org_node": "validator", "max_cost_usd": "2.5"}))
    inline_executor.drain()

    assert response.status_code == 202
    assert response.json()["detail"] == "the validator is planning the task"
    run = WorkGraphRun.objects.get(task=task)
    assert run.max_cost_usd == Decimal("2.5")
    assert run.executions.get(node_id=PLANNING_NODE_ID).subagent_type == "validator"


def test_the_api_plans_with_the_planner_when_the_body_names_no_org_node(alice, task, inline_executor):
    response = signed_in(alice).post(f"/api/tasks/{task.pk}/plan", content_type="application/json", data="{}")

    assert response.status_code == 202
    assert response.json()["detail"] == "the planner is planning the task"
    assert WorkGraphRun.objects.get(task=task).stage == "planner"


def test_the_api_refuses_an_org_node_that_is_no_name(alice, task, inline_executor):
    response = signed_in(alice).post(f"/api/tasks/{task.pk}/plan", content_type="application/json",
                                     data=json.dumps({"org_node": "coder:x"}))

    assert response.status_code == 400
    assert not WorkGraphRun.objects.filter(task=task).exists()


def test_the_pages_plan_form_offers_each_org_node_and_plans_as_the_one_chosen(alice, task, scripted_runner,
                                                                                 inline_executor):
    _coder_answers(scripted_runner)
    client = signed_in(alice)

    page = client.get(reverse("task_detail", args=[task.pk])).content.decode()
    answered = client.post(reverse("task_plan", args=[task.pk]), {"org_node": "coder"}, follow=True)
    inline_executor.drain()

    assert 'id="plan-org-node"' in page
    for org_node in ("planner", "coder", "validator"):
        assert f'<option value="{org_node}"' in page
    assert "The coder is planning this task." in answered.content.decode()
    assert WorkGraphRun.objects.get(task=task).executions.get(node_id=PLANNING_NODE_ID).subagent_type == "coder"


def test_the_page_refuses_an_org_node_it_does_not_offer(alice, task, inline_executor):
    answered = signed_in(alice).post(reverse("task_plan", args=[task.pk]), {"org_node": "auditor"}, follow=True)

    assert "Choose who plans the task: planner, coder, validator." in answered.content.decode()
    assert not WorkGraphRun.objects.filter(task=task).exists()


def test_the_reaper_asks_the_same_org_node_for_a_plan_whose_job_was_lost(task, scripted_runner, inline_executor):
    _coder_answers(scripted_runner)
    previous = executor_set(InlineExecutor())  # an executor whose jobs are never run: the plan's job is lost
    try:
        run = plan_fresh(task=task, org_node="coder")
    finally:
        executor_set(previous)

    executions_reap(stale_after=timedelta(0))
    inline_executor.drain()

    run.refresh_from_db()
    assert run.status == WorkGraphRun.Status.READY
    assert run.executions.get(node_id=PLANNING_NODE_ID).subagent_type == "coder"
