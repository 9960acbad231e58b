"""The inbox ("Waiting on you"): plans and appends to review for reviewers and leads, external nodes
waiting for a report and runs their budget stopped for leads; oldest first, each with what it holds up
and since when; a viewer has nothing to act on; its list and the navigation's count cost a fixed number
of queries; the page, its count in the navigation and ``GET /api/inbox``."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from graphs.models import PLANNING_NODE_ID, AppendReview, WorkGraphRun, WorkNodeExecution
from graphs.reads.inbox import inbox_count, inbox_items
from tests import factories
from tests.clients import signed_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db


def ago(minutes: int):
    return timezone.now() - timedelta(minutes=minutes)


def plan_waiting(task, *, minutes: int, nodes=("a", "b", "c")) -> WorkGraphRun:
    run = planned_run(task, {"nodes": [node(n) for n in nodes], "edges": []}, status="awaiting_approval")
    WorkNodeExecution.objects.filter(run=run, node_id=PLANNING_NODE_ID).update(finished_at=ago(minutes))
    return run


def append_waiting(task, *, minutes: int) -> WorkGraphRun:
    run = planned_run(task, {"nodes": [node("a"), node("fix", "a"), node("check", "fix")], "edges": []},
                      status="awaiting_approval")
    call = WorkNodeExecution.objects.create(run=run, node_id=f"{PLANNING_NODE_ID}-2", subagent_type="coder",
                                            attempt=1, cause="planning", status="succeeded")
    review = AppendReview.objects.create(run=run, planning_execution=call, new_node_ids=["fix", "check"],
                                         resume_status="running")
    AppendReview.objects.filter(pk=review.pk).update(created_at=ago(minutes))
    return run


def report_waiting(task, *, minutes: int) -> WorkNodeExecution:
    run = planned_run(task, {"nodes": [node("ask", executor="external"), node("use", "ask"), node("ship", "use")],
                             "edges": []}, status="running")
    return WorkNodeExecution.objects.create(run=run, node_id="ask", attempt=1, status="running", worker="external",
                                            started_at=ago(minutes), deadline_at=timezone.now() + timedelta(hours=1))


def change_waiting(task, *, minutes: int) -> WorkNodeExecution:
    """An attempt whose change waits for a reviewer, two nodes behind it."""
    run = planned_run(task, {"nodes": [node("build"), node("check", "build"), node("ship", "check")], "edges": []},
                      status="running")
    return WorkNodeExecution.objects.create(run=run, node_id="build", attempt=1, status="awaiting_review",
                                            finished_at=ago(minutes))


def budget_stopped(task, *, minutes: int) -> WorkGraphRun:
    """A run stopped by its budget, of a task of its own in ``task``'s project: its task's latest run."""
    task = factories.TaskFactory(project=task.project, created_by=task.created_by)
    run = planned_run(task, {"nodes": [node("a"), node("b", "a"), node("c", "b")], "edges": []}, status="failed")
    WorkGraphRun.objects.filter(pk=run.pk).update(error_code="budget_exceeded", max_cost_usd=Decimal("0.5"),
                                                  finished_at=ago(minutes))
    WorkNodeExecution.objects.create(run=run, node_id="a", attempt=1, status="succeeded", cost_usd=Decimal("0.6"))
    WorkNodeExecution.objects.create(run=run, node_id="b", attempt=1, status="cancelled")
    return run


@pytest.fixture
def everything(task):
    """One item of each kind (two approvals), made in an order that is not their age."""
    return {
        "budget": budget_stopped(task, minutes=10),
        "plan": plan_waiting(task, minutes=40),
        "report": report_waiting(task, minutes=20),
        "append": append_waiting(task, minutes=30),
    }


def kinds(user) -> list[tuple[str, str]]:
    return [(item.kind, item.label) for item in inbox_items(user)]


def test_a_lead_sees_every_kind_oldest_first_with_what_it_holds_up(everything, alice):
    items = inbox_items(alice)

    assert [(item.kind, item.label, item.nodes_waiting) for item in items] == [
        ("approval", "the plan", 3),
        ("approval", "the coder's append", 2),
        ("external", "node ask's report", 3),
        ("budget", "the run's budget", 2),
    ]
    assert [item.run_id for item in items] == [everything[k].pk for k in ("plan", "append")] + [
        everything["report"].run_id, everything["budget"].pk]
    budget = items[-1]
    assert (budget.budget_usd, budget.spent_usd) == (Decimal("0.5000"), Decimal("0.6000"))
    assert abs((timezone.now() - items[0].since) - timedelta(minutes=40)) < timedelta(minutes=1)
    assert inbox_count(alice) == 4


def test_a_reviewer_sees_only_what_waits_for_a_review(everything, bob):
    assert kinds(bob) == [("approval", "the plan"), ("approval", "the coder's append")]
    assert inbox_count(bob) == 2


def test_a_viewer_and_an_outsider_have_nothing_to_act_on(everything, project, charlie):
    viewer = factories.member(project, "vera", role="viewer")

    assert inbox_items(viewer) == inbox_items(charlie) == []
    assert inbox_count(viewer) == inbox_count(charlie) == 0


def test_items_leave_once_dealt_with(everything, task, alice):
    WorkGraphRun.objects.filter(pk=everything["plan"].pk).update(status="ready")
    WorkNodeExecution.objects.filter(pk=everything["report"].pk).update(status="succeeded", worker="")
    # A newer run of its task answers the budget stop another way.
    factories.RunFactory(task=everything["budget"].task, status="planning")

    assert kinds(alice) == [("approval", "the coder's append")]
    assert inbox_count(alice) == 1


@pytest.mark.parametrize("each", [1, 10])
def test_the_list_and_the_count_cost_the_same_queries_however_many_items(
    task, alice, each, django_assert_max_num_queries
):
    for minutes in range(each):
        plan_waiting(task, minutes=minutes)
        append_waiting(task, minutes=minutes)
        report_waiting(task, minutes=minutes)
        budget_stopped(task, minutes=minutes)
        change_waiting(task, minutes=minutes)

    with django_assert_max_num_queries(6):
        assert len(inbox_items(alice)) == 5 * each
    with django_assert_max_num_queries(1):
        assert inbox_count(alice) == 5 * each


def test_the_page_lists_the_items_with_links_to_act_and_the_navigation_counts_them(everything, alice):
    page = signed_in(alice).get("/inbox/").content.decode()

    assert page.count('class="inbox-item"') == 4
    assert f'href="/runs/{everything["plan"].pk}/planning/"' in page
    assert f'href="/executions/{everything["report"].pk}/"' in page
    assert f'action="/runs/{everything["budget"].pk}/budget/"' in page
    assert 'id="inbox-count" data-live-region data-count="4" aria-label="4 waiting on you">4</span>' in page
    assert "3 nodes wait behind it" in page and "$0.6000 of a $0.5000 budget" in page


def test_how_long_an_item_has_waited_reads_in_seconds_under_a_minute(task, alice):
    run = plan_waiting(task, minutes=0)
    WorkNodeExecution.objects.filter(run=run, node_id=PLANNING_NODE_ID).update(
        finished_at=timezone.now() - timedelta(seconds=42))
    report_waiting(task, minutes=40)

    page = signed_in(alice).get("/inbox/").content.decode()

    assert re.search(r"Waiting for 4\d s, since", page)
    assert re.search(r"Waiting for 40 min \d\d s, since", page)
    assert "minutes" not in page


def test_an_empty_inbox_says_so_and_hides_the_count(project, alice):
    page = signed_in(alice).get("/inbox/").content.decode()

    assert "Nothing waits on you." in page
    assert 'id="inbox-count" data-live-region data-count="0" aria-label="0 waiting on you" hidden>' in page


def test_the_api_lists_the_items_oldest_first(everything, alice, bob):
    body = signed_in(alice).get("/api/inbox").json()

    assert body["count"] == 4
    first = body["items"][0]
    assert (first["kind"], first["label"], first["nodes_waiting"], first["project"]) == (
        "approval", "the plan", 3, everything["plan"].task.project.slug)
    assert first["url"] == f"/runs/{everything['plan'].pk}/planning/"
    assert first["waiting_for"].startswith("40")
    budget = body["items"][-1]
    assert (budget["kind"], budget["budget_usd"], budget["spent_usd"]) == ("budget", "0.5000", "0.6000")
    assert signed_in(bob).get("/api/inbox").json()["count"] == 2
