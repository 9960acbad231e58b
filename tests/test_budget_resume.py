"""A run its budget stopped, resumed with a higher budget: only a lead may, the budget must be above
what the run spent, the run goes on with the nodes the stop ended and finishes; a refusal changes
nothing. Through the domain function, the inbox's form and the API."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from graphs.engine import run_start
from graphs.engine.budget_resume import BudgetResumeRefused, run_budget_raise_resume
from graphs.models import WorkGraphRun, WorkNodeExecution
from graphs.projects.roles import ACTIONS
from tests import factories
from tests.clients import signed_in
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("sandbox_writable")]

# What each call of the fake CLI's fixtures reports it cost.
CALL_COST = Decimal("0.2113")


@pytest.fixture
def stopped(task, claude_cli, inline_executor) -> WorkGraphRun:
    """A chain a → b → c whose budget the calls of a and b spend: c never ran."""
    claude_cli("plan_prose_fenced.json")
    nodes = [node("a"), node("b", "a"), node("c", "b")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    WorkGraphRun.objects.filter(pk=run.pk).update(max_cost_usd=Decimal("0.4"))
    run.refresh_from_db()
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()
    assert (run.status, run.error_code) == ("failed", "budget_exceeded")
    return run


def snapshot(run: WorkGraphRun) -> tuple:
    run.refresh_from_db()
    rows = WorkNodeExecution.objects.filter(run=run).order_by("node_id", "attempt").values_list("node_id", "status")
    return run.status, run.error_code, run.max_cost_usd, run.cancel_requested_at, list(rows)


def test_a_lead_raises_the_budget_and_the_run_finishes_from_where_it_stopped(stopped, alice, inline_executor):
    resumed = run_budget_raise_resume(run_id=stopped.pk, user=alice, max_cost_usd=Decimal("2"))
    assert (resumed.status, resumed.max_cost_usd, resumed.error_code) == ("running", Decimal("2"), "")
    inline_executor.drain()

    stopped.refresh_from_db()
    rows = latest(stopped)
    assert (stopped.status, stopped.error, stopped.finished_at is not None) == ("succeeded", "", True)
    # a and b ran once; c, cancelled by the stop, ran in a second attempt.
    assert [(rows[n].attempt, rows[n].status) for n in "abc"] == [(1, "succeeded"), (1, "succeeded"), (2, "succeeded")]
    assert stopped.task.__class__.objects.get(pk=stopped.task_id).status == "succeeded"


@pytest.mark.parametrize("role", ["viewer", "reviewer"])
def test_only_a_lead_may_and_a_refusal_changes_nothing(stopped, role):
    before = snapshot(stopped)
    other = factories.member(stopped.task.project, f"someone-{role}", role=role)

    with pytest.raises(BudgetResumeRefused) as refused:
        run_budget_raise_resume(run_id=stopped.pk, user=other, max_cost_usd=Decimal("5"))

    assert refused.value.code == "not_lead"
    assert snapshot(stopped) == before


def test_who_may_raise_a_budget_is_the_role_table_s_word(stopped, monkeypatch):
    reviewer = factories.member(stopped.task.project, "someone-reviewing", role="reviewer")
    monkeypatch.setitem(ACTIONS, "raise_budget", frozenset({"lead", "reviewer"}))

    resumed = run_budget_raise_resume(run_id=stopped.pk, user=reviewer, max_cost_usd=Decimal("5"))

    assert resumed.status == "running"


@pytest.mark.parametrize("budget", ["0.3", str(2 * CALL_COST)])
def test_the_new_budget_must_be_above_what_the_run_spent(stopped, alice, budget):
    before = snapshot(stopped)

    with pytest.raises(BudgetResumeRefused, match=r"above what the run spent \(\$0\.4226\)") as refused:
        run_budget_raise_resume(run_id=stopped.pk, user=alice, max_cost_usd=Decimal(budget))

    assert refused.value.code == "budget_too_low"
    assert snapshot(stopped) == before


def test_a_run_not_stopped_by_its_budget_is_refused(task, alice):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="failed")

    with pytest.raises(BudgetResumeRefused) as refused:
        run_budget_raise_resume(run_id=run.pk, user=alice, max_cost_usd=Decimal("5"))

    assert refused.value.code == "not_budget_stopped"


def test_the_inbox_form_resumes_the_run_and_says_so(stopped, alice, inline_executor):
    response = signed_in(alice).post(f"/runs/{stopped.pk}/budget/", {"max_cost_usd": "1.5", "next": "/inbox/"},
                                     follow=True)

    assert response.redirect_chain[-1][0] == "/inbox/"
    assert "Budget raised to $1.5000: the run goes on." in response.content.decode()
    inline_executor.drain()
    stopped.refresh_from_db()
    assert stopped.status == "succeeded"


def test_the_form_names_a_budget_too_low_and_changes_nothing(stopped, alice):
    before = snapshot(stopped)

    response = signed_in(alice).post(f"/runs/{stopped.pk}/budget/", {"max_cost_usd": "0.1"}, follow=True)

    assert "Refused: the new budget ($0.1000) must be above what the run spent ($0.4226)" in response.content.decode()
    assert snapshot(stopped) == before


def test_the_api_resumes_for_a_lead_and_refuses_others_with_a_code(stopped, alice, bob, inline_executor):
    url = f"/api/runs/{stopped.pk}/budget"
    body = json.dumps({"max_cost_usd": "3"})

    refused = signed_in(bob).post(url, data=body, content_type="application/json")
    too_low = signed_in(alice).post(url, data=json.dumps({"max_cost_usd": "0.2"}), content_type="application/json")
    resumed = signed_in(alice).post(url, data=body, content_type="application/json")

    assert (refused.status_code, refused.json()["code"]) == (403, "forbidden")
    assert (too_low.status_code, too_low.json()["code"]) == (409, "budget_too_low")
    assert resumed.status_code == 200
    assert (resumed.json()["status"], resumed.json()["max_cost_usd"]) == ("running", "3.0000")


def test_the_run_graph_offers_the_raise_to_its_leads_only(stopped, alice, bob):
    url = f"/runs/{stopped.pk}/"

    lead_page = signed_in(alice).get(url).content.decode()
    reviewer_page = signed_in(bob).get(url).content.decode()

    assert f'action="/runs/{stopped.pk}/budget/"' in lead_page and "Raise and resume" in lead_page
    assert "Raise and resume" not in reviewer_page
